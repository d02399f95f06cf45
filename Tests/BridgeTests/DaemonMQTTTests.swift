import Bridge
import BridgeClient
import BusHarness
import Foundation
import JSONSupport
import Logging
import MQTT
import NIOHTTP1
import Testing
import Wire

@testable import RemoteSensors

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon on the simulator publishing to a real mosquitto broker, read by paho-mqtt.
@Suite("hrbridged over MQTT and /metrics", .serialized)
struct DaemonMQTTTests {
    static func settings(_ broker: MosquittoBroker, commands: Bool = true) -> String {
        """
        [mqtt]
        url = "mqtt://127.0.0.1:\(broker.port)"
        node = "gym"
        keepalive = 5
        state_interval = 0.5
        expire_after = 20
        commands = \(commands)
        """
    }

    /// Publishes Home Assistant's `online` `times` at once, then a command, and returns once the
    /// command is answered: the bridge handles its messages in order, so every online before it
    /// was handled by then.
    static func sayOnline(times: Int, thenAnswered broker: MosquittoBroker) async throws {
        let flooder = try MQTTClient(
            options: MQTTClient.Options(
                broker: MQTTBrokerURL(host: "127.0.0.1", port: broker.port, usesTLS: false), clientID: "ha-flood"),
            logger: Logger(label: "ha-flood"))
        try await flooder.start()
        try await eventually("the flooder connected") { await flooder.isConnected }
        let responses = try await MQTTSubscriber(broker: broker, filters: ["hrbridge/gym/cmd/response"])
        defer { responses.stop() }
        for _ in 0..<times {
            await flooder.publish(MQTTMessage(topic: "homeassistant/status", text: "online", qos: .atLeastOnce))
        }
        await flooder.publish(
            MQTTMessage(
                topic: "hrbridge/gym/cmd/session/start", text: #"{"requestId": "after-the-flood", "sensors": []}"#,
                qos: .atLeastOnce))
        try await responses.waitFor("the command's answer") { $0.payload.contains("after-the-flood") }
        await flooder.stop()
    }

    static func isID(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    @Test("SIGTERM with MQTT on: exit 0 — the live stream ending first is not taken for the bridge failing")
    func cleanStopWithMQTT() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(moreSettings: Self.settings(broker))
            defer { daemon.stop() }
            let reader = try await MQTTSubscriber(broker: broker, filters: ["hrbridge/gym/#"])
            defer { reader.stop() }
            try await eventually("the daemon's state on the broker") { !reader.messages.isEmpty }
            let created = try await daemon.unix.send(
                .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[0]]])
            #expect(created.status == 201)
            kill(daemon.process.pid, SIGTERM)
            let status = await daemon.process.wait()
            #expect(status == 0, "\(daemon.process.report)")
        }
    }

    @Test func homeAssistantDiscoveryStateUpdatesAndTheWill() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(moreSettings: Self.settings(broker))
            defer { daemon.stop() }
            // A subscriber that comes after the daemon: what it reads first is what the broker kept.
            let reader = try await MQTTSubscriber(broker: broker, filters: ["homeassistant/#", "hrbridge/gym/#"])
            defer { reader.stop() }
            try await eventually("15 discovery configs (3 straps × 5 entities)") {
                Set(reader.messages.filter { $0.topic.hasSuffix("/config") }.map(\.topic)).count == 15
            }
            // A client that comes later gets them from the broker: they are retained.
            let late = try await MQTTSubscriber(broker: broker, filters: ["homeassistant/#"])
            defer { late.stop() }
            try await eventually("the retained configs") { late.messages.count >= 15 }
            for config in late.messages.filter({ $0.topic.hasSuffix("/config") }) {
                #expect(config.retain, "\(config.topic) is retained")
                let parts = config.topic.split(separator: "/").map(String.init)
                #expect(parts.count == 5 && parts[0] == "homeassistant" && parts[4] == "config")
                #expect(["sensor", "binary_sensor"].contains(parts[1]))
                #expect(Self.isID(parts[2]) && Self.isID(parts[3]))
                // Home Assistant's format, not ours: read as it would read it.
                let object = try #require(config.object, "\(config.topic) is a JSON object")
                // What Home Assistant's MQTT discovery needs for an entity with a device.
                let stateTopic = try #require(object["state_topic"] as? String)
                #expect(stateTopic.hasPrefix("hrbridge/gym/sensor/") && stateTopic.hasSuffix("/state"))
                let uniqueID = try #require(object["unique_id"] as? String)
                #expect(Self.isID(uniqueID))
                // What names the entity since Home Assistant 2026.4 (which ignores `object_id`):
                // its domain, then lowercase letters, digits and `_`.
                #expect(object["object_id"] == nil)
                #expect(object["default_entity_id"] as? String == "\(parts[1]).\(parts[2])_\(parts[3])")
                #expect(object["name"] is String)
                #expect((object["value_template"] as? String)?.contains("value_json") == true)
                let device = try #require(object["device"] as? [String: Any])
                #expect((device["identifiers"] as? [String])?.isEmpty == false)
                #expect(device["name"] is String)
                let availability = try #require(object["availability"] as? [[String: Any]])
                #expect(availability.contains { $0["topic"] as? String == "hrbridge/gym/status" })
                #expect(object["availability_mode"] as? String == "all")
                switch parts[3] {
                case "heart_rate":
                    #expect(object["unit_of_measurement"] as? String == "bpm")
                    #expect(object["state_class"] as? String == "measurement")
                    #expect(object["expire_after"] as? Int == 20)
                case "zone":
                    #expect(object["state_class"] as? String == "measurement", "a number Home Assistant graphs")
                case "battery":
                    #expect(object["device_class"] as? String == "battery")
                    #expect(object["unit_of_measurement"] as? String == "%")
                case "connection":
                    #expect(parts[1] == "binary_sensor")
                    #expect(object["device_class"] as? String == "connectivity")
                default:
                    break
                }
            }
            // The hostile advertised name arrives as the same text, inside JSON, nothing executed or cut.
            let hostile = reader.messages.first {
                $0.topic == "homeassistant/sensor/gym_c0ffee000002/heart_rate/config"
            }
            #expect((hostile?.object?["device"] as? [String: Any])?["name"] as? String == DaemonUnderTest.hostileName)

            try await reader.waitFor("the node online") { $0.topic == "hrbridge/gym/status" && $0.payload == "online" }
            // Home Assistant restarted: it announces itself and gets every config again.
            let heartRateConfig = "homeassistant/sensor/gym_c0ffee000001/heart_rate/config"
            try await mqttPublish(broker: broker, topic: "homeassistant/status", payload: "online")
            try await eventually("the configs published again") { reader.messages(on: heartRateConfig).count >= 2 }
            // Anyone on the broker may say it in a loop: 50 at once get one more round at the
            // interval's end, not 50. The interval is 10 s of the simulator's clock (2 s here): on
            // a slow machine one may pass before the flood (a round at once) or during it (the
            // scheduled round), so at most two come while it is handled.
            let rounds = reader.messages(on: heartRateConfig).count
            try await Self.sayOnline(times: 50, thenAnswered: broker)
            let handled = reader.messages(on: heartRateConfig).count
            #expect(handled - rounds <= 2, "\(handled - rounds) rounds for 50 onlines at once")
            // Said within the interval, the flood is still answered: at its end.
            try await eventually("a round for the flood") { reader.messages(on: heartRateConfig).count > rounds }
            let stateTopic = "hrbridge/gym/sensor/c0ffee000001/state"
            try await eventually("three state updates of the first strap") {
                reader.messages(on: stateTopic).count >= 3
            }
            // The keys it carries, nulls included: the raw object.
            let state = try #require(reader.messages(on: stateTopic).last?.object)
            for key in [
                "heartRate", "rr", "rmssd", "zone", "percentOfMax", "battery", "contact", "via", "state", "time",
            ] {
                #expect(state.keys.contains(key), "state carries \(key)")
            }
            #expect((state["heartRate"] as? Int).map { (40...220).contains($0) } == true)
            #expect(state["zone"] is Int, "alice has zones")
            #expect(state["via"] as? String == "connection")
            #expect(state["state"] as? String == "ready")
            try await reader.waitFor("the strap available") {
                $0.topic == "hrbridge/gym/sensor/c0ffee000001/availability" && $0.payload == "online"
            }

            // Killed without a word: the broker publishes the Will.
            kill(daemon.process.pid, SIGKILL)
            try await reader.waitFor("the Will") {
                $0.topic == "hrbridge/gym/status" && $0.payload == "offline"
            }
        }
    }

    @Test func commandsStartControlAndStopASessionAndBadOnesAreRefused() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(moreSettings: Self.settings(broker))
            defer { daemon.stop() }
            let reader = try await MQTTSubscriber(
                broker: broker, filters: ["hrbridge/gym/cmd/response", "hrbridge/gym/session/#"])
            defer { reader.stop() }
            // A guest's session first: it never reaches the broker (the other session's topics, published
            // after it in order, show that its own would have arrived by then).
            let guest = try await daemon.unix.send(
                .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]], "guest": true])
            let guestID = try guest.decoded(SessionJSON.self).id.wire
            try await mqttPublish(
                broker: broker, topic: "hrbridge/gym/cmd/session/start",
                payload: #"{"requestId": "r1", "sensors": ["C0:FF:EE:00:00:01"], "activity": "cycling"}"#)
            func reply(_ message: MQTTSubscriber.Received) -> CommandReplyJSON? {
                message.decode(CommandReplyJSON.self)
            }
            let started = try #require(
                reply(try await reader.waitFor("the start reply") { reply($0)?.requestId == "r1" }))
            #expect(started.ok == true)
            let session = try #require(started.session?.id.wire)
            #expect(started.session?.activity == "cycling")
            try await reader.waitFor("the retained session state") {
                $0.topic == "hrbridge/gym/session/\(session)/state"
                    && $0.decode(TaggedJSON<SessionJSON>.self)?.payload.state == "running"
            }
            #expect(!reader.messages.contains { $0.topic.contains(guestID) }, "nothing of the guest's session")

            try await mqttPublish(broker: broker, topic: "hrbridge/gym/cmd/session/\(session)/lap", payload: "{}")
            try await reader.waitFor("the lap event") {
                $0.topic == "hrbridge/gym/session/\(session)/event" && $0.payload.contains("lap")
            }

            // Malformed: a named error, and nothing else happens.
            try await mqttPublish(
                broker: broker, topic: "hrbridge/gym/cmd/session/start",
                payload: #"{"requestId": "bad", "sensors": 5}"#)
            let refused = try #require(reply(try await reader.waitFor("the refusal") { reply($0)?.requestId == "bad" }))
            #expect(refused.ok == false)
            let error = try #require(refused.error)
            #expect(error.code == "invalid_request")
            #expect(error.message.contains("sensors"))
            try await mqttPublish(broker: broker, topic: "hrbridge/gym/cmd/session/start", payload: "not json")
            try await mqttPublish(broker: broker, topic: "hrbridge/gym/cmd/reboot", payload: "{}")
            try await eventually("two more refusals") {
                reader.messages(on: "hrbridge/gym/cmd/response").filter { reply($0)?.ok == false }.count == 3
            }
            let sessions = try await daemon.unix.send(.GET, "/v1/sessions").list("sessions", of: SessionJSON.self)
            #expect(sessions.count == 2, "only the good command started a session")
            // The same refusals in a loop: each answered, only the first of each kind logged.
            for index in 0..<20 {
                try await mqttPublish(
                    broker: broker, topic: "hrbridge/gym/cmd/session/start",
                    payload: #"{"requestId": "loop-\#(index)", "sensors": 5}"#)
            }
            try await eventually("every one answered") {
                reader.messages(on: "hrbridge/gym/cmd/response").filter { reply($0)?.ok == false }.count == 23
            }
            let logged = daemon.process.output.filter { $0.contains("MQTT command refused") }
            #expect(logged.count == 2, "one warning per kind (invalid_request, not_found): \(logged.count)")

            try await mqttPublish(
                broker: broker, topic: "hrbridge/gym/cmd/session/\(session)/stop", payload: #"{"requestId": "r2"}"#)
            let stopped = try #require(
                reply(try await reader.waitFor("the stop reply") { reply($0)?.requestId == "r2" }))
            #expect(stopped.ok == true)
            try await reader.waitFor("the ended state") {
                $0.topic == "hrbridge/gym/session/\(session)/state"
                    && $0.decode(TaggedJSON<SessionJSON>.self)?.payload.state == "ended"
            }
        }
    }

    @Test(
        "a broker that lost what it kept (started again without its persistence file): the daemon announces every strap, its availability and its state again as it reconnects"
    )
    func announcedAgainAfterTheBrokerForgot() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(moreSettings: Self.settings(broker))
            defer { daemon.stop() }
            let first = try await MQTTSubscriber(broker: broker, filters: ["homeassistant/#"])
            try await eventually("15 discovery configs") {
                Set(first.messages.filter { $0.topic.hasSuffix("/config") }.map(\.topic)).count == 15
            }
            first.stop()
            let connects = daemon.process.output.filter { $0.contains("MQTT connected") }.count
            broker.stop()
            for file in try FileManager.default.contentsOfDirectory(atPath: broker.directory.path)
            where file.hasSuffix(".db") {
                try FileManager.default.removeItem(at: broker.directory.appendingPathComponent(file))
            }
            try await broker.start()
            try await eventually("the daemon connected again") {
                daemon.process.output.filter { $0.contains("MQTT connected") }.count > connects
            }
            // Only what the broker keeps now: a subscriber gets it at once, retained.
            let late = try await MQTTSubscriber(
                broker: broker, filters: ["homeassistant/#", "hrbridge/gym/sensor/+/availability"])
            defer { late.stop() }
            try await eventually("the configs and availabilities kept again") {
                let retained = late.messages.filter(\.retain)
                return Set(retained.filter { $0.topic.hasSuffix("/config") }.map(\.topic)).count == 15
                    && Set(retained.filter { $0.topic.hasSuffix("/availability") }.map(\.topic)).count == 3
            }
        }
    }

    @Test(
        "Home Assistant's birth message on its own topic (birth_topic, not derived from a custom discovery prefix): the configs go out again"
    )
    func birthTopicOfItsOwn() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(
                moreSettings: Self.settings(broker) + "\ndiscovery_prefix = \"ha\"\nbirth_topic = \"hass/status\"")
            defer { daemon.stop() }
            let config = "ha/sensor/gym_c0ffee000001/heart_rate/config"
            let reader = try await MQTTSubscriber(broker: broker, filters: [config])
            defer { reader.stop() }
            try await reader.waitFor("the retained config") { $0.topic == config }
            // Before, the bridge listened on "<prefix>/status" (ha/status) and missed this.
            try await mqttPublish(broker: broker, topic: "hass/status", payload: "online")
            try await eventually("the configs published again") { reader.messages(on: config).count >= 2 }
        }
    }

    @Test func aForgottenStrapLeavesHomeAssistantAndItsRetainedTopicsAreCleared() async throws {
        try await withMosquitto { broker in
            // No [[sensors]]: the simulator's straps are the user's own, none configured, so one can be forgotten.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-forget-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let config = directory.appendingPathComponent("config.toml").path
            try Data(
                """
                [adapter]
                kind = "mock"
                speed = 5
                [store]
                path = "\(directory.path)/store.sqlite"
                [api]
                socket = "\(directory.path)/api.sock"
                \(Self.settings(broker))
                """.utf8
            ).write(to: URL(fileURLWithPath: config))
            let api = APIClient(endpoint: .unix(directory.appendingPathComponent("api.sock").path))
            let daemon = try await Spawned.startPeer(
                DaemonUnderTest.daemonBinary, ["--config", config], label: "daemon"
            ) {
                _ in
                guard let reply = try? await api.send(.GET, "/v1/health"), reply.status == 200 else { return false }
                return reply.decode(HealthJSON.self)?.sensorsStreaming ?? 0 > 0
            }
            defer { daemon.stop() }
            let sensors = try await api.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
            let address = try #require(sensors.first?.address)
            let id = MQTTTopics.objectID(address)
            let reader = try await MQTTSubscriber(
                broker: broker, filters: ["homeassistant/#", "hrbridge/gym/sensor/#"])
            defer { reader.stop() }
            let configTopic = "homeassistant/sensor/gym_\(id)/heart_rate/config"
            try await reader.waitFor("the strap announced") { $0.topic == configTopic && !$0.payload.isEmpty }
            let forget = try await api.send(.DELETE, "/v1/sensors/\(address)")
            #expect((200..<300).contains(forget.status))
            try await reader.waitFor("its config removed") { $0.topic == configTopic && $0.payload.isEmpty }
            try await reader.waitFor("its retained state cleared") {
                $0.topic == "hrbridge/gym/sensor/\(id)/state" && $0.payload.isEmpty
            }
            // A later client finds nothing of it.
            let late = try await MQTTSubscriber(broker: broker, filters: ["homeassistant/#", "hrbridge/gym/sensor/#"])
            defer { late.stop() }
            try await late.waitFor("another strap's retained config") { $0.topic.hasSuffix("/config") }
            #expect(!late.messages.contains { $0.topic.contains(id) })
        }
    }

    @Test(
        "a strap an earlier run announced, forgotten through the API by a run that never announced it: its Home Assistant config and retained state are cleared"
    )
    func forgettingClearsWhatAnEarlierRunLeft() async throws {
        try await withMosquitto { broker in
            let broadcaster = "C0:FF:EE:00:00:04"
            let id = MQTTTopics.objectID(broadcaster)
            let config = "homeassistant/sensor/gym_\(id)/heart_rate/config"
            let state = "hrbridge/gym/sensor/\(id)/state"
            // What an earlier run left at the broker, when this strap had a link.
            try await mqttPublish(broker: broker, topic: config, payload: #"{"name": "Heart rate"}"#, retain: true)
            try await mqttPublish(broker: broker, topic: state, payload: #"{"state": "ready"}"#, retain: true)
            // This run only hears its broadcasts: never connected, never configured, never announced.
            let steady = #""segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]"#
            let scenario =
                #"{"version": 1, "seed": 3, "straps": [{"name": "Strap 1", "address": "\#(DaemonUnderTest.straps[0])", \#(steady)}, "#
                + #"{"name": "Broadcaster", "address": "\#(broadcaster)", "broadcastOnly": true, \#(steady)}]}"#
            let daemon = try await DaemonUnderTest(
                moreSettings: Self.settings(broker), scenario: scenario, streaming: nil, sensorsSection: "")
            defer { daemon.stop() }
            try await eventually("the broadcaster heard") {
                let sensors = try await daemon.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
                return sensors.contains { $0.address == broadcaster && $0.heartRate != nil }
            }
            let reader = try await MQTTSubscriber(broker: broker, filters: [config, state])
            defer { reader.stop() }
            try await reader.waitFor("the earlier run's config") { $0.topic == config && !$0.payload.isEmpty }
            let forget = try await daemon.unix.send(.DELETE, "/v1/sensors/\(broadcaster)")
            #expect((200..<300).contains(forget.status))
            try await reader.waitFor("its config removed") { $0.topic == config && $0.payload.isEmpty }
            try await reader.waitFor("its retained state cleared") { $0.topic == state && $0.payload.isEmpty }
        }
    }

    @Test(
        "a strap that leaves the list and comes back numbers its frames from 0: a gateway keeps no counter for straps gone"
    )
    func aStrapBackAfterItWasForgottenNumbersFromZero() async throws {
        try await withMosquitto { broker in
            let broadcaster = "C0:FF:EE:00:00:04"
            let steady = #""segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]"#
            let scenario =
                #"{"version": 1, "seed": 3, "straps": [{"name": "Strap 1", "address": "\#(DaemonUnderTest.straps[0])", \#(steady)}, "#
                + #"{"name": "Broadcaster", "address": "\#(broadcaster)", "broadcastOnly": true, \#(steady)}]}"#
            let daemon = try await DaemonUnderTest(
                moreSettings: Self.settings(broker) + "\npublish_measurements = true", scenario: scenario,
                streaming: nil, sensorsSection: "")
            defer { daemon.stop() }
            // Every frame published is journaled first, with its sequence number.
            let journal = daemon.directory.appendingPathComponent("measurements.journal").path
            func sequences() -> [UInt32] {
                var records = JournalReader(path: journal)
                var numbers: [UInt32] = []
                while let record = records.next() {
                    guard record.address == broadcaster,
                        let frame = try? RemoteMeasurement(payload: Array(record.envelope))
                    else { continue }
                    numbers.append(frame.sequence)
                }
                return numbers
            }
            try await eventually("the broadcaster's frames published") { sequences().count >= 3 }
            let forget = try await daemon.unix.send(.DELETE, "/v1/sensors/\(broadcaster)")
            #expect((200..<300).contains(forget.status))
            // Still broadcasting, it is heard and listed anew; followed again, its numbers start over.
            try await eventually("the broadcaster listed anew") {
                let sensors = try await daemon.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
                return sensors.contains { $0.address == broadcaster }
            }
            let connect = try await daemon.unix.send(.POST, "/v1/sensors/\(broadcaster)/connect")
            #expect((200..<300).contains(connect.status), "\(String(decoding: connect.body, as: UTF8.self))")
            do {
                try await eventually("the broadcaster's frames numbered afresh") {
                    let numbers = sequences()
                    return numbers.indices.dropFirst().contains { numbers[$0] < numbers[$0 - 1] }
                }
            } catch {
                let listed = try await daemon.unix.send(.GET, "/v1/sensors")
                Issue.record(
                    "journaled \(sequences()); listed \(String(decoding: listed.body, as: UTF8.self)) \(daemon.process.output.suffix(30).joined(separator: "\n"))"
                )
                throw error
            }
            let numbers = sequences()
            let restart = try #require(numbers.indices.dropFirst().first { numbers[$0] < numbers[$0 - 1] })
            #expect(numbers[restart] == 0, "\(numbers)")
            #expect(numbers[..<restart].elementsEqual(0..<UInt32(restart)), "\(numbers)")
        }
    }

    @Test func aRetainedCommandIsRefusedAndACommandDeliveredAgainRunsOnce() async throws {
        try await withMosquitto { broker in
            // Left at the broker before the daemon starts: a retained command reaches every new subscriber.
            try await mqttPublish(
                broker: broker, topic: "hrbridge/gym/cmd/session/start",
                payload: #"{"requestId": "kept", "sensors": ["C0:FF:EE:00:00:01"]}"#, retain: true)
            let reader = try await MQTTSubscriber(broker: broker, filters: ["hrbridge/gym/cmd/response"])
            defer { reader.stop() }
            let daemon = try await DaemonUnderTest(moreSettings: Self.settings(broker))
            defer { daemon.stop() }
            func reply(_ message: MQTTSubscriber.Received) -> CommandReplyJSON? {
                message.decode(CommandReplyJSON.self)
            }
            let refused = try #require(
                reply(try await reader.waitFor("the retained command's refusal") { reply($0)?.requestId == "kept" }))
            #expect(refused.ok == false && refused.error?.code == "retained_command", "\(refused)")
            #expect(try await daemon.unix.send(.GET, "/v1/sessions").list("sessions", of: SessionJSON.self).isEmpty)

            // The same request twice (as a QoS 1 redelivery would be): one session, the same answer twice.
            let command = #"{"requestId": "once", "sensors": ["C0:FF:EE:00:00:01"]}"#
            try await mqttPublish(broker: broker, topic: "hrbridge/gym/cmd/session/start", payload: command)
            try await reader.waitFor("the first answer") { reply($0)?.requestId == "once" }
            try await mqttPublish(broker: broker, topic: "hrbridge/gym/cmd/session/start", payload: command)
            try await eventually("the second answer") {
                reader.messages(on: "hrbridge/gym/cmd/response").filter { reply($0)?.requestId == "once" }.count == 2
            }
            let answers = reader.messages(on: "hrbridge/gym/cmd/response").compactMap(reply).filter {
                $0.requestId == "once"
            }
            #expect(answers.allSatisfy { $0.ok == true }, "the second is the first's answer, not a 409: \(answers)")
            #expect(Set(answers.compactMap { $0.session?.id }).count == 1)
            let sessions = try await daemon.unix.send(.GET, "/v1/sessions").list("sessions", of: SessionJSON.self)
            #expect(sessions.count == 1)
        }
    }

    @Test func commandsAreRefusedUnlessEnabled() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(moreSettings: Self.settings(broker, commands: false))
            defer { daemon.stop() }
            let reader = try await MQTTSubscriber(broker: broker, filters: ["hrbridge/gym/#"])
            defer { reader.stop() }
            try await reader.waitFor("the node online") { $0.topic == "hrbridge/gym/status" && $0.payload == "online" }
            try await mqttPublish(
                broker: broker, topic: "hrbridge/gym/cmd/session/start",
                payload: #"{"sensors": ["C0:FF:EE:00:00:01"]}"#)
            // The daemon does not even subscribe: the command sits unanswered; the API shows no session.
            try await reader.waitFor("the command itself") { $0.topic == "hrbridge/gym/cmd/session/start" }
            let sessions = try await daemon.unix.send(.GET, "/v1/sessions").list("sessions", of: SessionJSON.self)
            #expect(sessions.isEmpty)
            #expect(reader.messages(on: "hrbridge/gym/cmd/response").isEmpty)
        }
    }

    @Test func aBrokerRestartMidSessionLosesNoEvent() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(moreSettings: Self.settings(broker))
            defer { daemon.stop() }
            let reader = try await MQTTSubscriber(
                broker: broker, filters: ["hrbridge/gym/session/+/event"], clientID: "events-reader", persistent: true)
            defer { reader.stop() }
            let created = try await daemon.unix.send(
                .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[0]]])
            let session = try created.decoded(SessionJSON.self).id.wire
            var laps = 0
            for round in 0..<3 {
                for _ in 0..<4 {
                    let lap = try await daemon.unix.send(.POST, "/v1/sessions/\(session)/lap", json: [String: Any]())
                    #expect(lap.status == 200)
                    laps += 1
                }
                if round == 0 { try await broker.restart() }
                if round == 1 {
                    broker.stop()
                    // Laps while the broker is away wait in the daemon's outbox.
                    for _ in 0..<4 {
                        _ = try await daemon.unix.send(.POST, "/v1/sessions/\(session)/lap", json: [String: Any]())
                        laps += 1
                    }
                    try await broker.start()
                }
            }
            let total = laps
            try await eventually("every lap event") {
                reader.messages.filter { $0.payload.contains(#""lap""#) }.map(\.payload).count >= total
            }
            let distinct = Set(reader.messages.filter { $0.payload.contains(#""lap""#) }.map(\.payload))
            #expect(distinct.count == total, "each lap once (a duplicate after a reconnect is allowed, a loss is not)")
        }
    }

    @Test("a gateway's journal reaches the disk while it runs: killed without a word, it keeps the frames it sent")
    func journalIsWrittenWhileRunning() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(
                moreSettings: Self.settings(broker) + "\npublish_measurements = true")
            defer { daemon.stop() }
            let reader = try await MQTTSubscriber(broker: broker, filters: ["hrbridge/gym/sensor/+/measurement"])
            defer { reader.stop() }
            try await eventually("frames on the broker") { reader.messages.count >= 20 }
            // Each of them was journaled before it was published.
            let published = reader.messages.count
            let path = daemon.directory.appendingPathComponent("measurements.journal").path
            try await eventually("the frames published so far in the journal on disk") {
                var records = JournalReader(path: path)
                var count = 0
                while records.next() != nil { count += 1 }
                return count >= published
            }
            kill(daemon.process.pid, SIGKILL)
            _ = await daemon.process.wait()
            let kept = try MeasurementJournal(path: path).entries(since: .distantPast)
            #expect(kept.count >= published)
            #expect(Set(kept.map(\.address)).isSubset(of: Set(DaemonUnderTest.straps)))
        }
    }

    @Test(
        "a hub's replay request: served from the journal once (delivered again: not served twice), a malformed one refused and counted, none taken for a session command"
    )
    func replayRequestsAreServedOnce() async throws {
        try await withMosquitto { broker in
            let daemon = try await DaemonUnderTest(
                speed: 1, moreSettings: Self.settings(broker) + "\npublish_measurements = true")
            defer { daemon.stop() }
            let straps = DaemonUnderTest.straps
            let reader = try await MQTTSubscriber(
                broker: broker,
                filters: [
                    "hrbridge/gym/sensor/+/measurement", "hrbridge/gym/sensor/+/backfill", "hrbridge/gym/cmd/response",
                ])
            defer { reader.stop() }
            try await eventually("frames of both straps on the broker") {
                let topics = Set(reader.messages.map(\.topic))
                return straps.prefix(2).allSatisfy {
                    topics.contains("hrbridge/gym/sensor/\(MQTTTopics.objectID($0))/measurement")
                }
            }
            func backfills(_ address: String) -> Int {
                reader.messages(on: "hrbridge/gym/sensor/\(MQTTTopics.objectID(address))/backfill").count
            }
            func request(_ address: String) -> String {
                let now = Date()
                return String(
                    decoding: ReplayRequest(address: address, from: now.addingTimeInterval(-120), to: now)
                        .payload(topic: ReplayRequest.topic(node: "gym"), signer: nil), as: UTF8.self)
            }
            let topic = ReplayRequest.topic(node: "gym")
            try await mqttPublish(broker: broker, topic: topic, payload: "send me everything")
            let first = request(straps[0])
            try await mqttPublish(broker: broker, topic: topic, payload: first)
            try await eventually("strap 1's frames sent again") { backfills(straps[0]) >= 1 }
            try await mqttPublish(broker: broker, topic: topic, payload: first)
            // Requests are handled in order: once the second strap's is served, the repeat was seen.
            try await mqttPublish(broker: broker, topic: topic, payload: request(straps[1]))
            try await eventually("strap 2's frames sent again") { backfills(straps[1]) >= 1 }
            let metrics = String(decoding: try await daemon.unix.send(.GET, "/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"hrbridge_mqtt_replay_requests_total{result="served"} 2"#), "\(metrics)")
            #expect(metrics.contains(#"hrbridge_mqtt_replay_requests_total{result="repeated"} 1"#))
            #expect(metrics.contains(#"hrbridge_mqtt_replay_requests_total{result="refused"} 1"#))
            #expect(backfills(straps[0]) == 1, "served once")
            #expect(reader.messages(on: "hrbridge/gym/cmd/response").isEmpty, "no command ran")
            #expect(daemon.process.output.contains { $0.contains("replay request refused") })
        }
    }

    @Test(
        "a paced replay (minutes of backfill at 1 frame a second) holds up neither a command nor a stop: the command is answered while requests wait, and a stop sends no other batch"
    )
    func pacedReplayLeavesCommandsAndStopFree() async throws {
        try await withMosquitto { broker in
            // 20 straps (a frame a second each) at 20 × speed: 150 s of their frames is 3,000
            // journaled, which the pace asked for (1 a second, after a 50-frame burst) takes most
            // of an hour of the gateway's clock to send: minutes of the test's.
            let straps = (1...20).map { String(format: "C0:FF:EE:50:00:%02X", $0) }
            let scenario =
                #"{"version": 1, "seed": 3, "straps": ["#
                + straps.map {
                    #"{"name": "Strap", "address": "\#($0)", "segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]}"#
                }.joined(separator: ", ") + "]}"
            let daemon = try await DaemonUnderTest(
                speed: 20,
                moreSettings: Self.settings(broker)
                    + "\ndiscovery = false\npublish_measurements = true\nbackfill_rate = 1",
                scenario: scenario, streaming: 20,
                sensorsSection: straps.map { "[[sensors]]\naddress = \"\($0)\"\n" }.joined(separator: "\n"))
            defer { daemon.stop() }
            let reader = try await MQTTSubscriber(
                broker: broker, filters: ["hrbridge/gym/sensor/+/backfill", "hrbridge/gym/cmd/response"])
            defer { reader.stop() }
            func lastFrames() async throws -> [String: Date] {
                let list = try await daemon.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
                return Dictionary(list.compactMap { status in status.lastMeasurement.map { (status.address, $0) } }) {
                    max($0, $1)
                }
            }
            // Times on the gateway's (simulated) clock, as its journal dates the frames.
            var first: [String: Date] = [:]
            try await eventually("every strap's first frame") {
                first = try await lastFrames()
                return first.count == straps.count
            }
            var last = first
            try await eventually("150 s of every strap's frames journaled") {
                last = try await lastFrames()
                return straps.allSatisfy { address in
                    guard let from = first[address], let to = last[address] else { return false }
                    return to.timeIntervalSince(from) >= 150
                }
            }
            let topic = ReplayRequest.topic(node: "gym")
            for address in straps {
                let request = ReplayRequest(
                    address: address, from: first[address]!.addingTimeInterval(-1), to: last[address]!)
                try await mqttPublish(
                    broker: broker, topic: topic,
                    payload: String(decoding: request.payload(topic: topic, signer: nil), as: UTF8.self))
            }
            /// Requests served so far, as the gateway's log lines count them.
            func served() -> Int {
                daemon.process.output.filter { $0.contains("journal sent again at a hub's request") }.reduce(0) {
                    total, line in
                    total
                        + (line.split(separator: " ").first { $0.hasPrefix("requests=") }
                            .flatMap { Int($0.dropFirst("requests=".count)) } ?? 0)
                }
            }
            try await reader.waitFor("the first backfill") { $0.topic.hasSuffix("/backfill") }
            try await mqttPublish(
                broker: broker, topic: "hrbridge/gym/cmd/session/start",
                payload: #"{"requestId": "during-replay", "sensors": ["\#(straps[0])"]}"#)
            let reply = try await reader.waitFor("the command's reply") { $0.payload.contains("during-replay") }
            #expect(reply.decode(CommandReplyJSON.self)?.ok == true, "\(reply.payload)")
            #expect(served() < straps.count, "answered while requests still wait for the pace")

            // Batches go out 5 s (of the test's time) or more apart: stopped just after one, the
            // gateway sends no other.
            func backfills() -> Int { reader.messages.filter { $0.topic.hasSuffix("/backfill") }.count }
            let before = backfills()
            try await eventually("another batch sent") { backfills() > before }
            let sent = backfills()
            kill(daemon.process.pid, SIGTERM)
            let status = await daemon.process.wait()
            #expect(status == 0, "\(daemon.process.report)")
            // Published after the gateway's end: the reader gets it after everything the gateway sent.
            try await mqttPublish(broker: broker, topic: "hrbridge/gym/cmd/response", payload: "after the exit")
            try await reader.waitFor("the message after the exit") { $0.payload == "after the exit" }
            #expect(backfills() == sent, "the stop ended the pass's wait: no batch after it")
            #expect(served() < straps.count, "the stop ended the pass rather than waiting it out")
            #expect(daemon.process.output.contains { $0.contains("replay requests not served yet") })
        }
    }

    @Test(
        "a replay pass cut off by an acknowledgement that never comes, the broker still connected, is tried again 5 s later and served"
    )
    func replayRetriedAfterAnAcknowledgementTimesOut() async throws {
        try await withMosquitto { broker in
            // Between the gateway and the broker: withholds the acknowledgement of its first backfill.
            let script = packageRoot.appendingPathComponent("Tests/Fixtures/mqtt/puback_withholder.py").path
            let proxy = try await Spawned.startPeer(
                venvPython, [script, "--broker-port", String(broker.port), "--suffix", "/backfill"],
                label: "PUBACK withholder"
            ) { $0.output.contains { $0.contains("\"ready\"") } }
            defer { proxy.stop() }
            struct Ready: Decodable { var port: Int }
            let port = try #require(
                proxy.output.lazy.compactMap { try? JSONDecoder().decode(Ready.self, from: Data($0.utf8)) }.first?.port)
            let daemon = try await DaemonUnderTest(
                speed: 1,
                moreSettings: Self.settings(broker).replacingOccurrences(
                    of: ":\(broker.port)\"", with: ":\(port)\"") + "\npublish_measurements = true")
            defer { daemon.stop() }
            let strap = DaemonUnderTest.straps[0]
            let reader = try await MQTTSubscriber(
                broker: broker, filters: ["hrbridge/gym/sensor/\(MQTTTopics.objectID(strap))/backfill"])
            defer { reader.stop() }
            try await eventually("the strap's frames journaled") {
                let list = try await daemon.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
                return (list.first { $0.address == strap }?.framesDecoded ?? 0) >= 3
            }
            let now = Date()
            let topic = ReplayRequest.topic(node: "gym")
            try await mqttPublish(
                broker: broker, topic: topic,
                payload: String(
                    decoding: ReplayRequest(address: strap, from: now.addingTimeInterval(-120), to: now)
                        .payload(topic: topic, signer: nil), as: UTF8.self))
            try #require(
                await proxy.waitForLine { $0.contains("withheld") } != nil, "the first batch's acknowledgement withheld"
            )
            // The client waits 30 s for an acknowledgement.
            let cutOff = await daemon.process.waitForLine(timeout: HarnessDeadline.condition + .seconds(30)) {
                $0.contains("replay requests not served yet")
            }
            #expect(cutOff != nil, "the pass cut off by the acknowledgement's timeout")
            let served = await daemon.process.waitForLine { $0.contains("journal sent again at a hub's request") }
            #expect(served != nil, "served again without a reconnect: \(daemon.process.output.suffix(10))")
            #expect(daemon.process.output.filter { $0.contains("MQTT connected") }.count == 1, "never reconnected")
            // The log line comes as the daemon publishes; the subscriber gets the batch a moment later.
            try await eventually("the batch sent twice: its first send was taken by the broker") {
                reader.messages.count >= 2
            }
        }
    }

    @Test func metricsAreValidPrometheusTextAndMoveAsFramesArrive() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        /// A sample as parse.py prints it.
        struct Sample: Decodable {
            var name: String
            var labels: [String: String]
            var value: Double
        }
        func scrape() async throws -> [Sample] {
            let reply = try await daemon.unix.send(.GET, "/metrics")
            #expect(reply.status == 200)
            let file = daemon.directory.appendingPathComponent("metrics-\(UUID().uuidString).txt")
            try reply.body.write(to: file)
            let parser = try Spawned(
                venvPython, [packageRoot.appendingPathComponent("Tests/Fixtures/metrics/parse.py").path, file.path])
            let status = await parser.wait()
            #expect(status == 0, "prometheus-client parses it: \(parser.report)")
            // (A quantile with no observation yet is NaN, which JSON cannot hold: such a line is skipped.)
            return parser.output.compactMap { try? JSONText.decode(Sample.self, from: Data($0.utf8)) }
        }
        func value(_ samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { sample in
                sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
            }?.value
        }
        var first = try await scrape()
        try await eventually("the first frames counted") {
            first = try await scrape()
            return value(first, "hrbridge_frames_decoded_total") ?? 0 > 0
        }
        let decoded = try #require(value(first, "hrbridge_frames_decoded_total"))
        #expect(value(first, "hrbridge_connections_total") ?? 0 >= 3)
        #expect(value(first, "hrbridge_sensors_streaming") == 3)
        #expect(value(first, "hrbridge_adapter_links", ["adapter": "mock"]) == 3)
        #expect(value(first, "hrbridge_sessions", ["state": "running"]) == 0)
        let created = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[0]]])
        #expect(created.status == 201)
        var later = first
        try await eventually("the frame counter to move and a refused frame to be counted") {
            later = try await scrape()
            return (value(later, "hrbridge_frames_decoded_total") ?? 0) > decoded
                && later.contains { $0.name == "hrbridge_frames_refused_total" && $0.value > 0 }
        }
        #expect(value(later, "hrbridge_sessions", ["state": "running"]) == 1)
        try await eventually("a store write timed") {
            value(try await scrape(), "hrbridge_store_write_seconds_count") ?? 0 > 0
        }

        // On TCP, metrics are data: a token is needed, the read role is enough.
        let anonymous = try await daemon.tcp(nil).send(.GET, "/metrics")
        #expect(anonymous.status == 401)
        let reader = try await daemon.tcp(DaemonUnderTest.readToken).send(.GET, "/metrics")
        #expect(reader.status == 200)
    }
}
