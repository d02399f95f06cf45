import Testing

@testable import MQTT

@Suite("Incoming topics: read no further than 256 bytes")
struct MQTTIncomingTopicTests {
    @Test(
        "a topic up to 256 bytes is copied whole; a longer one (MQTT allows 64 KiB) is not, only its first 64 bytes",
        arguments: [0, 1, 255, 256, 257, 300, 65_535])
    func topicLength(_ bytes: Int) {
        let topic = String(repeating: "a", count: bytes)
        let read = topic.withCString { MQTTClient.incomingTopic($0) }
        let expected: MQTTClient.IncomingTopic =
            bytes <= MQTTClient.maximumTopicBytes ? .topic(topic) : .tooLong(prefix: String(repeating: "a", count: 64))
        #expect(read == expected)
    }

    @Test("the bound counts bytes, not characters; a prefix cut inside a character is still text")
    func multiByte() {
        let fits = String(repeating: "\u{E9}", count: 128)  // 256 bytes
        let readFits = fits.withCString { MQTTClient.incomingTopic($0) }
        #expect(readFits == .topic(fits))
        let long = "x" + String(repeating: "\u{E9}", count: 128)  // 257 bytes
        let readLong = long.withCString { MQTTClient.incomingTopic($0) }
        #expect(readLong == .tooLong(prefix: "x" + String(repeating: "\u{E9}", count: 31) + "\u{FFFD}"))
    }
}
