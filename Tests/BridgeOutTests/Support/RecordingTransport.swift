import BridgeOut
import Synchronization

/// A transport that keeps what it is given and hands each message to a waiting test.
final class RecordingTransport: OSCTransport {
    private let sent = Mutex<[OSCMessage]>([])
    private let continuation: AsyncStream<OSCMessage>.Continuation
    /// Every message, as it is sent.
    let stream: AsyncStream<OSCMessage>

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: OSCMessage.self)
    }

    func send(_ message: OSCMessage) {
        sent.withLock { $0.append(message) }
        continuation.yield(message)
    }

    /// Everything sent so far.
    var messages: [OSCMessage] { sent.withLock { $0 } }
}

extension AsyncStream<OSCMessage>.Iterator {
    /// The next `count` messages (the test's time limit bounds the wait).
    mutating func next(_ count: Int) async -> [OSCMessage] {
        var messages: [OSCMessage] = []
        while messages.count < count, let message = await next() { messages.append(message) }
        return messages
    }

    /// Messages up to and including the first one satisfying `predicate`.
    mutating func next(through predicate: (OSCMessage) -> Bool) async -> [OSCMessage] {
        var messages: [OSCMessage] = []
        while let message = await next() {
            messages.append(message)
            if predicate(message) { break }
        }
        return messages
    }
}
