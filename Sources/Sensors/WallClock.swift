public import FoundationEssentials
import Synchronization

/// The host's wall clock, injected so elapsed time, pauses and zones are deterministic in tests.
public protocol WallClock: Sendable {
    /// The current date.
    func now() -> Date
    /// Suspends until the clock reads `date` or later; throws `CancellationError` when cancelled.
    func sleep(until date: Date) async throws
}

/// The real clock.
public struct SystemWallClock: WallClock {
    /// Creates the system clock.
    public init() {}

    /// `Date()`.
    public func now() -> Date { Date() }

    /// Sleeps on the continuous clock for the remaining time.
    public func sleep(until date: Date) async throws {
        let remaining = date.timeIntervalSinceNow
        if remaining > 0 { try await Task.sleep(for: .seconds(remaining)) }
    }
}

/// A clock that runs `speed` times faster than real time from `origin`: `--speed 60` makes a
/// minute of workout pass in a second.
public struct AcceleratedWallClock: WallClock {
    /// The date the clock reads when created.
    public let origin: Date
    /// How many clock seconds pass per real second.
    public let speed: Double
    private let start: ContinuousClock.Instant

    /// Creates a clock reading `origin` now and running `speed` times real time.
    public init(origin: Date = Date(), speed: Double) {
        self.origin = origin
        self.speed = max(speed, 0.001)
        self.start = ContinuousClock.now
    }

    /// `origin` + real elapsed time × speed.
    public func now() -> Date {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return origin.addingTimeInterval(seconds * speed)
    }

    /// Sleeps the real time it takes the clock to reach `date`.
    public func sleep(until date: Date) async throws {
        let remaining = date.timeIntervalSince(now()) / speed
        if remaining > 0 { try await Task.sleep(for: .seconds(remaining)) }
    }
}

/// A clock that moves only when told: tests advance it and never sleep.
public final class ManualWallClock: WallClock {
    private struct Waiter {
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct SleepWatcher {
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now: Date
        var waiters: [Int: Waiter] = [:]
        var watchers: [SleepWatcher] = []
        var nextID = 0
    }

    private let state: Mutex<State>

    /// Creates a clock reading `now`.
    public init(now: Date = Date(timeIntervalSinceReferenceDate: 800_000_000)) {
        state = Mutex(State(now: now))
    }

    /// The date the clock reads.
    public func now() -> Date { state.withLock { $0.now } }

    /// Moves the clock forward by `seconds` and wakes every sleeper whose deadline passed.
    public func advance(by seconds: TimeInterval) {
        advance(to: now().addingTimeInterval(seconds))
    }

    /// Moves the clock to `date` (never backwards) and wakes every sleeper whose deadline passed.
    public func advance(to date: Date) {
        let due: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            state.now = max(state.now, date)
            let ready = state.waiters.filter { $0.value.deadline <= state.now }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.sorted { $0.value.deadline < $1.value.deadline }.map(\.value.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// How many tasks are sleeping on the clock.
    public var sleeperCount: Int { state.withLock { $0.waiters.count } }

    /// Returns once at least `count` tasks sleep on the clock: a test advances time when the code
    /// under test waits for it, instead of polling or guessing. Not cancellable (a test's own time
    /// limit ends one that waits in vain).
    public func waitUntilSleeping(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.waiters.count < count else { return true }
                state.watchers.append(SleepWatcher(count: count, continuation: continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Suspends until ``advance(to:)`` reaches `date`.
    public func sleep(until date: Date) async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, watchers) = state.withLock { state -> (SleepOutcome, [SleepWatcher]) in
                    if Task.isCancelled { return (.cancelled, []) }
                    if date <= state.now { return (.due, []) }
                    state.waiters[id] = Waiter(deadline: date, continuation: continuation)
                    let sleeping = state.waiters.count
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
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    private enum SleepOutcome { case due, cancelled, waiting }
}
