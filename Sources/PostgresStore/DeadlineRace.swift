import Synchronization

/// Runs an operation in a task of its own and returns its outcome, or fails when a deadline task
/// finishes first, without waiting for the operation to end.
///
/// A task group would wait for its children: a postgres-nio call whose connection was closed under
/// it can stay suspended after cancellation (seen under load, a store's open hung for good).
/// Here the late operation is cancelled and left to end by itself; its outcome is dropped.
enum DeadlineRace {
    /// `operation`'s outcome, or `expired()`'s error once `deadline` returns first. Cancelling the
    /// caller cancels both and throws `CancellationError`.
    static func run<T: Sendable>(
        _ operation: @escaping @Sendable () async throws -> T,
        deadline: @escaping @Sendable () async -> Void,
        expired: @escaping @Sendable () -> any Error
    ) async throws -> T {
        let outcome = Outcome<T>()
        let work = Task {
            do {
                outcome.settle(.success(try await operation()))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        let timer = Task {
            await deadline()
            if !Task.isCancelled { outcome.settle(.failure(expired())) }
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { outcome.wait($0) }
        } onCancel: {
            outcome.settle(.failure(CancellationError()))
        }
    }

    /// The first outcome wins; a waiter installed after it is resumed at once.
    private final class Outcome<T: Sendable>: Sendable {
        private struct State {
            var result: Result<T, any Error>?
            var waiter: CheckedContinuation<T, any Error>?
            var resumed = false
        }
        private let state = Mutex(State())

        func settle(_ result: Result<T, any Error>) {
            let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
                guard state.result == nil, !state.resumed else { return nil }
                state.result = result
                guard let waiter = state.waiter else { return nil }
                state.waiter = nil
                state.resumed = true
                return waiter
            }
            waiter?.resume(with: result)
        }

        func wait(_ continuation: CheckedContinuation<T, any Error>) {
            let ready = state.withLock { state -> Result<T, any Error>? in
                guard let result = state.result else {
                    state.waiter = continuation
                    return nil
                }
                state.resumed = true
                return result
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
