import Sensors
import Synchronization

/// A `Clock` that moves only when a test advances it: sleepers wake when their deadline is
/// reached, and a test waits for the code under test to sleep instead of guessing how long.
public final class ManualClock: Clock {
    /// A point on the manual timeline: the time advanced since the clock was made.
    public struct Instant: InstantProtocol {
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let timeline = ManualTimeline(now: Instant(offset: .zero))
    private let requested = Mutex<[Duration]>([])

    public init() {}

    public var now: Instant { timeline.now }
    public var minimumResolution: Duration { .zero }

    /// How long each sleep asked for, in the order asked.
    public var requestedSleeps: [Duration] { requested.withLock { $0 } }

    /// How many tasks sleep on the clock now.
    public var sleeperCount: Int { timeline.sleeperCount }

    /// Moves the clock forward and wakes every sleeper whose deadline is reached.
    public func advance(by duration: Duration) { timeline.advance { $0.advanced(by: duration) } }

    /// Returns once at least `count` tasks sleep on the clock (not cancellable: a test's own
    /// time limit ends a test that waits in vain).
    public func waitUntilSleeping(_ count: Int = 1) async { await timeline.waitUntilSleeping(count) }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        requested.withLock { $0.append(now.duration(to: deadline)) }
        try await timeline.sleep(until: deadline)
    }
}
