import Synchronization

/// Fans one stream of values out to every current subscriber, as ``EventBroadcaster`` does, and
/// lets the producer wait until every subscriber has handled what it was sent.
///
/// A subscriber has handled a value once it asks for the next one (a `for await` loop asks when
/// its body has run), so a producer that calls ``waitUntilConsumed()`` after each batch moves in
/// lockstep with its consumers: whatever they do with a batch is done before the next batch
/// exists, however fast the producer goes. A subscriber that stops listening (its task is
/// cancelled, its stream released) is no longer waited for. Buffers are unbounded: `yield`
/// never waits. A `routingKey` lets a subscriber take only the values of some keys, as with
/// ``EventBroadcaster``; it is not waited for on values it does not take.
public final class ConsumptionTrackingBroadcaster<Element: Sendable>: Sendable {
    private struct Subscriber {
        /// The keys taken (nil: every value).
        var keys: Set<String>?
        var queue: [Element] = []
        /// Index of the next value to hand out in `queue` (values before it are taken).
        var head = 0
        /// A value was handed out and the subscriber has not asked for the next one yet.
        var isHandling = false
        /// The subscriber's pending request, when it waits for a value.
        var request: CheckedContinuation<Element?, Never>?

        var isCaughtUp: Bool { head == queue.count && !isHandling }

        mutating func take() -> Element? {
            guard head < queue.count else { return nil }
            let value = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            return value
        }
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var isFinished = false
        var consumptionWaiters: [CheckedContinuation<Void, Never>] = []

        /// The producer's waiters, taken out, when every subscriber has caught up.
        mutating func waitersToWake() -> [CheckedContinuation<Void, Never>] {
            guard !consumptionWaiters.isEmpty, subscribers.values.allSatisfy(\.isCaughtUp) else { return [] }
            defer { consumptionWaiters.removeAll() }
            return consumptionWaiters
        }
    }

    /// What a subscriber's request gets at once, if anything.
    private enum Answer {
        case value(Element)
        case end
        case wait
    }

    /// Unsubscribes when the stream holding it is released: a stream nobody reads any more is not
    /// waited for.
    private final class Release: Sendable {
        let action: @Sendable () -> Void
        init(_ action: @escaping @Sendable () -> Void) { self.action = action }
        deinit { action() }
    }

    private let state = Mutex(State())
    private let routingKey: (@Sendable (Element) -> String?)?

    /// Creates a broadcaster with no subscribers; `routingKey` names a value's key for
    /// ``subscribe(keys:)`` (nil: every subscriber gets every value).
    public init(routingKey: (@Sendable (Element) -> String?)? = nil) {
        self.routingKey = routingKey
    }

    /// A new subscription: every value yielded from now on, then the end once ``finish()`` is called.
    public func subscribe() -> AsyncStream<Element> { subscribe(keys: nil) }

    /// A new subscription to the values of `keys` and to values without a key (`keys` nil: all values).
    public func subscribe(keys: Set<String>?) -> AsyncStream<Element> {
        let id: Int? = state.withLock { state in
            guard !state.isFinished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(keys: keys)
            return id
        }
        guard let id else { return AsyncStream { $0.finish() } }
        let release = Release { [weak self] in self?.unsubscribe(id) }
        return AsyncStream(
            unfolding: { [self] in
                withExtendedLifetime(release) {}
                return await next(for: id)
            },
            onCancel: { [weak self] in self?.unsubscribe(id) })
    }

    /// Delivers `value` to every subscriber that asked for it.
    public func yield(_ value: Element) {
        let key = routingKey?(value)
        let requests: [CheckedContinuation<Element?, Never>] = state.withLock { state in
            guard !state.isFinished else { return [] }
            var requests: [CheckedContinuation<Element?, Never>] = []
            for (id, subscriber) in state.subscribers {
                if let key, let keys = subscriber.keys, !keys.contains(key) { continue }
                if let request = state.subscribers[id]?.request {
                    state.subscribers[id]?.request = nil
                    state.subscribers[id]?.isHandling = true
                    requests.append(request)
                } else {
                    state.subscribers[id]?.queue.append(value)
                }
            }
            return requests
        }
        for request in requests { request.resume(returning: value) }
    }

    /// Ends every subscription once its subscriber has taken what was already yielded.
    public func finish() {
        let (requests, waiters) = state.withLock { state in
            state.isFinished = true
            var requests: [CheckedContinuation<Element?, Never>] = []
            for (id, subscriber) in state.subscribers {
                guard let request = subscriber.request else { continue }
                requests.append(request)
                state.subscribers[id] = nil
            }
            return (requests, state.waitersToWake())
        }
        for request in requests { request.resume(returning: nil) }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once every subscriber has handled every value yielded so far (or stopped listening).
    public func waitUntilConsumed() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let caughtUp = state.withLock { state in
                guard state.subscribers.values.allSatisfy(\.isCaughtUp) else {
                    state.consumptionWaiters.append(waiter)
                    return false
                }
                return true
            }
            if caughtUp { waiter.resume() }
        }
    }

    /// How many subscribers are attached.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// A subscriber's request for its next value: asking means it has handled the previous one.
    private func next(for id: Int) async -> Element? {
        await withCheckedContinuation { (request: CheckedContinuation<Element?, Never>) in
            let (answer, waiters) = state.withLock { state -> (Answer, [CheckedContinuation<Void, Never>]) in
                guard var subscriber = state.subscribers[id] else { return (.end, []) }
                subscriber.isHandling = false
                if let value = subscriber.take() {
                    subscriber.isHandling = true
                    state.subscribers[id] = subscriber
                    return (.value(value), [])
                }
                let answer: Answer
                if state.isFinished {
                    state.subscribers[id] = nil
                    answer = .end
                } else {
                    subscriber.request = request
                    state.subscribers[id] = subscriber
                    answer = .wait
                }
                return (answer, state.waitersToWake())
            }
            for waiter in waiters { waiter.resume() }
            switch answer {
            case .value(let value): request.resume(returning: value)
            case .end: request.resume(returning: nil)
            case .wait: break
            }
        }
    }

    private func unsubscribe(_ id: Int) {
        let (request, waiters) = state.withLock { state in
            let removed = state.subscribers.removeValue(forKey: id)
            return (removed?.request, state.waitersToWake())
        }
        request?.resume(returning: nil)
        for waiter in waiters { waiter.resume() }
    }
}
