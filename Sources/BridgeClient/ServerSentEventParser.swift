/// Splits a Server-Sent Events body into events as its chunks arrive. Bytes wait until their
/// event is whole, so a chunk that ends inside a character ("Jürgen") decodes as it should.
public struct ServerSentEventParser: Sendable {
    /// One event: its `event:` kind (`message` without one) and its `data:` lines joined.
    public struct Event: Equatable, Sendable {
        public var kind: String
        public var data: String

        public init(kind: String, data: String) {
            self.kind = kind
            self.data = data
        }
    }

    /// The largest event (or error body) read: the daemon's are a few kilobytes.
    public static let maximumEventBytes = 1 << 20

    private var pending: [UInt8] = []

    public init() {}

    /// Whether an unfinished event has grown past ``maximumEventBytes``.
    public var isOverLimit: Bool { pending.count > Self.maximumEventBytes }

    /// Takes the next chunk and returns the events it completed, in order.
    public mutating func feed(_ chunk: some Sequence<UInt8>) -> [Event] {
        let searchFrom = max(pending.count - 1, 0)
        pending.append(contentsOf: chunk)
        var events: [Event] = []
        var start = 0
        var index = searchFrom
        while index + 1 < pending.count {
            if pending[index] == 0x0A && pending[index + 1] == 0x0A {
                events.append(Self.event(String(decoding: pending[start..<index], as: UTF8.self)))
                start = index + 2
                index = start
            } else {
                index += 1
            }
        }
        pending.removeSubrange(..<start)
        return events
    }

    private static func event(_ block: String) -> Event {
        var kind = "message"
        var data = ""
        for line in block.split(separator: "\n") {
            if line.hasPrefix("event: ") { kind = String(line.dropFirst(7)) }
            if line.hasPrefix("data: ") { data += line.dropFirst(6) }
        }
        return Event(kind: kind, data: data)
    }
}
