public import Foundation

/// How fast a gateway sends backfill: a bucket of `burst` frames refilled at `rate` a second.
///
/// A hub takes at most its `backfill_budget` of a gateway's backfill frames a minute, refilled
/// evenly (30,000 by default: a burst of 30,000, then 500 a second), and refuses the rest
/// (`over_budget`): sent unpaced, the tail of a long outage's replay would be lost. Paced below
/// the hub's refill, the whole outage arrives, only later.
public struct BackfillPacer: Sendable, Equatable {
    /// Frames a second, once the burst is spent.
    public let rate: Double
    /// Frames that may go at once.
    public let burst: Double
    private var tokens: Double
    /// When `tokens` was worked out.
    private var at: Date?

    /// A full bucket; `rate` and `burst` at least one frame.
    public init(rate: Double, burst: Double) {
        self.rate = max(rate, 1)
        self.burst = max(burst, 1)
        tokens = self.burst
    }

    /// When `frames` may go, asked at `now` (now, or later); they are taken from the bucket then.
    public mutating func take(_ frames: Int, at now: Date) -> Date {
        let wanted = Double(frames)
        if let at, now > at { tokens = min(burst, tokens + now.timeIntervalSince(at) * rate) }
        // Never later than the longest wait there can be: a wall clock set back would otherwise
        // hold every batch for as long as it went back.
        let start = min(max(now, at ?? now), now.addingTimeInterval(max(burst, wanted) / rate))
        guard tokens < wanted else {
            tokens -= wanted
            at = start
            return start
        }
        // Waits until the bucket holds them, and leaves it empty.
        let ready = start.addingTimeInterval((wanted - tokens) / rate)
        tokens = 0
        at = ready
        return ready
    }
}
