import BusHarness
import DBus
import Foundation
import Testing

/// `hrbridge relay` as a user runs it, against BlueZoo: a virtual strap on one adapter, the relay
/// holding it through a second and serving apps from a third, and an app (a D-Bus client of a
/// fourth adapter) that finds the advertisement, connects, reads and subscribes.
@Suite("hrbridge relay on BlueZoo", .serialized)
struct RelayCommandTests {
    static let strapAdapter = "00:00:00:00:0A:01"
    static let adapters = [strapAdapter, "00:00:00:00:0A:02", "00:00:00:00:0A:03", "00:00:00:00:0A:04"]
    static let characteristic = "org.bluez.GattCharacteristic1"
    /// The device hci3 sees for the relay's adapter (hci2).
    static let relayDevice = "/org/bluez/hci3/dev_00_00_00_00_0A_03"
    static let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("hrbridge").path

    /// A frame that fits, one with energy (left out without --energy), one too long for 20 bytes
    /// (split in two, every RR kept), one malformed (refused, not passed on), contact not detected.
    static let frames = [
        "1648a003", "1e4b0a00c003", "10" + "50" + String(repeating: "0004", count: 12), "0751", "0449",
    ]
    /// What the app must receive, in order.
    static let expected = [
        "1648a003", "164bc003", "1050" + String(repeating: "0004", count: 9),
        "1050" + String(repeating: "0004", count: 3),
        "0449",
    ]

    @Test("every frame reaches the app: RR exact, energy left out, a long frame split, a malformed one refused")
    func relayEndToEnd() async throws {
        try await withBlueZoo(adapters: Self.adapters) { bed in
            let strap = try await bed.startStrap(
                address: Self.strapAdapter, frames: Self.frames, interval: 0.05, gated: true)
            let app = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            defer { Task { await app.close() } }
            // BlueZoo lists an advertisement only of a discoverable adapter.
            _ = try await callBlueZ(
                app, "/org/bluez/hci2", "org.freedesktop.DBus.Properties", "Set",
                [.string("org.bluez.Adapter1"), .string("Discoverable"), .variant(.boolean(true))])
            let relay = try Spawned(
                Self.binary,
                [
                    "relay", "00:00:00:00:0A:01", "--adapter", "hci1", "--peripheral-adapter", "hci2", "--name",
                    "Ada\u{202E}\u{1B}[31m HR", "--json",
                ], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address])
            defer { relay.stop() }
            let advertising = await relay.waitForLine { $0.contains(#""state":"advertising""#) }
            try #require(advertising != nil, "relay printed: \(relay.output.joined(separator: "\n"))")
            #expect(relay.output.first?.contains(#""state":"placed""#) == true)
            let subscribed = await strap.process.waitForLine { $0 == "subscribed 2a37" }
            try #require(
                subscribed != nil,
                "the relay subscribed to the strap; it printed: \(relay.output.joined(separator: "\n"))")

            // The app: discover on hci3, LE only (BlueZoo would also show the BR/EDR side).
            _ = try await callBlueZ(
                app, "/org/bluez/hci3", "org.bluez.Adapter1", "SetDiscoveryFilter",
                [.propertyMap([("Transport", .string("le"))])])
            _ = try await callBlueZ(app, "/org/bluez/hci3", "org.bluez.Adapter1", "StartDiscovery")
            var device: [String: DBusValue] = [:]
            try await eventually("the relay's advertisement seen from hci3") {
                device = try await blueZObjects(app)[Self.relayDevice]?["org.bluez.Device1"] ?? [:]
                return !device.isEmpty
            }
            // The bidi override and the escape never reach the air.
            #expect(device["Name"]?.string == "Ada[31m HR")
            #expect(device["Appearance"]?.integer == 0x0341)
            #expect(
                device["UUIDs"]?.arrayElements?.compactMap(\.string) == ["0000180d-0000-1000-8000-00805f9b34fb"])
            _ = try await callBlueZ(app, "/org/bluez/hci3", "org.bluez.Adapter1", "StopDiscovery")
            _ = try await callBlueZ(app, Self.relayDevice, "org.bluez.Device1", "Connect")
            var paths: [String: String] = [:]
            try await eventually("the relay's characteristics") {
                paths = [:]
                for (path, interfaces) in try await blueZObjects(app) where path.hasPrefix(Self.relayDevice + "/") {
                    if let uuid = interfaces[Self.characteristic]?["UUID"]?.string {
                        paths[String(uuid.prefix(8).suffix(4))] = path
                    }
                }
                return paths["2a37"] != nil && paths["2a38"] != nil
            }
            #expect(paths["2a39"] == nil, "no control point without --energy")
            let location = try await callBlueZ(
                app, try #require(paths["2a38"]), Self.characteristic, "ReadValue", [.propertyMap([])])
            #expect(location.first?.bytes == [1], "chest")

            let measurement = try #require(paths["2a37"])
            let received = ValueRecorder()
            let values = try await app.signals(
                matching: MatchRule(
                    sender: "org.bluez", path: measurement, interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await received.record(values) }
                _ = try await callBlueZ(app, measurement, Self.characteristic, "StartNotify")
                #expect(await relay.waitForLine { $0.contains(#""state":"notifying""#) } != nil)
                try strap.send("resume")
                try await eventually("every frame at the app") { received.all.count >= Self.expected.count }
                #expect(received.all.map(Self.hex) == Self.expected)
                group.cancelAll()
            }

            kill(relay.pid, SIGINT)
            #expect(await relay.wait() == 0)
            let stats = try #require(relay.output.last.flatMap(Self.object))
            #expect(stats["event"] as? String == "stats")
            let peripheral = try #require(stats["peripheral"] as? [String: Any])
            #expect(peripheral["framesSent"] as? Int == Self.expected.count)
            #expect(peripheral["adapter"] as? String == "hci2")
            let sensors = try #require(stats["sensors"] as? [String: Any])
            let counters = try #require(sensors["00:00:00:00:0A:01"] as? [String: Any])
            #expect(counters["framesRejected"] as? Int == 1, "the malformed frame")
            // The relay's own measurement lines: what it passed on, as monitor prints it.
            let heartRates = relay.output.compactMap(Self.object).compactMap { $0["heartRate"] as? Int }
            #expect(heartRates == [72, 75, 80, 73])
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func object(_ line: String) -> [String: Any]? {
        try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }
}
