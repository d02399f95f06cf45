import Bridge
import BridgeClient
import BusHarness
import Foundation
import GATT
import NIOHTTP1
import Testing
import Wire

@testable import RemoteSensors

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Many gateways, one hub: remote sensors over MQTT (a real mosquitto)", .serialized)
struct HubTests {
    /// Gateway `gateway`'s ten straps: `C0:FF:EE:0g:00:01` … `0A`.
    static func straps(_ gateway: Int) -> [String] {
        (1...10).map { String(format: "C0:FF:EE:%02X:00:%02X", gateway, $0) }
    }

    /// Gateway `gateway`'s files; with `keys` (a directory of `room-N.key`), it signs its frames.
    static func gateway(_ gateway: Int, broker: MosquittoBroker, keys: URL? = nil) -> (
        scenario: String, settings: String, sensors: String
    ) {
        let straps = Self.straps(gateway).enumerated().map { index, address in
            #"{"name": "Room \#(gateway) strap \#(index + 1)", "address": "\#(address)", "#
                + #""segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]}"#
        }
        let scenario = #"{"version": 1, "seed": \#(gateway), "straps": [\#(straps.joined(separator: ", "))]}"#
        let settings = """
            [mqtt]
            url = "mqtt://127.0.0.1:\(broker.port)"
            node = "room-\(gateway)"
            keepalive = 5
            discovery = false
            publish_measurements = true
            """ + (keys.map { "\nkey_file = \"\($0.path)/room-\(gateway).key\"" } ?? "")
        let sensors = Self.straps(gateway).map { "[[sensors]]\naddress = \"\($0)\"\n" }.joined(separator: "\n")
        return (scenario, settings, sensors)
    }

    /// Gateways 1 to 3 on `broker`, each streaming its ten simulated straps (stopped by the caller).
    func startGateways(_ broker: MosquittoBroker, keys: URL? = nil) async throws -> [DaemonUnderTest] {
        var gateways: [DaemonUnderTest] = []
        do {
            for index in 1...3 {
                let setup = Self.gateway(index, broker: broker, keys: keys)
                gateways.append(
                    try await DaemonUnderTest(
                        speed: 1, moreSettings: setup.settings, scenario: setup.scenario, streaming: 10,
                        sensorsSection: setup.sensors))
            }
        } catch {
            for gateway in gateways { gateway.stop() }
            throw error
        }
        return gateways
    }

    func sensors(_ hub: DaemonUnderTest) async throws -> [String: SensorStatus] {
        let list = try await hub.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
        return Dictionary(uniqueKeysWithValues: list.map { ($0.address, $0) })
    }

    /// Waits until every strap of `addresses` is ready on `hub`; on timeout the error names those
    /// that are not (state, reason) and ends with the hub's last log lines.
    /// Waits until room 1's first strap is ready on `hub` and records a session on it.
    func recordFirstStrap(on hub: DaemonUnderTest) async throws -> (strap: String, session: String) {
        let strap = Self.straps(1)[0]
        try await waitForReady([strap], on: hub, "room 1's first strap on the hub")
        let created = try await hub.unix.send(.POST, "/v1/sessions", json: ["sensors": [strap]])
        return (strap, try created.decoded(SessionJSON.self).id.wire)
    }

    func waitForReady(_ addresses: [String], on hub: DaemonUnderTest, _ what: String) async throws {
        do {
            try await eventually(what) {
                let seen = try await sensors(hub)
                return addresses.allSatisfy { seen[$0]?.state == .ready }
            }
        } catch {
            let seen = (try? await sensors(hub)) ?? [:]
            let missing = addresses.filter { seen[$0]?.state != .ready }.map { address in
                seen[address].map { "\(address) \($0.state) \($0.reason ?? "")" } ?? "\(address) unknown"
            }
            throw HarnessError("\(error); not ready: \(missing.joined(separator: ", ")); \(hub.process.report)")
        }
    }

    func health(_ hub: DaemonUnderTest) async throws -> HealthJSON {
        try await hub.unix.send(.GET, "/v1/health").decoded(HealthJSON.self)
    }

    /// A directory of gateway keys, `room-1.key` to `room-3.key` (mode 0600), as an operator makes them.
    func makeKeys() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hub-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for gateway in 1...3 {
            let path = directory.appendingPathComponent("room-\(gateway).key").path
            let key = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            try Data(key.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        return directory
    }

    @Test(
        "three gateways (10 simulated straps each, signing with their keys) → one hub without a radio holding the keys: 30 sensors, a session records a remote strap, a killed gateway's straps drop and come back"
    )
    func threeGatewaysOneHub() async throws {
        try await withMosquitto { broker in
            let keys = try makeKeys()
            defer { try? FileManager.default.removeItem(at: keys) }
            var gateways = try await startGateways(broker, keys: keys)
            defer { for gateway in gateways { gateway.stop() } }
            // The hub lists one strap: only that one gets Home Assistant entities.
            let listed = Self.straps(1)[0]
            let hub = try await DaemonUnderTest(
                moreSettings: "[mqtt]\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nnode = \"hub\"\ndiscovery = true",
                streaming: nil,
                adapterSection:
                    // Silence alone drops no strap within the test's waits: a killed gateway's straps
                    // drop only if its signed Will verifies.
                    "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nexpire = 600\ngateway_keys = \"\(keys.path)\"",
                sensorsSection: "[[sensors]]\naddress = \"\(listed)\"\n")
            defer { hub.stop() }

            let everyStrap = (1...3).flatMap(Self.straps)
            try await waitForReady(everyStrap, on: hub, "30 remote straps ready on the hub")
            // Retained configs reach a new subscriber at once, before anything published later.
            let homeAssistant = try await MQTTSubscriber(broker: broker, filters: ["homeassistant/#", "marker"])
            defer { homeAssistant.stop() }
            let listedID = MQTTTopics.objectID(listed)
            try await homeAssistant.waitFor("the listed strap's entities") { $0.topic.contains("hub_\(listedID)") }
            try await mqttPublish(broker: broker, topic: "marker", payload: "end")
            try await homeAssistant.waitFor("the marker") { $0.topic == "marker" }
            let announced = Set(
                homeAssistant.messages.filter { $0.topic.hasPrefix("homeassistant/") && !$0.payload.isEmpty }.compactMap
                {
                    $0.topic.split(separator: "/").dropFirst(2).first.map(String.init)
                })
            #expect(announced == ["hub_\(listedID)"], "the hub announces only its listed strap: \(announced.sorted())")
            let seen = try await sensors(hub)
            #expect(seen.count == 30)
            #expect(seen[Self.straps(2)[0]]?.adapter == "room-2", "the gateway it is linked through")
            #expect(seen[Self.straps(2)[0]]?.name == "Room 2 strap 1", "its name, from the gateway")
            let streaming = seen.values.filter { $0.heartRate != nil }
            #expect(
                !streaming.isEmpty && streaming.allSatisfy { $0.bonded == true },
                "each gateway says its simulated straps' links are bonded")
            #expect(try await health(hub).adapters.map(\.name) == ["room-1", "room-2", "room-3"])

            // A session on the hub records a strap of room 2.
            let remote = Self.straps(2)[3]
            let created = try await hub.unix.send(.POST, "/v1/sessions", json: ["sensors": [remote]])
            let session = try created.decoded(SessionJSON.self).id.wire
            try await eventually("heart-rate samples in the hub's session") {
                let live = try await hub.unix.send(.GET, "/v1/sessions/\(session)").decoded(SessionJSON.self).live
                return (live?.statistics["heartRate"]?.count ?? 0) >= 3
            }

            // Gateway 3 killed without a word: the broker's Will (signed at its start) drops its
            // straps on the hub.
            kill(gateways[2].process.pid, SIGKILL)
            try await eventually("room 3's straps lost on the hub") {
                let seen = try await sensors(hub)
                return Self.straps(3).allSatisfy { seen[$0]?.state == .disconnected }
            }
            let afterKill = try await sensors(hub)
            #expect(Self.straps(1).allSatisfy { afterKill[$0]?.state == .ready }, "the others go on")
            #expect(afterKill[Self.straps(3)[0]]?.disconnections == 1)

            // It comes back: so do its straps.
            let setup = Self.gateway(3, broker: broker, keys: keys)
            gateways[2] = try await DaemonUnderTest(
                reusing: gateways[2], speed: 1, moreSettings: setup.settings, scenario: setup.scenario, streaming: 10,
                sensorsSection: setup.sensors)
            try await waitForReady(Self.straps(3), on: hub, "room 3's straps back on the hub")

            let stopped = try await hub.unix.send(.POST, "/v1/sessions/\(session)/stop").decoded(SessionJSON.self)
            let samples = try await hub.unix.send(.GET, "/v1/workouts/\(session)/samples")
                .list("samples", of: SampleJSON.self)
            #expect(stopped.state == "ended")
            #expect(samples.count >= 3, "the remote strap's samples are stored")
        }
    }

    /// The broker ACL docs/mqtt.md gives: each gateway writes its own topics and reads its
    /// commands; the hub reads everything and writes only its own topics and the gateways' replay
    /// requests. With `measurementsToHub` false, the hub reads no measurement (frames lost between
    /// gateway and hub).
    static func documentedACL(measurementsToHub: Bool = true) -> String {
        """
        user hub
        \(measurementsToHub ? "topic read hrbridge/#" : "topic read hrbridge/+/status\ntopic read hrbridge/+/sensor/+/backfill")
        topic write hrbridge/hub/#
        topic write hrbridge/+/cmd/replay

        pattern write hrbridge/%u/#
        pattern read hrbridge/%u/cmd/#

        """
    }

    @Test(
        "frames lost between a gateway and the hub (the broker's ACL denies them for a while): the gateway cannot know, so the hub asks it (signed, allowed by the documented ACL), and the workout's stored samples have no gap"
    )
    func hubAsksForWhatItMissed() async throws {
        let accounts = ["hub": "hub-secret", "room-1": "one-secret"]
        let broker = try await MosquittoBroker(accounts: accounts, acl: Self.documentedACL())
        defer { broker.remove() }
        let keys = try makeKeys()
        defer { try? FileManager.default.removeItem(at: keys) }
        for (user, password) in accounts {
            let path = keys.appendingPathComponent("\(user).password").path
            try Data(password.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        }
        func login(_ user: String) -> String {
            "\nusername = \"\(user)\"\npassword_file = \"\(keys.appendingPathComponent("\(user).password").path)\""
        }
        let setup = Self.gateway(1, broker: broker, keys: keys)
        let gateway = try await DaemonUnderTest(
            speed: 1, moreSettings: setup.settings + login("room-1"), scenario: setup.scenario, streaming: 10,
            sensorsSection: setup.sensors)
        defer { gateway.stop() }
        // Silence drops no strap within the test: the frames' sequence numbers show the loss.
        let hub = try await DaemonUnderTest(
            streaming: nil,
            adapterSection: "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nexpire = 600"
                + "\ngateway_keys = \"\(keys.path)\"" + login("hub"),
            sensorsSection: "")
        defer { hub.stop() }
        let (strap, session) = try await recordFirstStrap(on: hub)
        func storedTimes() async throws -> [Double] {
            try await hub.unix.send(.GET, "/v1/workouts/\(session)/samples").list("samples", of: SampleJSON.self)
                .compactMap { ISO8601.parse($0.start)?.timeIntervalSince1970 }
        }
        try await eventually("the strap's first samples stored on the hub") { try await storedTimes().count >= 3 }

        // The broker stops handing the hub measurements; the gateway publishes on, unaware.
        try await broker.replaceACL(Self.documentedACL(measurementsToHub: false))
        let frames = try await sensors(gateway)[strap]?.framesDecoded ?? 0
        try await eventually("the gateway published 4 more frames the hub did not get") {
            (try await sensors(gateway)[strap]?.framesDecoded ?? 0) >= frames + 4
        }
        try await broker.replaceACL(Self.documentedACL())
        var seen: [Double] = []
        do {
            try await eventually("the stretch the hub missed stored, from the gateway's journal") {
                seen = try await storedTimes()
                return seen.count >= 10 && longestGap(seen) < 2.5
            }
        } catch {
            Issue.record(
                "stored times \(seen); the gateway's last lines: \(gateway.process.output.suffix(20).joined(separator: "\n"))"
            )
            throw error
        }
        #expect(Set(seen).count == seen.count, "none stored twice")
        #expect(gateway.process.output.contains { $0.contains("journal sent again at a hub's request") })
    }

    @Test(
        "a gateway's key rotated mid-session: the hub holds room-1.key and room-1.next.key, the gateway restarts signing with the next key, the hub logs the switch and the session records on; an offline tagged with the old key then lets no strap go, nor after the hub restarts (the switch is kept)"
    )
    func gatewayKeyRotated() async throws {
        try await withMosquitto { broker in
            let keys = try makeKeys()
            defer { try? FileManager.default.removeItem(at: keys) }
            // The gateway's own key file, and the hub's copy of its next key beside the current one.
            let gatewayKeys = FileManager.default.temporaryDirectory.appendingPathComponent(
                "gateway-keys-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: gatewayKeys, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: gatewayKeys) }
            func write(_ key: String, to url: URL) throws {
                try Data(key.utf8).write(to: url)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
            }
            let oldKey = try String(contentsOf: keys.appendingPathComponent("room-1.key"), encoding: .utf8)
            let nextKey = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            try write(oldKey, to: gatewayKeys.appendingPathComponent("room-1.key"))
            try write(nextKey, to: keys.appendingPathComponent("room-1.next.key"))

            let setup = Self.gateway(1, broker: broker, keys: gatewayKeys)
            let gateway = try await DaemonUnderTest(
                speed: 1, moreSettings: setup.settings, scenario: setup.scenario, streaming: 10,
                sensorsSection: setup.sensors)
            // Stopped here only when the test ends early: its directory goes with the restarted one.
            defer { gateway.process.stop() }
            let hub = try await DaemonUnderTest(
                streaming: nil,
                adapterSection: "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nexpire = 600"
                    + "\ngateway_keys = \"\(keys.path)\"",
                sensorsSection: "")
            defer { hub.stop() }
            let (strap, session) = try await recordFirstStrap(on: hub)
            func storedCount() async throws -> Int {
                try await hub.unix.send(.GET, "/v1/workouts/\(session)/samples").list("samples", of: SampleJSON.self)
                    .count
            }
            try await eventually("the strap's first samples stored, tagged with the old key") {
                try await storedCount() >= 3
            }
            #expect(!hub.process.output.contains { $0.contains("gateway signs with its next key") })

            // The operator writes the next key into the gateway's key file and restarts it.
            gateway.stop(removing: false)
            try write(nextKey, to: gatewayKeys.appendingPathComponent("room-1.key"))
            let rotated = try await DaemonUnderTest(
                reusing: gateway, speed: 1, moreSettings: setup.settings, scenario: setup.scenario, streaming: 10,
                sensorsSection: setup.sensors)
            defer { rotated.stop() }
            try await eventually("the hub hears the gateway's next key") {
                hub.process.output.contains { $0.contains("gateway signs with its next key") && $0.contains("room-1") }
            }
            try await waitForReady([strap], on: hub, "the strap back on the hub, tagged with the next key")
            let before = try await storedCount()
            try await eventually("the session records on") { try await storedCount() >= before + 3 }

            // Whoever kept the old key: its offline of the running boot, which would let every
            // strap of room-1 go, is refused (counted: the refusal is logged once per gateway).
            func badSignatures(_ hub: DaemonUnderTest) async throws -> Int {
                let text = String(decoding: try await hub.unix.send(.GET, "/metrics").body, as: UTF8.self)
                let line = text.split(separator: "\n").first {
                    $0.hasPrefix("hrbridge_remote_refused_total{") && $0.contains("reason=\"bad_signature\"")
                }
                return line.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }.map { Int($0) } ?? 0
            }
            let refusedBefore = try await badSignatures(hub)
            let bootText = try String(
                contentsOf: rotated.directory.appendingPathComponent("gateway-room-1.boot"), encoding: .utf8)
            let boot = try #require(UInt64(bootText.trimmingCharacters(in: .whitespacesAndNewlines)))
            let statusTopic = "hrbridge/room-1/status"
            let oldSigner = try #require(EnvelopeSigner(key: Array(oldKey.utf8)))
            try await mqttPublish(
                broker: broker, topic: statusTopic,
                payload: String(
                    decoding: oldSigner.signStatus(.offline, topic: statusTopic, boot: boot, at: Date()), as: UTF8.self)
            )
            try await eventually("the old key's offline refused") { try await badSignatures(hub) >= refusedBefore + 1 }
            #expect(try await sensors(hub)[strap]?.state == .ready, "the strap streams on")
            #expect(try await sensors(hub)[strap]?.disconnections == 1, "dropped once, by the gateway's restart")

            // The hub restarts before the operator renames the keys, and the first message of
            // room-1 it reads is the old key's offline, retained where the gateway's status was (the
            // gateway is gone, its retained availabilities cleared: nothing tagged with the new key
            // comes first). The hub kept the switch in its state directory: refused.
            let recordPath = hub.directory.appendingPathComponent("gateway-key-switches").path
            let record = try KeySwitchRecord.read(from: recordPath)
            #expect(
                record.fingerprints == ["room-1": try #require(EnvelopeSigner(key: Array(nextKey.utf8))).fingerprint])
            // The gateway's Will (retained, signed with the next key) must land before the forged
            // offline: a Will the broker publishes after it would replace it.
            let statuses = try await MQTTSubscriber(broker: broker, filters: [statusTopic])
            defer { statuses.stop() }
            try await statuses.waitFor("the gateway's retained status") { !$0.payload.isEmpty }
            kill(rotated.process.pid, SIGKILL)
            _ = await rotated.process.wait()
            try await statuses.waitFor("the gateway's Will") { $0.payload.contains("offline") }
            hub.process.stop()
            for address in Self.straps(1) {
                try await mqttPublish(
                    broker: broker, topic: "hrbridge/room-1/sensor/\(MQTTTopics.objectID(address))/availability",
                    payload: "", retain: true)
            }
            try await mqttPublish(
                broker: broker, topic: statusTopic,
                payload: String(
                    decoding: oldSigner.signStatus(.offline, topic: statusTopic, boot: boot, at: Date()), as: UTF8.self),
                retain: true)
            let restartedHub = try await DaemonUnderTest(reusing: hub, streaming: nil)
            defer { restartedHub.process.stop() }
            // At least once: a hub whose first connect is slow connects again, and the broker hands
            // a new subscription the retained status again.
            var refused = 0
            do {
                try await eventually("the retained forged offline refused by the restarted hub") {
                    refused = try await badSignatures(restartedHub)
                    return refused >= 1
                }
            } catch {
                Issue.record(
                    "bad signatures \(refused); the hub's last lines: \(restartedHub.process.output.suffix(30).joined(separator: "\n"))"
                )
                throw error
            }
            #expect(
                restartedHub.process.output.contains {
                    $0.contains("the gateway signs with its next key, its old one is refused")
                })

            // The operator finishes: the next key becomes the key. The record is emptied as the hub
            // starts, so the same key put back as a next key some day starts with both keys read.
            restartedHub.process.stop()
            #expect(
                rename(
                    keys.appendingPathComponent("room-1.next.key").path, keys.appendingPathComponent("room-1.key").path)
                    == 0)
            let finished = try await DaemonUnderTest(reusing: hub, streaming: nil)
            defer { finished.process.stop() }
            #expect(try KeySwitchRecord.read(from: recordPath) == KeySwitchRecord())
        }
    }

    @Test(
        "a hub killed mid-session and started again: the recovered session asks the gateway for what the hub missed while down, and its stored heartbeats are the gateway's, none missing, none twice"
    )
    func hubRecoversWhatItMissedWhileDown() async throws {
        try await withMosquitto { broker in
            let setup = Self.gateway(1, broker: broker)
            let gateway = try await DaemonUnderTest(
                speed: 1, moreSettings: setup.settings, scenario: setup.scenario, streaming: 10,
                sensorsSection: setup.sensors)
            defer { gateway.stop() }
            let hub = try await DaemonUnderTest(
                streaming: nil,
                adapterSection: "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nexpire = 600",
                sensorsSection: "")
            defer { hub.stop() }
            let (strap, session) = try await recordFirstStrap(on: hub)
            func stored(_ type: String, on daemon: DaemonUnderTest) async throws -> [SampleJSON] {
                try await daemon.unix.send(.GET, "/v1/workouts/\(session)/samples?type=\(type)")
                    .list("samples", of: SampleJSON.self)
            }
            try await eventually("the strap's first samples stored on the hub") {
                try await stored("heartRate", on: hub).count >= 5
            }

            // Killed: the session stays in the recovery journal; the gateway publishes on.
            kill(hub.process.pid, SIGKILL)
            _ = await hub.process.wait()
            let frames = try await sensors(gateway)[strap]?.framesDecoded ?? 0
            try await eventually("the gateway published 5 frames while the hub was down") {
                (try await sensors(gateway)[strap]?.framesDecoded ?? 0) >= frames + 5
            }
            let restarted = try await DaemonUnderTest(reusing: hub, streaming: nil)
            defer { restarted.stop() }
            var times: [Double] = []
            do {
                // The hub judges the gateway's clock over its first 30 s of frames before it asks.
                try await eventually(
                    "the stretch the hub was down for stored, from the gateway's journal",
                    timeout: HarnessDeadline.condition + .seconds(RemoteStrapTracker.resumeSettle)
                ) {
                    times = try await stored("heartRate", on: restarted).compactMap {
                        ISO8601.parse($0.start)?.timeIntervalSince1970
                    }
                    return times.count >= 20 && longestGap(times) < 2.5
                }
            } catch {
                Issue.record(
                    "stored times \(times); the hub: \(restarted.process.output.filter { !$0.contains("Hummingbird") }.suffix(30).joined(separator: "\n"))"
                )
                throw error
            }
            #expect(restarted.process.output.contains { $0.contains("session recovered") })
            #expect(gateway.process.output.contains { $0.contains("journal sent again at a hub's request") })

            // Every beat once, in order: the stored RR intervals are a run of the gateway's journal.
            let journal = gateway.directory.appendingPathComponent("measurements.journal").path
            var beats: [Int] = []
            var journaled: [Int] = []
            do {
                try await eventually("the stored beats a run of the journaled ones") {
                    beats = try await stored("heartbeatSeries", on: restarted).compactMap(\.metadata.rawRRInterval)
                    journaled = Self.journaledBeats(of: strap, in: journal)
                    return beats.count >= 20 && Self.isRun(beats, of: journaled)
                }
            } catch {
                Issue.record("stored beats \(beats)\njournaled \(journaled)")
                throw error
            }
        }
    }

    /// The raw RR intervals (1/1024 s) of `address`'s frames in a gateway's journal, in order.
    static func journaledBeats(of address: String, in path: String) -> [Int] {
        var records = JournalReader(path: path)
        var beats: [Int] = []
        while let record = records.next() {
            guard record.address == address, let frame = try? RemoteMeasurement(payload: Array(record.envelope)),
                case .heartRateMeasurement(let heart)? = try? GATTValue(
                    characteristic: frame.characteristic, bytes: frame.bytes)
            else { continue }
            beats += heart.rrIntervals.map { Int($0.raw) }
        }
        return beats
    }

    /// Whether `part` appears in `whole` as one unbroken run.
    static func isRun(_ part: [Int], of whole: [Int]) -> Bool {
        guard !part.isEmpty, part.count <= whole.count else { return part.isEmpty }
        return (0...(whole.count - part.count)).contains { Array(whole[$0..<$0 + part.count]) == part }
    }

    /// The hub's three athletes: the first strap of each gateway.
    static let hubAthletes = [(1, "alice"), (2, "bob"), (3, "carol")]

    /// Heart-rate sample times stored for a workout (Unix seconds), read from PostgreSQL with psql.
    func storedTimes(_ database: PostgresServer, workout: String) async throws -> [Double] {
        try await database.query(
            """
            SELECT extract(epoch FROM start_time) FROM sample WHERE workout_id = upper('\(workout)') AND type = 'heartRate'
            ORDER BY start_time
            """
        ).compactMap(Double.init)
    }

    /// The longest time between consecutive stored samples (0 with fewer than two); with `window`,
    /// only of the spans that meet it.
    func longestGap(_ times: [Double], meeting window: ClosedRange<Double>? = nil) -> Double {
        zip(times, times.dropFirst()).filter { earlier, later in
            window.map { earlier <= $0.upperBound && later >= $0.lowerBound } ?? true
        }.map { $1 - $0 }.max() ?? 0
    }

    @Test(
        "a class on a hub storing into PostgreSQL: straps of all three gateways recorded; PostgreSQL restarted and the broker restarted mid-session lose no stored sample (the gateways' journals catch up), none twice"
    )
    func hubOnPostgres() async throws {
        try await withMosquitto { broker in
            try await withPostgres { database in
                let gateways = try await startGateways(broker)
                defer { for gateway in gateways { gateway.stop() } }
                let sensorsSection = Self.hubAthletes.map { gateway, athlete in
                    "[[sensors]]\naddress = \"\(Self.straps(gateway)[0])\"\nathlete = \"\(athlete)\"\n"
                }.joined(separator: "\n")
                let hub = try await DaemonUnderTest(
                    moreSettings: "[class]\nauto_join = true\nactivity = \"cycling\"", streaming: nil,
                    adapterSection: "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nexpire = 5",
                    sensorsSection: sensorsSection, storeSection: "[store]\nurl = \"\(database.url())\"")
                defer { hub.stop() }
                #expect(
                    try await database.query("SELECT name FROM hrbridge_migration ORDER BY name") == [
                        "v1", "v2-timestamptz", "v3-alpha1-windows", "v4-journal-owner", "v5-sample-via",
                        "v6-waveforms", "v7-sample-checks-per-transaction", "v8-journal-sensors", "v9-sample-id-lock",
                    ])

                // The class: one athlete per gateway joins as soon as the strap is in range.
                #expect(try await hub.unix.send(.POST, "/v1/class", json: [:]).status == 201)
                var sessions: [String: String] = [:]
                try await eventually("alice, bob and carol in the class") {
                    let running = try await hub.unix.send(.GET, "/v1/class").decoded(ClassJSON.self)
                    for member in running.members where member.state == .in {
                        if let session = member.session { sessions[member.athlete] = session }
                    }
                    return sessions.count == 3
                }
                func storedCounts() async throws -> [String: Int] {
                    var counts: [String: Int] = [:]
                    for (athlete, session) in sessions {
                        counts[athlete] = try await storedTimes(database, workout: session).count
                    }
                    return counts
                }
                try await eventually("each athlete's samples in PostgreSQL") {
                    try await storedCounts().values.allSatisfy { $0 >= 5 }
                }

                // PostgreSQL restarts: the hub holds the samples it cannot write and writes them after.
                await database.stop()
                try await eventually("the hub reports the store unreachable") {
                    try await health(hub).problems?.contains("store unreachable") == true
                }
                #expect((try await health(hub).store?.waiting ?? 0) > 0)
                try await database.start()
                try await eventually("the hub's store healthy again") { try await health(hub).problems == nil }

                // The broker restarts: frames published meanwhile come back from the gateways' journals.
                let before = try await storedCounts()
                let brokerStopped = Date().timeIntervalSince1970
                broker.stop()
                try await eventually("the hub lost every remote strap") {
                    let seen = try await sensors(hub)
                    return Self.hubAthletes.allSatisfy {
                        seen[Self.straps($0.0)[0]]?.state == .disconnected
                    }
                }
                // Several frames pass on each gateway while the broker is away.
                let gatewayFrames = try await sensors(gateways[0])[Self.straps(1)[0]]?.framesDecoded ?? 0
                try await eventually("gateway 1 decoded 5 more frames with the broker away") {
                    (try await sensors(gateways[0])[Self.straps(1)[0]]?.framesDecoded ?? 0) >= gatewayFrames + 5
                }
                try await broker.start()
                let outage = brokerStopped...Date().timeIntervalSince1970
                try await eventually("the remote straps back on the hub") {
                    let seen = try await sensors(hub)
                    return Self.hubAthletes.allSatisfy { seen[Self.straps($0.0)[0]]?.state == .ready }
                }
                // Live frames are stored within a second or two, the journal's as the batches arrive.
                var seenLast = ""
                do {
                    // Frames the gateways published once back on the broker but before the hub
                    // was come from the hub's requests.
                    try await eventually("every athlete's stored samples grown by 5, without a gap") {
                        seenLast = ""
                        for (athlete, session) in sessions {
                            let times = try await storedTimes(database, workout: session)
                            let gap = longestGap(times)
                            seenLast +=
                                "\(athlete): \(times.count) (before \(before[athlete] ?? 0)), longest gap \(gap); "
                            guard times.count >= (before[athlete] ?? 0) + 5, gap < 2.5 else { return false }
                        }
                        return true
                    }
                } catch {
                    Issue.record(
                        "stored: \(seenLast) the hub's last lines: \(hub.process.output.suffix(40).joined(separator: "\n"))"
                    )
                    throw error
                }
                let after = try await storedCounts()
                for (athlete, count) in after {
                    #expect(count >= (before[athlete] ?? 0) + 5, "\(athlete): the outage's samples are stored")
                }

                #expect(try await hub.unix.send(.POST, "/v1/class/stop").status == 200)
                for (athlete, session) in sessions {
                    let times = try await storedTimes(database, workout: session)
                    #expect(Set(times).count == times.count, "\(athlete): no sample stored twice")
                    #expect(
                        longestGap(times, meeting: outage) < 2.5, "\(athlete): the outage came back from the journal")
                    #expect(longestGap(times) < 2.5, "\(athlete): no gap")
                    let state = try await database.query(
                        "SELECT state FROM workout WHERE lower(id) = lower('\(session)')")
                    #expect(state == ["finished"], "\(athlete)'s workout finished in PostgreSQL")
                    // The outage's samples came as backfill, after the live view moved on: the
                    // finished workout's figures are those of its stored samples all the same.
                    let detail = try await hub.unix.send(.GET, "/v1/workouts/\(session)").decoded(
                        WorkoutDetailJSON.self)
                    for type in ["heartRate", "heartbeatSeries"] {
                        let figures = try #require(detail.summary?.statistics[type], "\(athlete): \(type)")
                        let stored =
                            try await database.query(
                                """
                                SELECT count(*), avg(value), min(value), max(value) FROM sample
                                WHERE workout_id = upper('\(session)') AND type = '\(type)'
                                """
                            ).first?.split(separator: "|").compactMap { Double($0) } ?? []
                        try #require(stored.count == 4, "\(athlete): \(type) stored \(stored)")
                        #expect(figures.count == Int(stored[0]), "\(athlete): \(type) count vs stored")
                        #expect(abs((figures.average ?? .nan) - stored[1]) < 1e-6, "\(athlete): \(type) mean")
                        #expect(figures.min == stored[2] && figures.max == stored[3])
                    }
                }
                let athletes = try await database.query("SELECT DISTINCT athlete FROM workout ORDER BY athlete")
                #expect(athletes == ["alice", "bob", "carol"])
            }
        }
    }

    @Test(
        "a hub records what the gateway records: the same strap's workout on both has the same zones, HRV, α1 windows and statistics (within a frame at the ends)"
    )
    func hubWorkoutEqualsGatewayWorkout() async throws {
        try await withMosquitto { broker in
            let strap = "C0:FF:EE:01:00:01"
            // Effort that crosses zones within the α1 window's first two minutes.
            let scenario =
                #"{"version": 1, "seed": 37, "straps": [{"name": "Alice's strap", "address": "\#(strap)", "#
                + #""segments": [{"type": "steady", "duration": "70s", "intensity": 0.3}, "#
                + #"{"type": "steady", "duration": "60m", "intensity": 0.75}]}]}"#
            let strapSection = "[[sensors]]\naddress = \"\(strap)\"\nathlete = \"alice\"\n"
            let gateway = try await DaemonUnderTest(
                speed: 1, moreSettings: Self.gateway(1, broker: broker).settings, scenario: scenario, streaming: 1,
                sensorsSection: strapSection)
            defer { gateway.stop() }
            let hub = try await DaemonUnderTest(
                moreSettings: "", streaming: nil,
                adapterSection: "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nexpire = 5",
                sensorsSection: strapSection)
            defer { hub.stop() }
            try await eventually("the strap ready on the hub") {
                try await sensors(hub)[strap]?.state == .ready
            }
            // One session on each, started together, on the same strap for the same athlete.
            async let onGateway = gateway.unix.send(
                .POST, "/v1/sessions", json: ["sensors": [strap], "athlete": "alice"])
            async let onHub = hub.unix.send(.POST, "/v1/sessions", json: ["sensors": [strap], "athlete": "alice"])
            let gatewaySession = try await onGateway.decoded(SessionJSON.self).id.wire
            let hubSession = try await onHub.decoded(SessionJSON.self).id.wire
            // Past two minutes of beats on both: α1 windows exist.
            try await eventually("α1 on both", timeout: .seconds(240)) {
                let gatewayLive = try await gateway.unix.send(.GET, "/v1/sessions/\(gatewaySession)")
                    .decoded(SessionJSON.self).live
                let hubLive = try await hub.unix.send(.GET, "/v1/sessions/\(hubSession)").decoded(SessionJSON.self).live
                return gatewayLive?.alpha1 != nil && hubLive?.alpha1 != nil
            }
            async let gatewayStop = gateway.unix.send(.POST, "/v1/sessions/\(gatewaySession)/stop")
            async let hubStop = hub.unix.send(.POST, "/v1/sessions/\(hubSession)/stop")
            let stopped = try [await gatewayStop.decoded(SessionJSON.self), await hubStop.decoded(SessionJSON.self)]
            let summaries = try stopped.map { try #require($0.summary) }
            let (local, remote) = (summaries[0], summaries[1])

            func zones(_ summary: WorkoutJSON.Summary) -> [Double] { summary.zones.map(\.duration) }
            #expect(zones(remote).count == 5)
            #expect(zones(remote).reduce(0, +) > 100, "the hub's session counts time in zones: \(zones(remote))")
            for (hubZone, gatewayZone) in zip(zones(remote), zones(local)) {
                #expect(abs(hubZone - gatewayZone) <= 2.5, "zones: hub \(zones(remote)), gateway \(zones(local))")
            }
            let hubIntervals = remote.hrv.acceptedIntervals
            let gatewayIntervals = local.hrv.acceptedIntervals
            #expect(hubIntervals > 150, "the hub's HRV counts the strap's beats")
            #expect(
                abs(hubIntervals - gatewayIntervals) <= 8, "beats: hub \(hubIntervals), gateway \(gatewayIntervals)")
            let hubRMSSD = try #require(remote.hrv.rmssd)
            let gatewayRMSSD = try #require(local.hrv.rmssd)
            #expect(
                abs(hubRMSSD - gatewayRMSSD) <= 0.1 * gatewayRMSSD, "RMSSD: hub \(hubRMSSD), gateway \(gatewayRMSSD)")
            let hubWindows = remote.dfaAlpha1.windows
            let gatewayWindows = local.dfaAlpha1.windows
            #expect(hubWindows >= 1 && abs(hubWindows - gatewayWindows) <= 1)
            if let hubAlpha = remote.dfaAlpha1.last, let gatewayAlpha = local.dfaAlpha1.last {
                #expect(abs(hubAlpha - gatewayAlpha) <= 0.1, "α1: hub \(hubAlpha), gateway \(gatewayAlpha)")
            } else {
                Issue.record("no α1 value: hub \(remote.dfaAlpha1)")
            }
            for type in ["heartRate", "heartbeatSeries"] {
                let hubCount = try #require(remote.statistics[type]?.count)
                let gatewayCount = try #require(local.statistics[type]?.count)
                #expect(abs(hubCount - gatewayCount) <= 4, "\(type): hub \(hubCount), gateway \(gatewayCount)")
            }
            let hubAverage = try #require(remote.statistics["heartRate"]?.average)
            let gatewayAverage = try #require(local.statistics["heartRate"]?.average)
            #expect(abs(hubAverage - gatewayAverage) <= 1, "average: hub \(hubAverage), gateway \(gatewayAverage)")
            #expect(remote.activeEnergy.source == local.activeEnergy.source, "energy from the same source")
        }
    }
}
