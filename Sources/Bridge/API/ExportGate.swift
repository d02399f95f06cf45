import Synchronization

/// How many workout exports are built at once. An export holds its workout's samples and its
/// file in memory while it is built (hours at 4 Hz are megabytes), so a burst of requests waits
/// its turn, first come first served, instead of multiplying the daemon's memory; past `waiting`
/// waiting requests, a request is refused at once.
public final class ExportGate: Sendable {
    /// Every slot is taken and the queue is full.
    public struct Busy: Error, Sendable, Equatable {
        public let running: Int
        public let waiting: Int
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private enum Admission {
        case admitted
        case queued
        case refused(any Error)
    }

    private struct State {
        var running = 0
        var waiters: [Waiter] = []
        var lastID: UInt64 = 0
    }

    /// Exports built at once.
    public let atOnce: Int
    /// Requests that may wait for a slot.
    public let waiting: Int
    private let state = Mutex(State())

    public init(atOnce: Int = 2, waiting: Int = 32) {
        precondition(atOnce > 0 && waiting >= 0, "an export gate needs a slot")
        self.atOnce = atOnce
        self.waiting = waiting
    }

    /// Exports being built now.
    public var running: Int { state.withLock { $0.running } }
    /// Requests waiting for a slot now.
    public var queued: Int { state.withLock { $0.waiters.count } }

    /// Runs `body` once a slot is free; throws ``Busy`` when the queue is full, and
    /// `CancellationError` when the task is cancelled while it waits (its place is given up).
    public func run<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        try await enter()
        defer { leave() }
        return try await body()
    }

    private func enter() async throws {
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let admission = state.withLock { state -> Admission in
                    if state.running < atOnce, state.waiters.isEmpty {
                        state.running += 1
                        return .admitted
                    }
                    // Checked under the lock the cancellation handler takes: either it finds this
                    // waiter in the queue, or this sees the task already cancelled.
                    if Task.isCancelled { return .refused(CancellationError()) }
                    guard state.waiters.count < waiting else {
                        return .refused(Busy(running: state.running, waiting: state.waiters.count))
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return .queued
                }
                switch admission {
                case .admitted: continuation.resume()
                case .queued: break
                case .refused(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Hands the slot to the first waiter, or frees it.
    private func leave() {
        let next = state.withLock { state -> Waiter? in
            guard !state.waiters.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }
}
