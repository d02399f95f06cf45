public import DBus
import Foundation
import Logging

/// Quiet logging for the harness's own bus connections.
let harnessLogger: Logger = {
    var logger = Logger(label: "harness")
    logger.logLevel = .error
    return logger
}()

/// python-dbusmock's `bluez5` template, with our fault injection on top
/// (`Tests/Fixtures/bluez/faults.py`), on a private bus, driven through its Mock API.
public struct MockBlueZ: Sendable {
    /// The private bus it owns `org.bluez` on.
    public let bus: PrivateBus
    /// The dbusmock process.
    public let process: Spawned
    /// The connection the harness drives the mock through.
    public let control: DBusConnection

    /// Wraps a running mock.
    public init(bus: PrivateBus, process: Spawned, control: DBusConnection) {
        self.bus = bus
        self.process = process
        self.control = control
    }

    /// The strap's device object.
    public static let device = "/org/bluez/hci0/dev_11_22_33_44_55_66"

    /// Starts dbusmock as `org.bluez` on `existing` (else a new private bus), with adapter hci0 and the
    /// strap's device object (no GATT service yet: see ``addResolvedStrap()``).
    public static func start(on existing: PrivateBus? = nil) async throws -> MockBlueZ {
        let bus = try existing ?? PrivateBus()
        let control: DBusConnection
        let process: Spawned
        do {
            control = try await DBusConnection.connect(bus: .address(bus.address), logger: harnessLogger)
            process = try await startOwningBlueZ(on: bus, control: control, label: "dbusmock")
        } catch {
            if existing == nil { bus.stop() }
            throw error
        }
        let mock = MockBlueZ(bus: bus, process: process, control: control)
        _ = try await mock.call("/", "org.bluez.Mock", "AddAdapter", [.string("hci0"), .string("bridge")])
        _ = try await mock.addDevice()
        return mock
    }

    /// Starts dbusmock with `template` (ours by default) on `bus` and waits until it owns `org.bluez`
    /// (its readiness signal, seen through `control`), holding a start slot meanwhile.
    public static func startOwningBlueZ(
        on bus: PrivateBus, control: DBusConnection, template: String = faultsTemplate, label: String = "dbusmock"
    ) async throws -> Spawned {
        try await Spawned.startPeer(
            venvPython, ["-m", "dbusmock", "--system", "--template", template],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], label: label
        ) { _ in try await control.nameOwner(of: "org.bluez") != nil }
    }

    /// Calls a method on the mock.
    @discardableResult
    public func call(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) async throws
        -> [DBusValue]
    {
        try await control.call(
            destination: "org.bluez", path: path, interface: interface, member: member, arguments: arguments)
    }

    /// Adds a Heart Rate service with a notifying 0x2A37 characteristic under the device, announced.
    public func addHeartRateService() async throws {
        try await call("/", "org.hrbridge.Faults", "AddHeartRateService", [.objectPath(Self.device)])
    }

    /// The strap's Heart Rate Measurement characteristic.
    public static let characteristic = device + "/service0010/char0011"

    /// The names of the methods called on `path`, from dbusmock's call log (`a(tsav)`).
    public func calls(on path: String) async throws -> [String] {
        let log = try await call(path, "org.freedesktop.DBus.Mock", "GetCalls")
        return log.first?.arrayElements?.compactMap {
            if case .structure(let members) = $0, members.count > 1 { members[1].string } else { nil }
        } ?? []
    }

    /// bluetoothd restarting: this mock's process is killed, a fresh one takes `org.bluez` on the
    /// same bus with the same adapter, device and Heart Rate service. Stop the returned mock too.
    public func restarted() async throws -> MockBlueZ {
        process.stop()
        try await eventually("the old dbusmock to leave org.bluez") {
            try await control.nameOwner(of: "org.bluez") == nil
        }
        let fresh = try await Self.startOwningBlueZ(on: bus, control: control, label: "dbusmock-restarted")
        let mock = MockBlueZ(bus: bus, process: fresh, control: control)
        try await mock.call("/", "org.bluez.Mock", "AddAdapter", [.string("hci0"), .string("bridge")])
        try await mock.addDevice()
        try await mock.addHeartRateService()
        try await mock.announce([Self.device + "/service0010", Self.characteristic])
        try await mock.resolveServices()
        return mock
    }

    /// `ServicesResolved=true` on the device, as bluetoothd sets it once GATT discovery is done.
    public func resolveServices() async throws { try await setDevice("ServicesResolved", .boolean(true)) }

    /// Sets a `Device1` property (emitting `PropertiesChanged`).
    public func setDevice(_ name: String, _ value: DBusValue) async throws {
        try await call(
            Self.device, "org.freedesktop.DBus.Mock", "UpdateProperties",
            [.string("org.bluez.Device1"), .propertyMap([(name, value)])])
    }

    /// The strap advertises `bytes` as manufacturer data of `company` (a `PropertiesChanged`, as
    /// bluetoothd sends while discovering); 0x006B is Polar's broadcast heart rate.
    public func advertise(_ bytes: [UInt8], company: UInt16 = 0x006B) async throws {
        try await setDevice("ManufacturerData", Self.manufacturerData(bytes, company: company))
    }

    /// `Device1.ManufacturerData` holding `bytes` for `company` (`a{qv}`).
    static func manufacturerData(_ bytes: [UInt8], company: UInt16) -> DBusValue {
        .dictionary(
            keySignature: "q", valueSignature: "v",
            [DBusDictionaryEntry(key: .uint16(company), value: .variant(.bytes(bytes)))])
    }

    /// Sets an `Adapter1` property (emitting `PropertiesChanged`).
    public func setAdapter(_ name: String, _ value: DBusValue) async throws {
        try await call(
            "/org/bluez/hci0", "org.freedesktop.DBus.Mock", "UpdateProperties",
            [.string("org.bluez.Adapter1"), .propertyMap([(name, value)])])
    }

    /// Adds the strap's device object (again).
    public func addDevice() async throws {
        try await call(
            "/", "org.bluez.Mock", "AddDevice", [.string("hci0"), .string("11:22:33:44:55:66"), .string("Mock Strap")])
    }

    /// Makes the device's next `times` Connect calls fail with `fault` (see faults.py).
    public func failConnect(_ fault: String, times: UInt32 = 1) async throws {
        try await call(
            "/", "org.hrbridge.Faults", "FailConnect", [.objectPath(Self.device), .string(fault), .uint32(times)])
    }

    /// Announces objects added with AddObject (dbusmock does not), as bluetoothd does with InterfacesAdded.
    public func announce(_ paths: [String]) async throws {
        for path in paths { try await call("/", "org.hrbridge.Faults", "Announce", [.objectPath(path)]) }
    }

    /// The strap's Heart Rate service, with `ServicesResolved=true`.
    public func addResolvedStrap() async throws {
        try await addHeartRateService()
        try await resolveServices()
    }

    /// A Heart Rate Measurement notification: `PropertiesChanged(Value)` on the characteristic.
    public func notify(_ frame: [UInt8]) async throws {
        try await call(
            Self.characteristic, "org.freedesktop.DBus.Mock", "UpdateProperties",
            [.string("org.bluez.GattCharacteristic1"), .propertyMap([("Value", .bytes(frame))])])
    }

    /// Stops the mock and its bus.
    public func stop() async {
        await control.close()
        process.stop()
        bus.stop()
    }
}

/// Runs `body` with a fresh mock, and stops the mock whatever `body` does.
public func withMockBlueZ(_ body: (MockBlueZ) async throws -> Void) async throws {
    let mock = try await MockBlueZ.start()
    do {
        try await body(mock)
    } catch {
        await mock.stop()
        throw error
    }
    await mock.stop()
}

/// Our dbusmock template: bluez5 plus fault injection.
public let faultsTemplate = packageRoot.appendingPathComponent("Tests/Fixtures/bluez/faults.py").path
