import Synchronization

/// What an ``MQTTClient`` tells its owner, in order. Messages and refusals wait at most
/// ``MQTTClient/incomingLimit`` of them and ``MQTTClient/incomingByteLimit`` of payload (a newer
/// one is dropped and counted while the owner is that far behind);
/// `connected` and `disconnected` always get through, however far behind the owner reads: an owner
/// that missed one would never catch up on an outage, or never start its work after one.
public struct MQTTEvents: AsyncSequence, Sendable {
    public typealias Element = MQTTClient.Event

    /// Events of the bounded kinds the owner has not read yet, and their payloads' bytes.
    final class Pending: Sendable {
        let count = Atomic(0)
        let bytes = Atomic(0)
        let limit: Int
        let byteLimit: Int

        init(limit: Int, byteLimit: Int) {
            self.limit = limit
            self.byteLimit = byteLimit
        }

        /// Takes a place for one more bounded event holding `size` bytes; false when the events
        /// or the bytes waiting are at their limit.
        func take(_ size: Int) -> Bool {
            guard count.add(1, ordering: .relaxed).newValue <= limit else {
                count.subtract(1, ordering: .relaxed)
                return false
            }
            guard bytes.add(size, ordering: .relaxed).newValue <= byteLimit else {
                bytes.subtract(size, ordering: .relaxed)
                count.subtract(1, ordering: .relaxed)
                return false
            }
            return true
        }

        func release(_ event: MQTTClient.Event) {
            guard event.isBounded else { return }
            count.subtract(1, ordering: .relaxed)
            bytes.subtract(event.heldBytes, ordering: .relaxed)
        }
    }

    let stream: AsyncStream<MQTTClient.Event>
    let pending: Pending

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<MQTTClient.Event>.AsyncIterator
        let pending: Pending

        public mutating func next() async -> MQTTClient.Event? {
            let event = await base.next()
            if let event { pending.release(event) }
            return event
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), pending: pending)
    }
}

extension MQTTClient.Event {
    /// Whether the event counts against ``MQTTClient/incomingLimit``: what others publish does;
    /// the connection's own changes do not.
    var isBounded: Bool {
        switch self {
        case .connected, .disconnected: false
        case .message, .refused: true
        }
    }

    /// The payload bytes the event holds.
    var heldBytes: Int {
        if case .message(let message) = self { message.payload.count } else { 0 }
    }
}
