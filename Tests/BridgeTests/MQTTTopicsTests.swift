import Bridge
import Foundation
import MQTT
import Testing
import Wire

@Suite("A bridge's MQTT topics, through Wire's Topic")
struct MQTTTopicsTests {
    let topics = MQTTTopics(node: "gym", discoveryPrefix: "ha")
    let session = UUID(uuidString: "6F1C2A3B-4D5E-4F60-8172-8394A5B6C7D8")!

    @Test("the topics docs/mqtt.md lists")
    func strings() {
        #expect(topics.root == "hrbridge/gym")
        #expect(topics.status == "hrbridge/gym/status")
        #expect(topics.commandFilter == "hrbridge/gym/cmd/#")
        #expect(topics.commandPrefix == "hrbridge/gym/cmd/")
        #expect(topics.response == "hrbridge/gym/cmd/response")
        // Home Assistant's birth topic is its own setting, not derived from the discovery prefix.
        #expect(topics.homeAssistantStatus == "homeassistant/status")
        #expect(
            MQTTTopics(node: "gym", discoveryPrefix: "ha", birthTopic: "ha/status").homeAssistantStatus == "ha/status")
        #expect(topics.sensor("C0:FF:EE:00:00:01", .availability) == "hrbridge/gym/sensor/c0ffee000001/availability")
        #expect(topics.peripheral("hci1") == "hrbridge/gym/peripheral/hci1")
        #expect(topics.session(session, .hrv) == "hrbridge/gym/session/6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8/hrv")
        #expect(
            topics.discovery("binary_sensor", address: "C0:FF:EE:00:00:01", object: "connection")
                == "ha/binary_sensor/gym_c0ffee000001/connection/config")
    }

    @Test(
        "a node's name in Home Assistant's entity ids: lowercase letters, digits and single underscores between them, as Home Assistant checks them",
        arguments: [
            ("gym", "gym"), ("room-1", "room_1"), ("Gym--1_", "gym_1"), ("_a", "a"), ("xn--x", "xn_x"),
            ("-", "hrbridge"),
            ("9lives", "9lives"), ("A_B-c", "a_b_c"),
        ])
    func entityIDs(node: String, expected: String) throws {
        let topics = MQTTTopics(node: node)
        let configs = HomeAssistantDiscovery.configs(
            for: MQTTSensorState(address: "C0:FF:EE:00:00:01"), topics: topics, expireAfter: 30)
        #expect(configs.count == 5)
        // Home Assistant's own check of an entity id (homeassistant/core.py, valid_entity_id).
        let valid = try NSRegularExpression(pattern: #"^(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$"#)
        for config in configs {
            let object = try JSONSerialization.jsonObject(with: Data(config.payload)) as? [String: Any]
            let id = try #require(object?["default_entity_id"] as? String)
            #expect(id.split(separator: ".")[1].hasPrefix("\(expected)_c0ffee000001_"), "\(id)")
            #expect(valid.firstMatch(in: id, range: NSRange(id.startIndex..., in: id)) != nil, "\(id)")
        }
    }

    @Test(
        "commands: this node's, well formed",
        arguments: [
            ("hrbridge/gym/cmd/session/start", MQTTTopics.Command.start),
            ("hrbridge/gym/cmd/session/abc/lap", .action("lap", session: "abc")),
        ])
    func commands(topic: String, command: MQTTTopics.Command) {
        #expect(topics.command(from: topic) == .success(command))
    }

    @Test(
        "not commands: another node's, the reply topic, other shapes, wildcards",
        arguments: [
            "hrbridge/pool/cmd/session/start", "hrbridge/gym/cmd/response", "hrbridge/gym/cmd/reboot",
            "hrbridge/gym/cmd/session//lap", "hrbridge/gym/cmd/session/a/b/c", "hrbridge/gym/cmd/session/+/lap",
        ])
    func notCommands(topic: String) {
        guard case .failure(let error) = topics.command(from: topic) else {
            Issue.record("\(topic) read as a command")
            return
        }
        #expect(error.topic == topic)
    }
}
