import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A connect racing its deadline. The connect blocks a thread of its own in libdbus, whose
/// handshake has no timeout: whichever of the two ends first resumes the caller, and a deadline
/// that comes first shuts the connect's socket down, so that the thread ends as well.
final class PendingConnect: Sendable {
    typealias Outcome = Result<DBusConnection, DBusError>

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        /// A duplicate of the socket the blocked `Hello` reads (-1: none). Ours, not libdbus's: a
        /// socket libdbus closes meanwhile stays the same socket here, never a reused number.
        var socket: Int32 = -1
        var expired = false
        var timer: Task<Void, Never>?
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<Outcome, Never>) {
        state = Mutex(State(continuation: continuation))
    }

    /// Keeps the deadline's task, to cancel once the connect ends first.
    func keep(timer: Task<Void, Never>) {
        let ended = state.withLock { state -> Bool in
            guard state.continuation != nil else { return true }
            state.timer = timer
            return false
        }
        if ended { timer.cancel() }
    }

    /// The connect is about to block reading `socket`; false when the deadline already passed.
    func watch(socket: Int32) -> Bool {
        state.withLock { state in
            guard !state.expired else { return false }
            state.socket = fcntl(socket, F_DUPFD_CLOEXEC, 0)
            return true
        }
    }

    /// The blocking part ended: resumes the caller with `outcome` and returns true, or returns false
    /// when the deadline came first (the caller of this method then releases what it made).
    func end(with outcome: () -> Outcome) -> Bool {
        let (continuation, timer) = state.withLock { state in
            defer {
                if state.socket >= 0 { close(state.socket) }
                state.socket = -1
                state.continuation = nil
                state.timer = nil
            }
            return (state.continuation, state.timer)
        }
        guard let continuation else { return false }
        timer?.cancel()
        continuation.resume(returning: outcome())
        return true
    }

    /// The deadline: unless the connect ended, the caller gets `error` and the socket is shut down.
    func expire(_ error: DBusError) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard let continuation = state.continuation else { return nil }
            state.continuation = nil
            state.expired = true
            if state.socket >= 0 { _ = shutdown(state.socket, Int32(SHUT_RDWR)) }
            return continuation
        }
        continuation?.resume(returning: .failure(error))
    }
}
