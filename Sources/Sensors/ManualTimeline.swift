import Synchronization

/// Time that moves only when told, and the tasks sleeping on it: the part a manual clock's
/// two faces share (``ManualWallClock`` on dates, tests' Swift `Clock` on durations).
public final class ManualTimeline<Point: Comparable & Sendable>: Sendable {
    private struct Sleeper {
        let deadline: Point
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher {
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now: Point
        var sleepers: [Int: Sleeper] = [:]
        var watchers: [Watcher] = []
        var nextID = 0
    }

    private let state: Mutex<State>

    /// A timeline at `now`.
    public init(now: Point) { state = Mutex(State(now: now)) }

    /// Where the timeline is.
    public var now: Point { state.withLock { $0.now } }

    /// How many tasks sleep on it.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Moves to `point` (never backwards) and wakes every sleeper whose deadline is reached, earliest first.
    public func advance(to point: Point) { advance { _ in point } }

    /// Moves to what `step` makes of where it is, in one step (no other advance comes between);
    /// never backwards.
    public func advance(_ step: (Point) -> Point) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = max(state.now, step(state.now))
            let ready = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in ready.keys { state.sleepers.removeValue(forKey: id) }
            return ready.values.sorted { $0.deadline < $1.deadline }.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on it: a test advances time when the code under
    /// test waits for it, instead of polling or guessing. Not cancellable (a test's own time limit
    /// ends one that waits in vain).
    public func waitUntilSleeping(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.sleepers.count < count else { return true }
                state.watchers.append(Watcher(count: count, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Suspends until the timeline reaches `deadline`; throws `CancellationError` when cancelled.
    public func sleep(until deadline: Point) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, watchers) = state.withLock { state -> (Outcome, [Watcher]) in
                    if Task.isCancelled { return (.cancelled, []) }
                    if deadline <= state.now { return (.due, []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    let sleeping = state.sleepers.count
                    let satisfied = state.watchers.filter { $0.count <= sleeping }
                    state.watchers.removeAll { $0.count <= sleeping }
                    return (.waiting, satisfied)
                }
                switch outcome {
                case .due: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: for watcher in watchers { watcher.continuation.resume() }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    private enum Outcome { case due, cancelled, waiting }
}
