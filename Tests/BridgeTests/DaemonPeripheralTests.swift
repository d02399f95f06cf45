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

/// The daemon as a Bluetooth heart-rate sensor (`[peripheral]`), against BlueZoo: a strap on hci0,
/// the daemon holding it through hci1 and serving apps from hci2, an app on hci3 that follows the
/// running session's strap; its state in `/v1/health` (checked against the OpenAPI document) and
/// `/metrics`.
@Suite("hrbridged: [peripheral] on BlueZoo", .serialized)
struct DaemonPeripheralTests {
    static let strap = "00:00:00:00:0B:01"
    static let adapters = [strap, "00:00:00:00:0B:02", "00:00:00:00:0B:03", "00:00:00:00:0B:04"]
    static let relayDevice = "/org/bluez/hci3/dev_00_00_00_00_0B_03"
    static let characteristic = "org.bluez.GattCharacteristic1"
    static let frames = ["1648a003", "164ba203", "0650", "1651b003"]
    static let logger = Logger(label: "test")

    @Test("the session's strap reaches an app frame for frame; health, MQTT and metrics say so")
    func sessionStrapToAnApp() async throws {
        try await withMosquitto { broker in try await sessionStrapToAnApp(broker: broker) }
    }

    @Test("one adapter holding the strap and serving apps: the daemon's strap is not an app")
    func sharedAdapterStrapIsNotAnApp() async throws {
        try await withBlueZoo(adapters: Self.adapters) { bed in
            _ = try await bed.startStrap(address: Self.strap, frames: Self.frames, interval: 0.05)
            let daemon = try PeripheralDaemon(
                bed: bed,
                peripheral: """
                    adapter = "hci1"
                    source = "session"
                    """)
            defer { daemon.stop() }
            let client = daemon.client
            try await eventually("the strap to stream: \(daemon.process.output.suffix(10).joined(separator: "\n"))") {
                let sensor = try? await client.send(.GET, "/v1/sensors/\(Self.strap)")
                return sensor?.decode(SensorStatus.self)?.heartRate != nil
            }
            func health() async throws -> PeripheralJSON? {
                try await client.send(.GET, "/v1/health").decoded(HealthJSON.self).peripheral
            }
            try await eventually("registered on hci1") { try await health()?.registered == true }
            // The strap streams through hci1, so BlueZ lists it connected there; no app is.
            for _ in 0..<3 {
                let peripheral = try await health()
                #expect(peripheral?.adapter == "hci1")
                #expect(peripheral?.centrals == 0, "the daemon's own strap counted as an app")
            }
        }
    }

    private func sessionStrapToAnApp(broker: MosquittoBroker) async throws {
        let reader = try await MQTTSubscriber(broker: broker, filters: ["hrbridge/gym/peripheral/#"])
        defer { reader.stop() }
        try await withBlueZoo(adapters: Self.adapters) { bed in
            let strap = try await bed.startStrap(address: Self.strap, frames: Self.frames, interval: 0.05, gated: true)
            let app = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: Self.logger)
            defer { Task { await app.close() } }
            // BlueZoo lists an advertisement only of a discoverable adapter.
            _ = try await callBlueZ(
                app, "/org/bluez/hci2", "org.freedesktop.DBus.Properties", "Set",
                [.string("org.bluez.Adapter1"), .string("Discoverable"), .variant(.boolean(true))])
            let daemon = try PeripheralDaemon(
                bed: bed,
                peripheral: """
                    adapter = "hci2"
                    source = "session"
                    name = "Gym HR"
                    """,
                more: """
                    [mqtt]
                    url = "mqtt://127.0.0.1:\(broker.port)"
                    node = "gym"
                    """)
            defer { daemon.stop() }
            let directory = daemon.directory
            let client = daemon.client
            try await eventually("the strap to stream: \(daemon.process.output.suffix(10).joined(separator: "\n"))") {
                let sensor = try? await client.send(.GET, "/v1/sensors/\(Self.strap)")
                return sensor?.decode(SensorStatus.self)?.state == .ready
            }
            func health() async throws -> PeripheralJSON? {
                try await client.send(.GET, "/v1/health").decoded(HealthJSON.self).peripheral
            }
            var peripheral: PeripheralJSON?
            try await eventually("advertising on hci2") {
                peripheral = try await health()
                return peripheral?.advertising == true
            }
            #expect(peripheral?.adapter == "hci2")
            #expect(peripheral?.following == nil, "no session yet: no strap passed on")
            let created = try await client.send(.POST, "/v1/sessions", json: ["sensors": [Self.strap]])
            #expect(created.status == 201)
            try await eventually("the session's strap followed") {
                peripheral = try await health()
                return peripheral?.following == Self.strap
            }

            // The app finds "Gym HR" on hci3, connects and subscribes.
            _ = try await callBlueZ(
                app, "/org/bluez/hci3", "org.bluez.Adapter1", "SetDiscoveryFilter",
                [.propertyMap([("Transport", .string("le"))])])
            _ = try await callBlueZ(app, "/org/bluez/hci3", "org.bluez.Adapter1", "StartDiscovery")
            try await eventually("the advertisement seen from hci3") {
                try await blueZObjects(app)[Self.relayDevice]?["org.bluez.Device1"]?["Name"]?.string == "Gym HR"
            }
            _ = try await callBlueZ(app, "/org/bluez/hci3", "org.bluez.Adapter1", "StopDiscovery")
            _ = try await callBlueZ(app, Self.relayDevice, "org.bluez.Device1", "Connect")
            var measurement: String?
            try await eventually("the heart-rate characteristic") {
                measurement = try await blueZObjects(app).first { path, interfaces in
                    path.hasPrefix(Self.relayDevice + "/")
                        && interfaces[Self.characteristic]?["UUID"]?.string?.hasPrefix("00002a37") == true
                }?.key
                return measurement != nil
            }
            let path = try #require(measurement)
            let received = try await ValueRecorder.start(path, on: app)
            defer { received.stop() }
            _ = try await callBlueZ(app, path, Self.characteristic, "StartNotify")
            try await eventually("the app subscribed") { try await health()?.notifying == true }
            try strap.send("resume")
            try await eventually("every frame at the app") { received.all.count >= Self.frames.count }
            #expect(received.all.map { $0.map { String(format: "%02x", $0) }.joined() } == Self.frames)

            // Health, as the OpenAPI document describes it.
            let reply = try await client.send(.GET, "/v1/health")
            let served = try #require(try reply.decoded(HealthJSON.self).peripheral)
            #expect(served.framesSent == Self.frames.count)
            #expect(served.centrals == 1)
            #expect(served.sourceUp == true)
            #expect(served.source == "session")
            // The body as it came, for the schema check.
            let observed =
                Data(#"{"method":"get","path":"/v1/health","status":\#(reply.status),"body":"#.utf8) + reply.body
                + Data("}".utf8)
            let file = directory.appendingPathComponent("observed.jsonl")
            try observed.write(to: file)
            let checker = try Spawned(
                packageRoot.appendingPathComponent(".venv/bin/python").path,
                [
                    packageRoot.appendingPathComponent("Tests/Fixtures/openapi/check_responses.py").path,
                    "--validate-only", packageRoot.appendingPathComponent("Sources/Bridge/API/openapi.json").path,
                    file.path,
                ], label: "check_responses")
            #expect(await checker.wait() == 0, "\(checker.output.joined(separator: "\n"))")
            #expect(checker.output.last?.contains("checked 1 responses") == true)

            // MQTT: the retained state, published when it changed (the app subscribed), not per frame.
            func state(_ message: MQTTSubscriber.Received) -> PeripheralJSON? {
                message.decode(TaggedJSON<PeripheralJSON>.self)?.payload
            }
            let published = try await reader.waitFor("the peripheral's state with the app subscribed") {
                $0.topic == "hrbridge/gym/peripheral/hci2" && state($0)?.notifying == true
            }
            // Retained: a client that comes later gets it at once (flagged retained).
            let late = try await MQTTSubscriber(broker: broker, filters: ["hrbridge/gym/peripheral/#"])
            defer { late.stop() }
            let kept = try await late.waitFor("the retained state") { $0.topic == "hrbridge/gym/peripheral/hci2" }
            #expect(kept.retain && state(kept)?.adapter == "hci2")
            #expect(state(published)?.advertising == true && state(published)?.following == Self.strap)
            #expect(
                reader.messages(on: "hrbridge/gym/peripheral/hci2").count < Self.frames.count + 5,
                "state messages, not one per frame")

            // The families of /metrics.
            let metrics = String(decoding: try await client.send(.GET, "/metrics").body, as: UTF8.self)
            for family in [
                #"hrbridge_peripheral_advertising{adapter="hci2"} 1"#,
                #"hrbridge_peripheral_centrals{adapter="hci2"} 1"#,
                #"hrbridge_peripheral_subscribed{adapter="hci2"} 1"#,
                #"hrbridge_peripheral_frames_sent_total{adapter="hci2"} \#(Self.frames.count)"#,
                #"hrbridge_peripheral_frames_unsubscribed_total{adapter="hci2"}"#,
                #"hrbridge_peripheral_writes_refused_total{adapter="hci2"} 0"#,
            ] {
                #expect(metrics.contains(family), "\(family) in /metrics")
            }
        }
    }
}

/// hrbridged holding the strap through hci1, with the given `[peripheral]` keys; its API on a
/// Unix socket in a directory of its own, removed by ``stop()``.
private struct PeripheralDaemon {
    let directory: URL
    let process: Spawned
    let client: APIClient

    init(bed: BlueZooBed, peripheral: String, more: String = "") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrbridge-peripheral-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("api.sock").path
        let configuration = directory.appendingPathComponent("config.toml")
        try Data(
            """
            [adapter]
            kind = "bluez"
            names = ["hci1"]
            [store]
            path = "\(directory.path)/store.sqlite"
            [api]
            socket = "\(socket)"
            [[sensors]]
            address = "\(DaemonPeripheralTests.strap)"
            [peripheral]
            enabled = true
            \(peripheral)
            \(more)
            """.utf8
        ).write(to: configuration)
        process = try Spawned(
            DaemonUnderTest.daemonBinary, ["--config", configuration.path, "--log-level", "info"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address], label: "daemon")
        client = APIClient(endpoint: .unix(socket))
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
