import Synchronization

/// Fans one stream of values out to every current subscriber.
///
/// Subscribers get values yielded after they subscribed; a finished broadcaster finishes every
/// subscriber and hands new ones a finished stream. Buffers are unbounded, so slow subscribers
/// never make the producer wait or lose a value.
public final class EventBroadcaster<Element: Sendable>: Sendable {
    private struct State {
        /// Kept as an array, in subscription order: `yield` takes it with one retain, no copy.
        var continuations: [(id: Int, continuation: AsyncStream<Element>.Continuation)] = []
        var nextID = 0
        var isFinished = false
    }

    private let state = Mutex(State())

    /// Creates a broadcaster with no subscribers.
    public init() {}

    /// A new subscription; `bufferingPolicy` bounds what waits for a slow subscriber (default: all).
    public func subscribe(
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: bufferingPolicy)
        let id: Int? = state.withLock { state in
            guard !state.isFinished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.continuations.append((id, continuation))
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.continuations.removeAll { $0.id == id } }
        }
        return stream
    }

    /// Delivers `value` to every subscriber.
    public func yield(_ value: Element) {
        let continuations = state.withLock { $0.continuations }
        for entry in continuations { entry.continuation.yield(value) }
    }

    /// Ends every subscription.
    public func finish() {
        let continuations = state.withLock { state in
            state.isFinished = true
            defer { state.continuations.removeAll() }
            return state.continuations
        }
        for entry in continuations { entry.continuation.finish() }
    }

    /// How many subscribers are attached.
    public var subscriberCount: Int { state.withLock { $0.continuations.count } }
}
