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
    private let timeline: ManualTimeline<Date>

    /// Creates a clock reading `now`.
    public init(now: Date = Date(timeIntervalSinceReferenceDate: 800_000_000)) {
        timeline = ManualTimeline(now: now)
    }

    /// The date the clock reads.
    public func now() -> Date { timeline.now }

    /// Moves the clock forward by `seconds` and wakes every sleeper whose deadline passed.
    public func advance(by seconds: TimeInterval) {
        timeline.advance { $0.addingTimeInterval(seconds) }
    }

    /// Moves the clock to `date` (never backwards) and wakes every sleeper whose deadline passed.
    public func advance(to date: Date) { timeline.advance(to: date) }

    /// How many tasks are sleeping on the clock.
    public var sleeperCount: Int { timeline.sleeperCount }

    /// Returns once at least `count` tasks sleep on the clock: a test advances time when the code
    /// under test waits for it, instead of polling or guessing. Not cancellable (a test's own time
    /// limit ends one that waits in vain).
    public func waitUntilSleeping(_ count: Int = 1) async { await timeline.waitUntilSleeping(count) }

    /// Suspends until ``advance(to:)`` reaches `date`.
    public func sleep(until date: Date) async throws { try await timeline.sleep(until: date) }
}
