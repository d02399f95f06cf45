import Foundation
import Sensors
import Testing
import Wire

private let session = UUID(uuidString: "6F1C2A3B-4D5E-4F60-8172-8394A5B6C7D8")!

@Suite("MQTT topics: built and parsed in one place")
struct TopicTests {
    /// Every topic the project uses, with its text.
    static let topics: [(String, Topic)] = [
        ("hrbridge/gym/status", .status(node: "gym")),
        ("hrbridge/gym/sensor/c0ffee000001/state", .sensor(node: "gym", address: "C0:FF:EE:00:00:01", leaf: .state)),
        (
            "hrbridge/room-1/sensor/c0ffee000001/availability",
            .sensor(node: "room-1", address: "C0:FF:EE:00:00:01", leaf: .availability)
        ),
        (
            "hrbridge/room_2/sensor/a1b2c3d4e5f6/measurement",
            .sensor(node: "room_2", address: "A1:B2:C3:D4:E5:F6", leaf: .measurement)
        ),
        (
            "hrbridge/gym/sensor/c0ffee000001/backfill",
            .sensor(node: "gym", address: "C0:FF:EE:00:00:01", leaf: .backfill)
        ),
        ("hrbridge/gym/peripheral/hci1", .peripheral(node: "gym", adapter: "hci1")),
        (
            "hrbridge/gym/session/6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8/state",
            .session(node: "gym", id: session, leaf: .state)
        ),
        (
            "hrbridge/gym/session/6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8/event",
            .session(node: "gym", id: session, leaf: .event)
        ),
        (
            "hrbridge/gym/session/6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8/zone",
            .session(node: "gym", id: session, leaf: .zone)
        ),
        (
            "hrbridge/gym/session/6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8/plan",
            .session(node: "gym", id: session, leaf: .plan)
        ),
        (
            "hrbridge/gym/session/6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8/hrv",
            .session(node: "gym", id: session, leaf: .hrv)
        ),
        ("hrbridge/gym/cmd/session/start", .startSession(node: "gym")),
        ("hrbridge/gym/cmd/session/abc/lap", .sessionCommand(node: "gym", session: "abc", action: "lap")),
        ("hrbridge/gym/cmd/session/start/stop", .sessionCommand(node: "gym", session: "start", action: "stop")),
        ("hrbridge/gym/cmd/response", .commandResponse(node: "gym")),
        ("homeassistant/status", .homeAssistantStatus(prefix: "homeassistant")),
        ("ha/discovery/status", .homeAssistantStatus(prefix: "ha/discovery")),
        (
            "homeassistant/sensor/gym_c0ffee000001/heart_rate/config",
            .discovery(
                prefix: "homeassistant", component: "sensor", node: "gym", address: "C0:FF:EE:00:00:01",
                object: "heart_rate")
        ),
        (
            "ha/x/binary_sensor/my_gym_c0ffee000001/connection/config",
            .discovery(
                prefix: "ha/x", component: "binary_sensor", node: "my_gym", address: "C0:FF:EE:00:00:01",
                object: "connection")
        ),
    ]

    @Test("builds each topic's text", arguments: topics)
    func builds(text: String, topic: Topic) {
        #expect(topic.string == text)
        #expect(topic.description == text)
    }

    @Test("parses each topic's text back to the topic", arguments: topics)
    func parses(text: String, topic: Topic) throws {
        #expect(try Topic.parse(text) == topic)
        #expect(Topic(text) == topic)
        #expect(Topic(topic.string)?.string == text, "round trip")
    }

    @Test("a sensor id reads in either case and is written lower case")
    func sensorIDCase() {
        let topic = Topic("hrbridge/gym/sensor/C0FFEE00000A/state")
        #expect(topic == .sensor(node: "gym", address: "C0:FF:EE:00:00:0A", leaf: .state))
        #expect(topic?.string == "hrbridge/gym/sensor/c0ffee00000a/state")
    }

    @Test(
        "refuses what is no topic of the project, saying why",
        arguments: [
            ("", TopicError.emptySegment(0)),
            ("hrbridge//status", .emptySegment(1)),
            ("/hrbridge/gym/status", .emptySegment(0)),
            ("hrbridge/gym/status/", .emptySegment(3)),
            ("hrbridge/gym/sensor//state", .emptySegment(3)),
            ("hrbridge/+/status", .reservedCharacter("+")),
            ("hrbridge/gym/#", .reservedCharacter("#")),
            ("hrbridge/room+1/sensor/c0ffee000001/measurement", .reservedCharacter("+")),
            ("hrbridge/gym/cmd/session/a#b/lap", .reservedCharacter("#")),
            ("hrbridge/gym\0/status", .reservedCharacter("\0")),
            ("hrbridge/\(String(repeating: "x", count: 250))/status", .tooLong(266)),
            ("hrbridge/\(String(repeating: "x", count: 65))/status", .badSegment(String(repeating: "x", count: 65))),
            ("hrbridge/gym.lan/status", .badSegment("gym.lan")),
            ("hrbridge/gÿm/status", .badSegment("gÿm")),
            ("hrbridge/gym/sensor/not-an-address/measurement", .badSegment("not-an-address")),
            ("hrbridge/gym/sensor/c0ffee00000/measurement", .badSegment("c0ffee00000")),
            ("hrbridge/gym/sensor/c0ffee00000g/measurement", .badSegment("c0ffee00000g")),
            ("hrbridge/gym/sensor/c0ffee000001/battery", .badSegment("battery")),
            ("hrbridge/gym/session/not-a-uuid/state", .badSegment("not-a-uuid")),
            ("hrbridge/gym/session/6f1c2a3b-4d5e-4f60-8172-8394a5b6c7d8/laps", .badSegment("laps")),
            ("hrbridge/gym", .unknownShape("hrbridge/gym")),
            ("hrbridge/gym/status/extra", .unknownShape("hrbridge/gym/status/extra")),
            ("hrbridge/gym/sensor/c0ffee000001", .unknownShape("hrbridge/gym/sensor/c0ffee000001")),
            ("hrbridge/gym/cmd/reboot", .unknownShape("hrbridge/gym/cmd/reboot")),
            ("hrbridge/gym/cmd/session/abc", .unknownShape("hrbridge/gym/cmd/session/abc")),
            ("hrbridge/gym/cmd/session/a/b/c", .unknownShape("hrbridge/gym/cmd/session/a/b/c")),
            ("hrbridge/gym/peripheral", .unknownShape("hrbridge/gym/peripheral")),
            ("homeassistant", .unknownShape("homeassistant")),
            (
                "homeassistant/sensor/gym_c0ffee000001/heart_rate",
                .unknownShape("homeassistant/sensor/gym_c0ffee000001/heart_rate")
            ),
            ("homeassistant/sensor/gymc0ffee000001/heart_rate/config", .badSegment("gymc0ffee000001")),
            ("homeassistant/sensor/gym_c0ffee/heart_rate/config", .badSegment("gym_c0ffee")),
            ("homeassistant/sensor/_c0ffee000001/heart_rate/config", .badSegment("_c0ffee000001")),
            ("homeassistant/sen.sor/gym_c0ffee000001/heart_rate/config", .badSegment("sen.sor")),
        ])
    func refuses(text: String, error: TopicError) {
        #expect(throws: error) { try Topic.parse(text) }
        #expect(Topic(text) == nil)
    }

    @Test("the longest topic read is read; a byte more is refused")
    func lengthLimit() {
        let node = "gym"
        let fixed = "hrbridge/\(node)/cmd/session//x".utf8.count
        let fits = "hrbridge/\(node)/cmd/session/\(String(repeating: "s", count: Topic.maximumLength - fixed))/x"
        #expect(fits.utf8.count == Topic.maximumLength)
        #expect(Topic(fits) != nil)
        #expect(throws: TopicError.tooLong(Topic.maximumLength + 1)) { try Topic.parse(fits + "x") }
    }

    @Test("sensor ids and addresses; node names")
    func names() {
        #expect(Topic.objectID("C0:FF:EE:00:00:01") == "c0ffee000001")
        #expect(Topic.address(fromObjectID: "c0ffee000001") == "C0:FF:EE:00:00:01")
        #expect(Topic.address(fromObjectID: "c0ffee00000") == nil)
        #expect(Topic.address(fromObjectID: "c0ffee00000g") == nil)
        #expect(Topic.address(fromObjectID: "+") == nil)
        #expect(Topic.address(fromObjectID: "c0ffee00000١") == nil, "a non-ASCII digit")
        #expect(Topic.isNodeName("room-1") && Topic.isNodeName("a_B-9"))
        #expect(!Topic.isNodeName("a/b") && !Topic.isNodeName("") && !Topic.isNodeName("é"))
        #expect(Topic.isNodeName(String(repeating: "x", count: 64)))
        #expect(!Topic.isNodeName(String(repeating: "x", count: 65)))
    }

    @Test("a Bluetooth address is six pairs of hex digits: a sign, a wide digit or a short pair is not one")
    func addresses() {
        #expect(BluetoothAddress.isValid("C0:FF:EE:00:00:01") && BluetoothAddress.isValid("c0:ff:ee:0a:0b:0c"))
        for text in [
            "+0:+0:+0:+0:+0:+0", "-0:00:00:00:00:00", "C0:FF:EE:00:00", "C0:FF:EE:00:00:01:02", "C0:FF:EE:00:00:1",
            "C0:FF:EE:00:00:0G", "C0:FF:EE:00:00:０１", "C0:FF:EE:00:00:01 ", "", ":::::",
        ] {
            #expect(!BluetoothAddress.isValid(text), "\(text.debugDescription)")
        }
    }

    @Test(
        "subscription filters, and the topics each matches",
        arguments: [
            (TopicFilter.everyStatus, "hrbridge/+/status", "hrbridge/room-1/status"),
            (
                .everySensor(.measurement), "hrbridge/+/sensor/+/measurement",
                "hrbridge/r/sensor/c0ffee000001/measurement"
            ),
            (.everySensor(.backfill), "hrbridge/+/sensor/+/backfill", "hrbridge/r/sensor/c0ffee000001/backfill"),
            (.commands(node: "gym"), "hrbridge/gym/cmd/#", "hrbridge/gym/cmd/session/start"),
            (.commands(node: "gym"), "hrbridge/gym/cmd/#", "hrbridge/gym/cmd/session/x/lap"),
            (.commands(node: "gym"), "hrbridge/gym/cmd/#", "hrbridge/gym/cmd/response"),
        ])
    func filters(filter: TopicFilter, text: String, matching: String) throws {
        #expect(filter.string == text)
        #expect(filter.matches(try Topic.parse(matching)))
    }

    @Test(
        "filters match nothing else",
        arguments: [
            (TopicFilter.everyStatus, "hrbridge/room-1/sensor/c0ffee000001/state"),
            (.everySensor(.measurement), "hrbridge/r/sensor/c0ffee000001/state"),
            (.commands(node: "gym"), "hrbridge/pool/cmd/session/start"),
            (.commands(node: "gym"), "hrbridge/gym/status"),
        ])
    func filtersMiss(filter: TopicFilter, text: String) throws {
        #expect(!filter.matches(try Topic.parse(text)))
    }
}
