import Bridge
import BridgeClient
import BusHarness
import DBus
import Foundation
import Logging
import NIOHTTP1
import Synchronization
import Testing
import Wire

/// The daemon's outputs on the simulator: `[osc]` to python-osc, and `[peripheral]` with its
/// α1 sensor on BlueZoo (the session's DFA α1 × 100 as a heart rate an app reads).
@Suite("hrbridged: [osc] and [peripheral] alpha1 on the simulator", .serialized)
struct DaemonOutputsTests {
    static let logger = Logger(label: "test")

    /// JSON lines python-osc's server printed (its own format: an OSC message's address, type tags
    /// and values of mixed types, read as it prints them).
    static func received(_ server: Spawned) -> [[String: Any]] {
        server.output.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["address"] != nil }
    }

    @Test("[osc]: the simulator's strap reaches python-osc with VRCOSC's names and types")
    func oscToPythonOSC() async throws {
        let server = try await Spawned.startPeer(
            venvPython, [packageRoot.appendingPathComponent("Tests/Fixtures/osc/server.py").path],
            label: "python-osc server"
        ) { peer in peer.output.contains { $0.contains("\"ready\"") } }
        defer { server.stop() }
        let ready = try #require(
            server.output.first { $0.contains("\"ready\"") }.flatMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
        let port = try #require(ready["port"] as? Int)
        let daemon = try await DaemonUnderTest(
            moreSettings: """
                [osc]
                enabled = true
                target = "127.0.0.1:\(port)"
                source = "simulator"
                preset = "vrcosc"
                """)
        defer { daemon.stop() }
        let value = "/avatar/parameters/VRCOSC/Heartrate/Value"
        try await eventually("heart rates at python-osc") {
            Self.received(server).filter { $0["address"] as? String == value }.count >= 5
        }
        let messages = Self.received(server)
        let rates = messages.filter { $0["address"] as? String == value }
        #expect(rates.allSatisfy { $0["tags"] as? String == ",i" })
        let values = rates.compactMap { ($0["values"] as? [Any])?.first as? Int }
        #expect(values.contains { (40...220).contains($0) }, "\(values)")
        let connected = messages.last { $0["address"] as? String == "/avatar/parameters/VRCOSC/Heartrate/Connected" }
        #expect(connected?["tags"] as? String == ",T")
        let normalised = messages.first { $0["address"] as? String == "/avatar/parameters/VRCOSC/Heartrate/Normalised" }
        #expect(normalised?["tags"] as? String == ",f")
        #expect(!server.output.contains { $0.contains("\"refused\"") }, "python-osc took every datagram")
    }

    @Test("[osc]: a target whose name does not resolve leaves the daemon running, and says why")
    func oscTargetUnresolved() async throws {
        let daemon = try await DaemonUnderTest(
            moreSettings: """
                [osc]
                enabled = true
                target = "quest.invalid:9000"
                source = "simulator"
                """)
        defer { daemon.stop() }
        try await eventually("the warning") {
            daemon.process.output.contains {
                $0.contains("OSC output waits for its target") && $0.contains("quest.invalid")
            }
        }
        let health = try await daemon.unix.send(.GET, "/v1/health")
        #expect(health.status == 200, "the daemon answers while OSC waits")
    }

    @Test("[peripheral] alpha1: a second sensor on its own adapter carries the session's α1 × 100")
    func alpha1Sensor() async throws {
        let adapters = ["00:00:00:00:0C:01", "00:00:00:00:0C:02", "00:00:00:00:0C:03"]
        try await withBlueZoo(adapters: adapters) { bed in
            let app = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: Self.logger)
            defer { Task { await app.close() } }
            _ = try await callBlueZ(
                app, "/org/bluez/hci1", "org.freedesktop.DBus.Properties", "Set",
                [.string("org.bluez.Adapter1"), .string("Discoverable"), .variant(.boolean(true))])
            // Fast: 2 minutes of beats (the first α1 window) in a few seconds.
            let daemon = try await DaemonUnderTest(
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address], speed: 30,
                moreSettings: """
                    [peripheral]
                    enabled = true
                    source = "simulator"
                    adapter = "hci0"
                    alpha1 = true
                    alpha1_adapter = "hci1"
                    """)
            defer { daemon.stop() }
            let client = daemon.unix
            let strap = DaemonUnderTest.straps[0]
            let created = try await client.send(.POST, "/v1/sessions", json: ["sensors": [strap]])
            let id = try created.decoded(SessionJSON.self).id.wire
            let events = EventCollector(client, path: "/v1/events?session=\(id)")
            defer { events.cancel() }

            // The app finds the α1 sensor on hci1 and subscribes.
            let device = "/org/bluez/hci2/dev_00_00_00_00_0C_02"
            _ = try await callBlueZ(
                app, "/org/bluez/hci2", "org.bluez.Adapter1", "SetDiscoveryFilter",
                [.propertyMap([("Transport", .string("le"))])])
            _ = try await callBlueZ(app, "/org/bluez/hci2", "org.bluez.Adapter1", "StartDiscovery")
            try await eventually(
                "the α1 sensor's advertisement: \(daemon.process.output.suffix(8).joined(separator: "\n")); \((try? await blueZObjects(app))?[device].map { "\($0)" } ?? "no device")"
            ) {
                try await blueZObjects(app)[device]?["org.bluez.Device1"]?["Name"]?
                    .string == "hrbridge a1x100"
            }
            _ = try await callBlueZ(app, "/org/bluez/hci2", "org.bluez.Adapter1", "StopDiscovery")
            _ = try await callBlueZ(app, device, "org.bluez.Device1", "Connect")
            var measurement: String?
            try await eventually("its heart-rate characteristic") {
                measurement = try await blueZObjects(app).first { path, interfaces in
                    path.hasPrefix(device + "/")
                        && interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?
                            .string?.hasPrefix("00002a37") == true
                }?.key
                return measurement != nil
            }
            let path = try #require(measurement)
            let received = try await ValueRecorder.start(path, on: app)
            defer { received.stop() }
            _ = try await callBlueZ(app, path, "org.bluez.GattCharacteristic1", "StartNotify")
            try await eventually("α1 frames at the app after the first window") {
                try !events.messages(.hrv, as: WorkoutJSON.HRVWindow.self).isEmpty && received.all.count >= 3
            }
            // Every value the app got is a window's α1 × 100, as a plain uint8 heart rate.
            func alpha1Values() throws -> Set<Int> {
                Set(
                    try events.messages(.hrv, as: WorkoutJSON.HRVWindow.self).compactMap(\.payload.alpha1).map {
                        Int(($0 * 100).rounded())
                    })
            }
            let windows = try alpha1Values()
            let frames = received.all
            #expect(frames.allSatisfy { $0.count == 2 && $0[0] == 0x00 }, "\(frames)")
            try await eventually("the windows seen so far to cover the frames") {
                let seen = try alpha1Values()
                return frames.allSatisfy { seen.contains(Int($0[1])) }
            }
            #expect(!windows.isEmpty)
            func peripheral() async throws -> PeripheralJSON? {
                try await client.send(.GET, "/v1/health").decoded(HealthJSON.self).peripheral
            }
            let health = try await peripheral()
            let alpha1 = try #require(health?.alpha1)
            #expect(alpha1.adapter == "hci1")
            #expect(alpha1.notifying == true)
            #expect(alpha1.value != nil)
            #expect(health?.following == strap, "the simulator's first strap")

            // The session ends: no α1 stands any more, and none is sent.
            _ = try await client.send(.POST, "/v1/sessions/\(id)/stop")
            try await eventually("α1 cleared") {
                let alpha1 = try await peripheral()?.alpha1
                return alpha1 != nil && alpha1?.value == nil
            }
            // A few more simulated seconds of the strap's frames reach the main sensor, not the α1 one
            // (counted after some frames went by: one in flight at the stop may still arrive).
            let framesIn = { try await peripheral()?.framesIn ?? 0 }
            let stopped = try await framesIn()
            try await eventually("strap frames after the stop") { try await framesIn() >= stopped + 3 }
            let sentAtEnd = received.all.count
            try await eventually("more strap frames") { try await framesIn() >= stopped + 13 }
            #expect(received.all.count == sentAtEnd, "α1 frames after the session ended")
        }
    }
}
