import Synchronization

/// Fans one stream of values out to every current subscriber.
///
/// Subscribers get values yielded after they subscribed; a finished broadcaster finishes every
/// subscriber and hands new ones a finished stream. Buffers are unbounded, so slow subscribers
/// never make the producer wait or lose a value.
///
/// With a `routingKey`, a subscriber may ask for the values of some keys only (a session for the
/// straps it records): such a value reaches only the subscribers of its key and those that take
/// everything, so a value costs what its own listeners cost, not one hop per subscriber. Values
/// without a key (an adapter's own state) reach every subscriber.
public final class EventBroadcaster<Element: Sendable>: Sendable {
    private typealias Entry = (id: Int, continuation: AsyncStream<Element>.Continuation)

    private struct State {
        /// Subscribers of every value, in subscription order: `yield` takes them with one retain, no copy.
        var everything: [Entry] = []
        /// Subscribers of some keys only, by key.
        var byKey: [String: [Entry]] = [:]
        /// Every subscriber of some keys only, for values without a key.
        var keyed: [Entry] = []
        var nextID = 0
        var isFinished = false

        mutating func remove(_ id: Int, keys: Set<String>?) {
            guard let keys else {
                everything.removeAll { $0.id == id }
                return
            }
            keyed.removeAll { $0.id == id }
            for key in keys {
                byKey[key]?.removeAll { $0.id == id }
                if byKey[key]?.isEmpty == true { byKey[key] = nil }
            }
        }
    }

    private let state = Mutex(State())
    private let routingKey: (@Sendable (Element) -> String?)?

    /// Creates a broadcaster with no subscribers; `routingKey` names a value's key for
    /// ``subscribe(keys:bufferingPolicy:)`` (nil: every subscriber gets every value).
    public init(routingKey: (@Sendable (Element) -> String?)? = nil) {
        self.routingKey = routingKey
    }

    /// A new subscription; `bufferingPolicy` bounds what waits for a slow subscriber (default: all).
    public func subscribe(
        bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Element> {
        subscribe(keys: nil, bufferingPolicy: bufferingPolicy)
    }

    /// A new subscription to the values of `keys` and to values without a key (`keys` nil: all values).
    public func subscribe(
        keys: Set<String>?, bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: bufferingPolicy)
        let id: Int? = state.withLock { state in
            guard !state.isFinished else { return nil }
            let id = state.nextID
            state.nextID += 1
            let entry = (id: id, continuation: continuation)
            if let keys {
                state.keyed.append(entry)
                for key in keys { state.byKey[key, default: []].append(entry) }
            } else {
                state.everything.append(entry)
            }
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { $0.remove(id, keys: keys) }
        }
        return stream
    }

    /// Delivers `value` to every subscriber that asked for it.
    public func yield(_ value: Element) {
        let key = routingKey?(value)
        let (everything, routed) = state.withLock { state -> ([Entry], [Entry]) in
            guard let key else { return (state.everything, state.keyed) }
            return (state.everything, state.byKey[key] ?? [])
        }
        for entry in everything { entry.continuation.yield(value) }
        for entry in routed { entry.continuation.yield(value) }
    }

    /// Ends every subscription.
    public func finish() {
        let entries = state.withLock { state in
            state.isFinished = true
            defer {
                state.everything.removeAll()
                state.keyed.removeAll()
                state.byKey.removeAll()
            }
            return state.everything + state.keyed
        }
        for entry in entries { entry.continuation.finish() }
    }

    /// How many subscribers are attached.
    public var subscriberCount: Int { state.withLock { $0.everything.count + $0.keyed.count } }
}
