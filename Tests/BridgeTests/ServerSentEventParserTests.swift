import BridgeClient
import Testing

@Suite("Server-Sent Events split into events, however the body is chunked")
struct ServerSentEventParserTests {
    static let body = Array(
        "event: sensor\ndata: {\"name\":\"Jürgen 🏃‍♀️\"}\n\ndata: plain\n\nevent: session\ndata: {}\n\n".utf8)
    static let expected: [ServerSentEventParser.Event] = [
        .init(kind: "sensor", data: "{\"name\":\"Jürgen 🏃‍♀️\"}"), .init(kind: "message", data: "plain"),
        .init(kind: "session", data: "{}"),
    ]

    @Test("split in two at every byte, inside characters and between the two newlines, the events are the same")
    func everySplit() {
        for split in 0...Self.body.count {
            var parser = ServerSentEventParser()
            let events = parser.feed(Self.body[..<split]) + parser.feed(Self.body[split...])
            #expect(events == Self.expected, "split at \(split)")
        }
    }

    @Test("a byte at a time, and an unfinished event waits for its end")
    func byteByByte() {
        var parser = ServerSentEventParser()
        var events: [ServerSentEventParser.Event] = []
        for byte in Self.body { events += parser.feed([byte]) }
        #expect(events == Self.expected)
        #expect(parser.feed(Array("data: half\n".utf8)).isEmpty)
        #expect(parser.feed([0x0A]) == [.init(kind: "message", data: "half")])
    }

    @Test("an event that never ends is bounded")
    func bounded() {
        var parser = ServerSentEventParser()
        _ = parser.feed(Array(repeating: UInt8(ascii: "x"), count: ServerSentEventParser.maximumEventBytes))
        #expect(!parser.isOverLimit)
        _ = parser.feed([UInt8(ascii: "x")])
        #expect(parser.isOverLimit)
    }
}
