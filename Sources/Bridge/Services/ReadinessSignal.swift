import Synchronization

/// A one-way "ready" between services that start together: a service that needs another's work
/// done first (sessions recovered once the sensors are followed, READY once everything is up)
/// waits on it instead of on a guess. Waiting ends early when the waiting task is cancelled.
public final class ReadinessSignal: Sendable {
    private struct State {
        var isReady = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Whether ``signal()`` was called.
    public var isReady: Bool { state.withLock { $0.isReady } }

    /// Marks it ready and wakes every waiter; later calls do nothing.
    public func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.isReady else { return [] }
            state.isReady = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once it is ready, or once the calling task is cancelled.
    public func signalled() async {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isReady || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
