import BlueZ
import BusHarness
import DBus
import Foundation
import GATT
import Logging
import Synchronization
import Testing

/// Collects a peripheral's events for assertions.
final class PeripheralLog: Sendable {
    private let events = Mutex<[PeripheralEvent]>([])

    func append(_ event: PeripheralEvent) { events.withLock { $0.append(event) } }

    var all: [PeripheralEvent] { events.withLock { $0 } }

    func count(_ event: PeripheralEvent) -> Int { all.count { $0 == event } }

    /// Waits until `condition` holds over the events, or fails the test after `timeout`.
    func wait(
        _ what: String, timeout: Duration = HarnessDeadline.condition,
        sourceLocation: SourceLocation = #_sourceLocation,
        until condition: ([PeripheralEvent]) -> Bool
    ) async throws {
        do {
            try await eventually(what, timeout: timeout) { condition(all) }
        } catch {
            Issue.record("timed out waiting for \(what); events: \(all.suffix(8))", sourceLocation: sourceLocation)
            throw error
        }
    }
}

/// Runs `peripheral` while `body` runs, with its events logged; cancels it afterwards and
/// returns once `run()` has returned.
func withRunning(
    _ peripheral: HeartRatePeripheral, _ body: (PeripheralLog) async throws -> Void
) async throws {
    let log = PeripheralLog()
    let events = peripheral.events()
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { for await event in events { log.append(event) } }
        group.addTask { try await peripheral.run() }
        try await body(log)
        group.cancelAll()
        try await group.waitForAll()
    }
}

@Suite("Heart Rate peripheral over D-Bus: BlueZoo, and callers that are not bluetoothd", .serialized)
struct PeripheralTests {
    static let peripheralAddress = "00:00:00:00:00:0A"
    static let centralAddress = "00:00:00:00:00:0B"
    static let peripheralDevice = "/org/bluez/hci1/dev_00_00_00_00_00_0A"
    static let heartRateUUID = "0000180d-0000-1000-8000-00805f9b34fb"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"

    static var configuration: PeripheralConfiguration {
        // An untrusted name: the RTL override is dropped, the rest cut to fit.
        PeripheralConfiguration(adapter: "hci0", localName: "Polar\u{202E} H10 2A2B3C4D5E6F", energyControlPoint: true)
    }

    static let advertisedName = "Polar H10 2A2B3C4D"

    /// Measurements exercising every field: uint8/uint16, contact, energy, RR lists.
    static let measurements = [
        HeartRateMeasurement(heartRate: 72, sensorContact: .detected, rrIntervals: [RRInterval(raw: 849)]),
        HeartRateMeasurement(heartRate: 73, sensorContact: .notDetected),
        HeartRateMeasurement(heartRate: 300, energyExpended: 1234, rrIntervals: [RRInterval(raw: 200)]),
        HeartRateMeasurement(
            heartRate: 75, valueFormat: .uint16, sensorContact: .detected, energyExpended: 0,
            rrIntervals: [RRInterval(raw: 820), RRInterval(raw: 818), RRInterval(raw: 1)]),
        HeartRateMeasurement(heartRate: 0, sensorContact: .notSupported),
    ]

    @Test(
        "end to end on BlueZoo: advertised and discovered, read, notified byte-exact, control point, strangers refused, re-registered after a restart"
    )
    func endToEnd() async throws {
        try await withBlueZoo(adapters: [Self.peripheralAddress, Self.centralAddress]) { bed in
            let connection = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            let central = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            let peripheral = HeartRatePeripheral(
                connection: connection, configuration: Self.configuration, logger: testLogger)
            var restarted: Spawned?
            defer { restarted?.stop() }
            try await withRunning(peripheral) { log in
                try await log.wait("registration") { $0.contains(.registered(adapter: "hci0")) }
                try await log.wait("advertising") {
                    $0.contains(.advertising(on: true, reason: "registered with bluetoothd"))
                }
                let status = await peripheral.status
                #expect(status.registered && status.advertising && status.reason == nil)

                let device = try await discoverAdvertisement(
                    central, central: "hci1", peripheral: "hci0", device: Self.peripheralDevice)
                #expect(device["Name"]?.string == Self.advertisedName)
                #expect(device["UUIDs"]?.arrayElements?.compactMap(\.string) == [Self.heartRateUUID])
                #expect(device["Appearance"]?.integer == 0x0341)

                _ = try await callBlueZ(central, Self.peripheralDevice, "org.bluez.Device1", "Connect")
                var characteristics: [String: String] = [:]
                try await eventually("our characteristics on the central's side") {
                    characteristics = [:]
                    for (path, interfaces) in try await blueZObjects(central)
                    where path.hasPrefix(Self.peripheralDevice + "/") {
                        if let uuid = interfaces[Self.characteristicInterface]?["UUID"]?.string {
                            characteristics[String(uuid.prefix(8).suffix(4))] = path
                        }
                    }
                    return characteristics.count == 6
                }
                let measurement = try #require(characteristics["2a37"])
                let location = try #require(characteristics["2a38"])
                let controlPoint = try #require(characteristics["2a39"])

                // Reads, with offsets.
                func read(_ path: String, offset: UInt16? = nil) async throws -> [UInt8]? {
                    let options: [(String, DBusValue)] = offset.map { [("offset", .uint16($0))] } ?? []
                    return try await callBlueZ(
                        central, path, Self.characteristicInterface, "ReadValue", [.propertyMap(options)]
                    ).first?.bytes
                }
                #expect(try await read(location) == [1])
                #expect(try await read(location, offset: 1) == [])
                let pastTheEnd = await #expect(throws: DBusError.self) { _ = try await read(location, offset: 2) }
                #expect(pastTheEnd?.name == "org.bluez.Error.InvalidOffset")
                #expect(try await read(try #require(characteristics["2a29"])) == Array("hrbridge".utf8))
                #expect(try await read(try #require(characteristics["2a29"]), offset: 5) == Array("dge".utf8))
                #expect(try await read(try #require(characteristics["2a24"])) == Array("hrbridge peripheral".utf8))

                // Notifications: every measurement sent arrives once, byte-exact, in order.
                let recorder = ValueRecorder()
                let values = try await central.signals(
                    matching: MatchRule(
                        sender: "org.bluez", path: measurement, interface: "org.freedesktop.DBus.Properties",
                        member: "PropertiesChanged"))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await recorder.record(values) }
                    await peripheral.send(Self.measurements[0])
                    #expect(await peripheral.status.framesDropped == 1, "nobody subscribed yet")
                    _ = try await callBlueZ(central, measurement, Self.characteristicInterface, "StartNotify")
                    try await log.wait("the subscription") { $0.contains(.notifying(true)) }
                    #expect(await peripheral.status.notifying)
                    for frame in Self.measurements { await peripheral.send(frame) }
                    try await eventually("every notification") { recorder.all.count >= Self.measurements.count }
                    #expect(recorder.all == Self.measurements.map { $0.encoded() })
                    #expect(await peripheral.status.framesSent == Self.measurements.count)
                    _ = try await callBlueZ(central, measurement, Self.characteristicInterface, "StopNotify")
                    try await log.wait("the unsubscription") { $0.contains(.notifying(false)) }
                    group.cancelAll()
                }

                // The control point: 0x01 resets, anything else is refused.
                _ = try await callBlueZ(
                    central, controlPoint, Self.characteristicInterface, "WriteValue",
                    [.bytes([0x01]), .propertyMap([])])
                try await log.wait("the reset") { $0.contains(.energyResetRequested) }
                let refused = await #expect(throws: DBusError.self) {
                    _ = try await callBlueZ(
                        central, controlPoint, Self.characteristicInterface, "WriteValue",
                        [.bytes([0x02, 0xFF]), .propertyMap([])])
                }
                #expect(refused?.name == "org.bluez.Error.Failed")
                try await log.wait("the refused write") { $0.contains(.refusedWrite(bytes: [0x02, 0xFF])) }
                #expect(await peripheral.status.refusedWrites == 1)

                // The central is connected to hci0, unless it is one of ours.
                #expect(await peripheral.status.connectedCentrals == 1)
                await peripheral.setExcludedAddresses([Self.centralAddress.lowercased()])
                #expect(await peripheral.status.connectedCentrals == 0)

                // A connection that is not bluetoothd is refused, even while registered.
                let stranger = await #expect(throws: DBusError.self) {
                    _ = try await central.call(
                        destination: connection.uniqueName, path: Self.configuration.objectPath,
                        interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
                }
                #expect(stranger?.name == DBusError.accessDeniedName)
                #expect(await peripheral.status.refusedCalls == 1)

                // bluetoothd restarts: it forgets everything, so everything is registered again.
                bed.bluezoo.stop()
                try await log.wait("bluetoothd to be gone") {
                    $0.contains(.advertising(on: false, reason: "bluetoothd stopped"))
                }
                #expect(await peripheral.status.registered == false)
                restarted = try await Spawned.startPeer(
                    packageRoot.appendingPathComponent(".venv/bin/bluezoo").path,
                    ["--auto-enable", "--scan-interval", "1", "-a", Self.peripheralAddress, "-a", Self.centralAddress],
                    environment: ["DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address], label: "bluezoo again",
                    readyLine: { $0.contains("Adding adapter[1]") })
                try await log.wait("registration with the new bluetoothd") {
                    $0.count { $0 == .registered(adapter: "hci0") } == 2
                }
                let adapter = try #require(try await blueZObjects(central)["/org/bluez/hci0"])
                #expect(adapter["org.bluez.LEAdvertisingManager1"]?["ActiveInstances"]?.integer == 1)
                #expect(
                    adapter["org.bluez.Adapter1"]?["UUIDs"]?.arrayElements?.compactMap(\.string).contains(
                        Self.heartRateUUID) == true)
                #expect(await peripheral.status.advertising)
            }
            // Cancelled: it unregistered from the running bluetoothd.
            let adapter = try #require(try await blueZObjects(central)["/org/bluez/hci0"])
            #expect(adapter["org.bluez.LEAdvertisingManager1"]?["ActiveInstances"]?.integer == 0)
            #expect(adapter["org.bluez.Adapter1"]?["UUIDs"]?.arrayElements?.isEmpty == true)
            await central.close()
            await connection.close()
        }
    }

    @Test("the adapter goes away and comes back: reported missing, its apps' subscriptions ended, registered again")
    func adapterAwayAndBack() async throws {
        try await withBlueZoo(adapters: [Self.peripheralAddress, Self.centralAddress]) { bed in
            let connection = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            let peripheral = HeartRatePeripheral(
                connection: connection, configuration: Self.configuration, logger: testLogger)
            let central = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            try await withRunning(peripheral) { log in
                try await log.wait("registration") { $0.contains(.registered(adapter: "hci0")) }
                try await log.wait("advertising") {
                    $0.contains(.advertising(on: true, reason: "registered with bluetoothd"))
                }
                // An app on hci1 subscribed to the measurements.
                try await subscribeFromCentral(central)
                try await log.wait("the subscription") { $0.contains(.notifying(true)) }
                // BlueZoo's own controls, as an adapter unplugged and plugged in again.
                _ = try await callBlueZ(connection, "/org/bluezoo", "org.bluezoo.Manager1", "RemoveAdapter", [.byte(0)])
                try await log.wait("the adapter to be missing") {
                    $0.contains(.advertising(on: false, reason: "adapter hci0 missing"))
                }
                #expect(await peripheral.status.reason == "adapter hci0 missing")
                // The app's subscription went with the adapter: nobody is said to be listening.
                try await log.wait("the subscription to end") { $0.contains(.notifying(false)) }
                #expect(await peripheral.status.notifying == false)
                _ = try await callBlueZ(
                    connection, "/org/bluezoo", "org.bluezoo.Manager1", "AddAdapter",
                    [.byte(0), .string(Self.peripheralAddress)])
                try await log.wait("registration on the returned adapter") {
                    $0.count { $0 == .registered(adapter: "hci0") } == 2
                }
                try await eventually("advertising again") { await peripheral.status.advertising }
            }
            await central.close()
            await connection.close()
        }
    }

    /// hci1, as an app: finds hci0's advertisement, connects and subscribes to the measurements.
    private func subscribeFromCentral(_ central: DBusConnection) async throws {
        _ = try await discoverAdvertisement(
            central, central: "hci1", peripheral: "hci0", device: Self.peripheralDevice)
        _ = try await callBlueZ(central, Self.peripheralDevice, "org.bluez.Device1", "Connect")
        var measurement: String?
        try await eventually("the measurement characteristic on the central's side") {
            measurement = try await blueZObjects(central).first { path, interfaces in
                path.hasPrefix(Self.peripheralDevice + "/")
                    && interfaces[Self.characteristicInterface]?["UUID"]?.string?.hasPrefix("00002a37") == true
            }?.key
            return measurement != nil
        }
        _ = try await callBlueZ(central, try #require(measurement), Self.characteristicInterface, "StartNotify")
    }

    @Test("no advertising instance left: NotPermitted is reported, and registered once one is freed")
    func noInstanceLeft() async throws {
        try await withBlueZoo(adapters: [Self.peripheralAddress, Self.centralAddress]) { bed in
            // Another program takes every instance BlueZoo has (15).
            let hog = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            let paths = (0..<15).map { "/test/hog/advertisement\($0)" }
            for path in paths {
                try hog.export(path: path) { call in
                    call.member == "GetAll" ? .success([.propertyMap([("Type", .string("broadcast"))])]) : .success([])
                }
                _ = try await callBlueZ(
                    hog, "/org/bluez/hci0", "org.bluez.LEAdvertisingManager1", "RegisterAdvertisement",
                    [.objectPath(path), .propertyMap([])])
            }
            let connection = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            let peripheral = HeartRatePeripheral(
                connection: connection, configuration: Self.configuration, logger: testLogger)
            try await withRunning(peripheral) { log in
                try await log.wait("the refusal") {
                    $0.contains(.advertising(on: false, reason: "NotPermitted: no advertising instance left"))
                }
                #expect(await peripheral.status.registered == false)
                _ = try await callBlueZ(
                    hog, "/org/bluez/hci0", "org.bluez.LEAdvertisingManager1", "UnregisterAdvertisement",
                    [.objectPath(paths[0])])
                try await log.wait("registration once an instance is free") {
                    $0.contains(.registered(adapter: "hci0"))
                }
                #expect(await peripheral.status.advertising)
            }
            await hog.close()
            await connection.close()
        }
    }

    @Test("without bluetoothd: reported, and calls from anyone are refused with AccessDenied")
    func strangersRefused() async throws {
        try await withPrivateBus { bus in
            let connection = try await DBusConnection.connect(bus: .address(bus.address), logger: testLogger)
            let stranger = try await DBusConnection.connect(bus: .address(bus.address), logger: testLogger)
            let peripheral = HeartRatePeripheral(
                connection: connection, configuration: Self.configuration, logger: testLogger)
            try await withRunning(peripheral) { log in
                try await log.wait("the report") {
                    $0.contains(.advertising(on: false, reason: "bluetoothd not running"))
                }
                let root = Self.configuration.objectPath
                for (path, interface, member, arguments) in [
                    (root, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", []),
                    (root + "/service0/char1", Self.characteristicInterface, "ReadValue", [DBusValue.propertyMap([])]),
                    (
                        root + "/service0/char2", Self.characteristicInterface, "WriteValue",
                        [.bytes([1]), .propertyMap([])]
                    ),
                    (
                        root + "/advertisement0", "org.freedesktop.DBus.Properties", "GetAll",
                        [.string("org.bluez.LEAdvertisement1")]
                    ),
                ] as [(String, String, String, [DBusValue])] {
                    let error = await #expect(throws: DBusError.self) {
                        _ = try await stranger.call(
                            destination: connection.uniqueName, path: path, interface: interface, member: member,
                            arguments: arguments)
                    }
                    #expect(error?.name == DBusError.accessDeniedName, "\(member)")
                }
                #expect(await peripheral.status.refusedCalls == 4)
                #expect(!log.all.contains(.energyResetRequested))

                // Our path is ours: a second peripheral on it cannot run.
                let twin = HeartRatePeripheral(
                    connection: connection, configuration: Self.configuration, logger: testLogger)
                await #expect(throws: PeripheralError.objectPathTaken(Self.configuration.objectPath)) {
                    try await twin.run()
                }
            }
            await #expect(throws: PeripheralError.alreadyRunning) { try await peripheral.run() }
            await stranger.close()
            await connection.close()
        }
    }

    @Test("the bus connection closing ends run() with PeripheralError.disconnected")
    func connectionClosed() async throws {
        try await withPrivateBus { bus in
            let connection = try await DBusConnection.connect(bus: .address(bus.address), logger: testLogger)
            let peripheral = HeartRatePeripheral(
                connection: connection, configuration: Self.configuration, logger: testLogger)
            let log = PeripheralLog()
            let events = peripheral.events()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for await event in events { log.append(event) } }
                group.addTask {
                    await #expect(throws: PeripheralError.disconnected) { try await peripheral.run() }
                }
                try await log.wait("the start") { !$0.isEmpty }
                await connection.close()
                try await group.waitForAll()
            }
            #expect(log.all.last == .advertising(on: false, reason: "stopped"))
        }
    }
}
