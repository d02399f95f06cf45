public import Foundation
import Metrics
import NIOCore
import Synchronization
public import Wire

/// One client's share of the live stream: messages its filters want are queued on arrival
/// (filtered before they are buffered), up to a byte budget; when a client reads too slowly the
/// oldest are dropped and it is told how many with a ``Delivery/dropped(_:)`` before the next one.
public final class LiveSubscription: AsyncSequence, Sendable {
    /// Messages dropped for readers that fell behind, across all of them.
    static let droppedMessages = Counter(label: "hrbridge_live_dropped_total")

    /// What a reader gets.
    public enum Delivery: Sendable, Equatable {
        case message(LiveMessage)
        /// This many messages were dropped because the reader fell behind.
        case dropped(Int)

        /// The line to send: the message's JSON, or `{"kind":"dropped","count":N}`.
        public var json: String {
            switch self {
            case .message(let message): message.json
            case .dropped(let count): #"{"kind":"dropped","count":\#(count)}"#
            }
        }

        /// The SSE event name.
        public var kind: LiveMessageKind {
            switch self {
            case .message(let message): message.kind
            case .dropped: .dropped
            }
        }
    }

    private struct State {
        var queue = CircularBuffer<LiveMessage>()
        var bytes = 0
        var dropped = 0
        var finished = false
        var waiter: CheckedContinuation<Delivery?, Never>?
    }

    /// The session filter (nil: every session).
    public let session: UUID?
    /// The sensor filter (nil: every sensor).
    public let sensor: String?
    /// The kinds wanted (nil: every kind).
    public let kinds: Set<LiveMessageKind>?
    /// Bytes of JSON that may wait for this reader.
    public let byteBudget: Int
    private let state = Mutex(State())
    private let onEnd: @Sendable () -> Void

    init(
        session: UUID?, sensor: String?, kinds: Set<LiveMessageKind>? = nil, byteBudget: Int,
        onEnd: @escaping @Sendable () -> Void
    ) {
        self.session = session
        self.sensor = sensor
        self.kinds = kinds
        self.byteBudget = byteBudget
        self.onEnd = onEnd
    }

    /// Takes a published message; the hub offers only what the filters want.
    func offer(_ message: LiveMessage) {
        let size = message.json.utf8.count
        let waiter = state.withLock { state -> CheckedContinuation<Delivery?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.queue.append(message)
            state.bytes += size
            while state.bytes > byteBudget, let oldest = state.queue.popFirst() {
                state.bytes -= oldest.json.utf8.count
                state.dropped += 1
                LiveSubscription.droppedMessages.increment()
            }
            return nil
        }
        waiter?.resume(returning: .message(message))
    }

    /// Ends the subscription: the reader gets what is queued, then the end.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Delivery?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Bytes waiting now.
    public var queuedBytes: Int { state.withLock { $0.bytes } }

    fileprivate func next() async -> Delivery? {
        if Task.isCancelled { return end() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Delivery?? in
                    if state.dropped > 0 {
                        defer { state.dropped = 0 }
                        return .some(.dropped(state.dropped))
                    }
                    if let message = state.queue.popFirst() {
                        state.bytes -= message.json.utf8.count
                        return .some(.message(message))
                    }
                    if state.finished { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    private func end() -> Delivery? {
        finish()
        return nil
    }

    deinit { onEnd() }

    /// Reads deliveries until the subscription ends or the reading task is cancelled.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let subscription: LiveSubscription

        /// The next delivery, or nil at the end.
        public mutating func next() async -> Delivery? { await subscription.next() }
    }

    /// An iterator; one reader per subscription.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(subscription: self) }
}
