import Foundation
import Sensors
import Synchronization

/// One deadline on a ``WallClock``, re-armed in place: ``run(_:)`` sleeps until the deadline armed
/// last and calls its closure when the clock reaches it; arming another deadline wakes the sleeper,
/// which sleeps again until the new one. Its only task is the caller's, so it lives as long as
/// ``run(_:)`` does.
final class DeadlineTimer: Sendable {
    private struct State {
        var deadline: Date?
        /// Counts arms, so a sleeper knows whether the deadline it sleeps for is still the one.
        var generation = 0
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let clock: any WallClock
    private let state = Mutex(State())

    /// A timer on `clock`, disarmed.
    init(clock: any WallClock) {
        self.clock = clock
    }

    /// Fires at `deadline` instead (nil: never); the same deadline again changes nothing.
    func arm(_ deadline: Date?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.deadline != deadline else { return nil }
            state.deadline = deadline
            state.generation += 1
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Calls `fire` each time the clock reaches the deadline armed, until the task is cancelled.
    /// A deadline fires once: it is disarmed as it fires, and `fire` arms the next.
    func run(_ fire: @escaping @Sendable () async -> Void) async {
        let clock = clock
        while !Task.isCancelled {
            let (deadline, generation) = state.withLock { ($0.deadline, $0.generation) }
            let reached = await withTaskGroup(of: Bool.self) { group in
                if let deadline {
                    group.addTask { (try? await clock.sleep(until: deadline)) != nil }
                }
                group.addTask {
                    await self.rearmed(since: generation)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            guard reached, !Task.isCancelled else { continue }
            let due = state.withLock { state -> Bool in
                guard state.generation == generation else { return false }
                state.deadline = nil
                state.generation += 1
                return true
            }
            if due { await fire() }
        }
    }

    /// Returns once a deadline other than the one of `generation` is armed, or the task is cancelled.
    private func rearmed(since generation: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumesNow = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumesNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
