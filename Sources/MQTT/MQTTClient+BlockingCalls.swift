import Synchronization
import Threads

extension MQTTClient {
    /// Queues `body`, a libmosquitto call that may block, to run on a thread of its own once the
    /// calls queued before it have ended; its result, or why no thread could run it (then it did
    /// not run).
    func blockingCall<Value: Sendable>(
        _ threadName: String, _ body: @escaping @Sendable (OpaquePointer) -> Value
    ) -> Task<Result<Value, ThreadStartError>, Never> {
        let previous = lastBlockingCall
        let handle = handle
        let call = Task { () async -> Result<Value, ThreadStartError> in
            await previous?.value
            // The thread keeps the handle: a call that outlives the client still has it.
            do throws(ThreadStartError) {
                return .success(try await DetachedThread.run(named: threadName) { body(handle.pointer) })
            } catch {
                return .failure(error)
            }
        }
        lastBlockingCall = Task { _ = await call.value }
        return call
    }

    /// `call`'s result, or nil once the caller is cancelled or `limit` has passed on `clock` first.
    /// The call itself goes on: a blocked C call cannot be cancelled.
    static func outcome<Result: Sendable>(
        of call: Task<Result, Never>, within limit: Duration? = nil, on clock: (any Clock<Duration>)? = nil
    ) async -> Result? {
        let first = FirstOutcome<Result>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                first.wait(continuation)
                Task { first.settle(await call.value) }
                if let limit, let clock {
                    first.keep(
                        timer: Task {
                            do { try await clock.sleep(for: limit) } catch { return }
                            first.settle(nil)
                        })
                }
            }
        } onCancel: {
            first.settle(nil)
        }
    }
}

/// The first of a call's result, a timeout and a cancellation, handed to one waiter.
final class FirstOutcome<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result?, Never>?
        /// Settled before the waiter arrived.
        var early: Result??
        var settled = false
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<Result?, Never>) {
        let early: Result?? = state.withLock { state in
            guard let early = state.early else {
                state.continuation = continuation
                return nil
            }
            return .some(early)
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Keeps the timeout's task, to cancel it once settled.
    func keep(timer: Task<Void, Never>) {
        let settled = state.withLock { state in
            if !state.settled { state.timer = timer }
            return state.settled
        }
        if settled { timer.cancel() }
    }

    func settle(_ outcome: Result?) {
        let (continuation, timer): (CheckedContinuation<Result?, Never>?, Task<Void, Never>?) = state.withLock {
            state in
            guard !state.settled else { return (nil, nil) }
            state.settled = true
            defer {
                state.continuation = nil
                state.timer = nil
            }
            if state.continuation == nil { state.early = .some(outcome) }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(returning: outcome)
    }
}
