import BusHarness
import DBus
import Foundation
import Sensors
import Testing

@testable import BlueZ

@Suite("BlueZ messages without BlueZ's shape: refused, counted, the stream goes on")
struct BlueZShapesTests {
    static let device = "/org/bluez/hci0/dev_11_22_33_44_55_66"

    @Test(
        "signals: the argument types BlueZ's API gives each applied signal",
        arguments: [
            (
                "InterfacesAdded",
                [DBusValue.objectPath(device), .dictionary(keySignature: "s", valueSignature: "a{sv}", [])], nil
            ),
            ("InterfacesAdded", [.string("oops")], "s"),
            ("InterfacesAdded", [.objectPath(device)], "o"),
            (
                "InterfacesRemoved",
                [.objectPath(device), .array(elementSignature: "s", [.string("org.bluez.Device1")])], nil
            ),
            ("InterfacesRemoved", [.objectPath(device), .array(elementSignature: "o", [])], "oao"),
            (
                "PropertiesChanged",
                [.string("org.bluez.Device1"), .propertyMap([]), .array(elementSignature: "s", [])], nil
            ),
            ("PropertiesChanged", [.string("org.bluez.Device1"), .propertyMap([])], "sa{sv}"),
            ("PropertiesChanged", [], ""),
            // Not one hrbridge applies: not judged.
            ("SomethingElse", [.string("x")], nil),
        ] as [(String, [DBusValue], String?)])
    func signals(member: String, arguments: [DBusValue], refusedAs received: String?) {
        let signal = DBusSignal(
            sender: ":1.7", path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: member,
            arguments: arguments)
        let problem = BlueZShapes.problem(with: signal)
        #expect(problem?.received == received)
        #expect(problem.map { $0.kind == .signal && $0.member == member && $0.expected != received } ?? true)
    }

    @Test("properties: those of another type are left out and named; the rest are kept")
    func properties() {
        let changed: [String: DBusValue] = [
            "Connected": .string("yes"), "RSSI": .int32(-60), "Paired": .boolean(true), "UUIDs": .bytes([1]),
            "Name": .objectPath("/x"), "Icon": .uint32(7), "ManufacturerData": .array(elementSignature: "a{qv}", []),
            "Alias": .string("Strap"),
        ]
        let checked = BlueZShapes.checked(changed, of: "org.bluez.Device1", at: Self.device)
        // Any integer type is an RSSI; Icon is not read, so not judged.
        #expect(Set(checked.kept.keys) == ["RSSI", "Paired", "Icon", "Alias"])
        #expect(
            checked.refused.map(\.description) == [
                "property Device1.Connected at \(Self.device): expected b, got s",
                "property Device1.ManufacturerData at \(Self.device): expected a{qv}, got aa{qv}",
                "property Device1.Name at \(Self.device): expected s, got o",
                "property Device1.UUIDs at \(Self.device): expected as, got ay",
            ])
        let value = BlueZShapes.checked(
            ["Value": .string("70")], of: "org.bluez.GattCharacteristic1", at: Self.device + "/char0011")
        #expect(value.kept.isEmpty && value.refused.map(\.member) == ["GattCharacteristic1.Value"])
        let other = BlueZShapes.checked(["Anything": .string("x")], of: "org.example.Other", at: "/")
        #expect(other.kept.count == 1 && other.refused.isEmpty)
    }

    @Test("the cache keeps a device's good properties and leaves out the rest")
    func cache() {
        var cache = ObjectCache()
        let refused = cache.add(
            path: Self.device,
            interfaces: .dictionary(
                keySignature: "s", valueSignature: "a{sv}",
                [
                    DBusDictionaryEntry(
                        key: .string("org.bluez.Device1"),
                        value: .propertyMap([("Connected", .boolean(true)), ("Paired", .string("no"))]))
                ]))
        #expect(refused.map(\.member) == ["Device1.Paired"])
        #expect(cache.properties(Self.device, "org.bluez.Device1")?["Connected"]?.bool == true)
        #expect(cache.properties(Self.device, "org.bluez.Device1")?["Paired"] == nil)
        let update = cache.update(
            path: Self.device, interface: "org.bluez.Device1", changed: ["Connected": .byte(0)], invalidated: [])
        #expect(update.map(\.member) == ["Device1.Connected"])
        #expect(cache.properties(Self.device, "org.bluez.Device1")?["Connected"]?.bool == true, "not applied")
    }

    @Test("a signal with a long signature names only its start")
    func longSignature() {
        let arguments = Array(repeating: DBusValue.string("x"), count: 1000)
        let signal = DBusSignal(
            sender: ":1.7", path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
            arguments: arguments)
        #expect(BlueZShapes.problem(with: signal)?.received.count == MalformedBlueZMessage.signatureLimit + 1)
    }
}

@Suite("malformed messages from python-dbusmock's bluez5 template", .serialized)
struct MalformedBlueZBusTests {
    let sensor = SensorIdentity(adapter: "hci0", address: "11:22:33:44:55:66")

    @Test(
        "a malformed signal and a property of the wrong type are refused and counted; the strap stays linked and streams"
    )
    func malformedSignals() async throws {
        try await withMockBlueZ { mock in
            try await mock.addResolvedStrap()
            try await withAdapter(mock) { adapter, log in
                try await adapter.connect(sensor)
                try await mock.expectDelivered([70], log: log)
                let before = await adapter.malformedMessages
                // From bluetoothd's own connection (org.bluez's owner): only its shape is wrong.
                try await mock.call(
                    "/", "org.freedesktop.DBus.Mock", "EmitSignal",
                    [
                        .string("org.freedesktop.DBus.ObjectManager"), .string("InterfacesAdded"), .string("s"),
                        .array(elementSignature: "v", [.variant(.string("not an object"))]),
                    ])
                try await mock.setDevice("Connected", .string("no"))
                try await eventually("the two refusals") { await adapter.malformedMessages == before + 2 }
                try await mock.expectDelivered([71, 72], after: [70], log: log)
                #expect(
                    !log.all.contains {
                        if case .connectionChanged(_, .disconnected) = $0 { true } else { false }
                    }, "a Connected that is not a boolean is not a disconnect")
                #expect(await adapter.knownDevices().first?.connected == true)
            }
        }
    }

    @Test("a GetManagedObjects reply that is not BlueZ's object tree: opening fails with an error naming it")
    func malformedSnapshot() async throws {
        try await withMockBlueZ { mock in
            try await mock.call(
                "/", "org.freedesktop.DBus.Mock", "AddMethod",
                [
                    .string("org.freedesktop.DBus.ObjectManager"), .string("GetManagedObjects"), .string(""),
                    .string("s"), .string("ret = 'no objects today'"),
                ])
            let connection = try await DBusConnection.connect(bus: .address(mock.bus.address), logger: testLogger)
            defer { Task { await connection.close() } }
            await #expect(
                throws: SensorAdapterError.failed(
                    name: MalformedBlueZMessage.errorName,
                    message: "reply GetManagedObjects at /: expected a{oa{sa{sv}}}, got s")
            ) {
                _ = try await BlueZAdapter.open(connection: connection, options: fastOptions, logger: testLogger)
            }
        }
    }

    @Test("a strap wanted after a full cache left its device out: bluetoothd's objects are read again and it connects")
    func leftOutStrapReadBack() async throws {
        try await withMockBlueZ { mock in
            // A stranger takes the only place; the strap's device and service appear after it.
            try await mock.call(
                "/org/bluez/hci0", "org.bluez.Adapter1", "RemoveDevice", [.objectPath(MockBlueZ.device)])
            try await mock.call(
                "/", "org.bluez.Mock", "AddDevice", [.string("hci0"), .string("AA:BB:CC:00:00:01"), .string("Other")])
            var options = fastOptions
            options.deviceLimit = 1
            options.connectsUnknownDevices = true
            try await withAdapter(mock, options: options) { adapter, log in
                try await mock.addDevice()
                try await mock.addResolvedStrap()
                try await eventually("the strap's device left out") { await adapter.devicesRefused >= 1 }
                #expect(await adapter.knownDevices().map(\.identity.address) == ["AA:BB:CC:00:00:01"])
                await #expect(throws: SensorAdapterError.self) { try await adapter.connect(sensor) }
                // Wanted now: read back, linked, streaming.
                await log.waitUntilReady(sensor)
                try await mock.expectDelivered([66], log: log)
                #expect(await adapter.knownDevices().map(\.identity.address).contains(sensor.address))
            }
        }
    }

    @Test("a signal queued by a bluetoothd that has since left is not applied to the new one's objects")
    func staleSignal() async throws {
        try await withMockBlueZ { mock in
            try await mock.addResolvedStrap()
            let connection = try await DBusConnection.connect(bus: .address(mock.bus.address), logger: testLogger)
            let adapter = try await BlueZAdapter.open(connection: connection, options: fastOptions, logger: testLogger)
            let log = EventLog(adapter.events())
            let oldOwner = try #require(try await connection.nameOwner(of: "org.bluez"))
            let restarted = try await mock.restarted()
            defer { restarted.process.stop() }
            await log.wait("bluetoothd back") { events in
                events.contains { if case .adapterChanged(_, .ready) = $0 { true } else { false } }
            }
            try await eventually("the new bluetoothd's objects") { await adapter.knownDevices().count == 1 }
            // As if it had waited in the queue behind the owner change: a device of the old process.
            let ghost = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"
            await adapter.handle(
                DBusSignal(
                    sender: oldOwner, path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                    member: "InterfacesAdded",
                    arguments: [
                        .objectPath(ghost),
                        .dictionary(
                            keySignature: "s", valueSignature: "a{sv}",
                            [
                                DBusDictionaryEntry(
                                    key: .string("org.bluez.Device1"),
                                    value: .propertyMap([("Address", .string("AA:BB:CC:DD:EE:FF"))]))
                            ]),
                    ]))
            #expect(await adapter.staleSignals == 1)
            #expect(await adapter.knownDevices().map(\.identity.address) == ["11:22:33:44:55:66"])
            await adapter.shutdown()
            await connection.close()
        }
    }
}

@Suite("the cache of bluetoothd's objects is bounded")
struct ObjectCacheBoundTests {
    static func device(_ index: Int) -> String {
        "/org/bluez/hci0/dev_C0_FF_EE_00_00_" + String(format: "%02X", index)
    }

    static func interfaces(_ interface: String) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "a{sv}",
            [DBusDictionaryEntry(key: .string(interface), value: .propertyMap([("UUID", .string("180d"))]))])
    }

    @Test("past the limit a new device is left out and counted, unless it is a wanted strap's; adapters always fit")
    func deviceLimit() {
        var cache = ObjectCache()
        cache.deviceLimit = 2
        cache.preferredAddresses = ["C0:FF:EE:00:00:09"]
        for index in 1...3 { cache.add(path: Self.device(index), interfaces: Self.interfaces("org.bluez.Device1")) }
        #expect(cache.deviceCount == 2 && cache.devicesRefused == 1)
        #expect(cache.properties(Self.device(3), "org.bluez.Device1") == nil)
        // A refused device's GATT objects are left out too; a held one's are kept.
        cache.add(path: Self.device(3) + "/service0010", interfaces: Self.interfaces("org.bluez.GattService1"))
        cache.add(path: Self.device(1) + "/service0010", interfaces: Self.interfaces("org.bluez.GattService1"))
        #expect(cache.devicesRefused == 2)
        #expect(cache.properties(Self.device(1) + "/service0010", "org.bluez.GattService1") != nil)
        // A PropertiesChanged does not bring a refused device in either.
        cache.update(
            path: Self.device(4), interface: "org.bluez.Device1", changed: ["RSSI": .int16(-50)], invalidated: [])
        #expect(cache.properties(Self.device(4), "org.bluez.Device1") == nil)
        // Linking brings it in where the reader asks for that (the peripheral's centrals), not otherwise.
        cache.update(
            path: Self.device(4), interface: "org.bluez.Device1", changed: ["Connected": .boolean(true)],
            invalidated: [])
        #expect(cache.properties(Self.device(4), "org.bluez.Device1") == nil)
        cache.update(
            path: Self.device(4), interface: "org.bluez.Device1", changed: ["Connected": .boolean(true)],
            invalidated: [],
            admittingLinked: true)
        #expect(cache.properties(Self.device(4), "org.bluez.Device1")?["Connected"]?.bool == true)
        cache.remove(path: Self.device(4), interfaces: ["org.bluez.Device1"])
        cache.add(path: Self.device(9), interfaces: Self.interfaces("org.bluez.Device1"))
        cache.add(path: "/org/bluez/hci1", interfaces: Self.interfaces("org.bluez.Adapter1"))
        #expect(cache.properties(Self.device(9), "org.bluez.Device1") != nil, "the wanted strap")
        #expect(cache.adapters.map(\.name) == ["hci1"])
        // One leaves: room for another.
        cache.remove(path: Self.device(2), interfaces: ["org.bluez.Device1"])
        cache.remove(path: Self.device(9), interfaces: ["org.bluez.Device1"])
        #expect(cache.deviceCount == 1)
        cache.add(path: Self.device(5), interfaces: Self.interfaces("org.bluez.Device1"))
        #expect(cache.properties(Self.device(5), "org.bluez.Device1") != nil)
    }

    @Test("merging an older reading adds only what the cache lacks")
    func merge() {
        var cache = ObjectCache()
        cache.update(
            path: Self.device(1), interface: "org.bluez.Device1", changed: ["Connected": .boolean(true)],
            invalidated: [])
        let older = DBusValue.dictionary(
            keySignature: "s", valueSignature: "a{sv}",
            [
                DBusDictionaryEntry(
                    key: .string("org.bluez.Device1"),
                    value: .propertyMap([
                        ("Connected", .boolean(false)), ("Paired", .boolean(true)), ("AddressType", .string("public")),
                    ]))
            ])
        cache.merge(path: Self.device(1), interfaces: older)
        let device = cache.properties(Self.device(1), "org.bluez.Device1")
        #expect(device?["Connected"]?.bool == true, "the newer value stays")
        #expect(device?["Paired"]?.bool == true && device?["AddressType"]?.string == "public")
        #expect(cache.deviceCount == 1)
        cache.merge(path: Self.device(2), interfaces: older)
        #expect(cache.deviceCount == 2 && cache.properties(Self.device(2), "org.bluez.Device1")?.count == 3)
    }

    @Test("a snapshot is judged parents first: a held device's GATT objects are kept whatever the reply's order")
    func snapshotOrder() {
        var cache = ObjectCache()
        cache.deviceLimit = 1
        let entries = [
            (Self.device(1) + "/service0010/char0011", "org.bluez.GattCharacteristic1"),
            (Self.device(1) + "/service0010", "org.bluez.GattService1"), (Self.device(1), "org.bluez.Device1"),
            (Self.device(2) + "/service0010", "org.bluez.GattService1"), (Self.device(2), "org.bluez.Device1"),
        ].map { DBusDictionaryEntry(key: .objectPath($0.0), value: Self.interfaces($0.1)) }
        cache.load(snapshot: .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", entries))
        #expect(cache.deviceCount == 1)
        let kept = cache.objects.keys.sorted()
        #expect(
            kept.count == 3 && kept.allSatisfy { $0.hasPrefix(Self.device(1)) }
                || kept.allSatisfy { $0.hasPrefix(Self.device(2)) } && kept.count == 2, "\(kept)")
    }
}
