/// Turns cumulative revolution counters (CSC, CPS) into a rate in revolutions per minute.
///
/// A pure value: feed it each frame's counter and the host's receive time, reset it on reconnect.
/// It handles the 16-bit event-time wrap, 16-bit crank and 32-bit wheel counter rollover, reverse
/// wheel motion, repeated frames (held, then decayed to zero), and rejects implausible jumps such
/// as two interleaved counters on one characteristic, re-basing on the frame it rejects.
public struct RevolutionRateDeriver: Hashable, Sendable {
    /// How a counter behaves on the wire.
    public struct Configuration: Hashable, Sendable {
        /// Whether the revolution counter is 16 bits (cranks) or 32 bits (wheels, which may run backwards).
        public var counterBits: Int
        /// Event-time ticks per second: 1024, or 2048 for the Cycling Power wheel.
        public var ticksPerSecond: Double
        /// Rates above this many revolutions per minute are rejected as implausible.
        public var maximumRevolutionsPerMinute: Double
        /// How many frames with no new event hold the last rate before it decays to zero.
        public var heldFramesBeforeStop: Int

        /// Creates a configuration.
        public init(
            counterBits: Int, ticksPerSecond: Double, maximumRevolutionsPerMinute: Double,
            heldFramesBeforeStop: Int = 2
        ) {
            self.counterBits = counterBits
            self.ticksPerSecond = ticksPerSecond
            self.maximumRevolutionsPerMinute = maximumRevolutionsPerMinute
            self.heldFramesBeforeStop = heldFramesBeforeStop
        }

        /// A CSC or CPS crank: 16-bit counter, 1/1024 s, at most 250 rpm.
        public static let crank = Configuration(counterBits: 16, ticksPerSecond: 1024, maximumRevolutionsPerMinute: 250)
        /// A CSC wheel: 32-bit counter, 1/1024 s, at most 3000 rpm (about 105 m/s on a 2.1 m wheel).
        public static let cscWheel = Configuration(
            counterBits: 32, ticksPerSecond: 1024, maximumRevolutionsPerMinute: 3000)
        /// A Cycling Power wheel: 32-bit counter, **1/2048 s**, at most 3000 rpm.
        public static let cyclingPowerWheel = Configuration(
            counterBits: 32, ticksPerSecond: 2048, maximumRevolutionsPerMinute: 3000)

        /// How long the event time takes to wrap, in seconds (64 s at 1/1024 s, 32 s at 1/2048 s).
        public var wrapPeriod: Double { 65536 / ticksPerSecond }
    }

    /// Why a frame gave no rate.
    public enum Rejection: Hashable, Sendable {
        /// The rate exceeds ``Configuration/maximumRevolutionsPerMinute``.
        case implausibleRate(revolutionsPerMinute: Double)
        /// Revolutions changed but the event time did not.
        case revolutionsWithoutTime
        /// The host saw no frame for longer than the event time's wrap period, so the delta is ambiguous.
        case gapLongerThanWrap(seconds: Double)
    }

    /// The outcome of one frame.
    public enum Update: Hashable, Sendable {
        /// The first frame, or the first after a reset: no rate yet.
        case baseline
        /// A new rate from new revolution events.
        case rate(revolutionsPerMinute: Double)
        /// No new event; the last rate is held.
        case held(revolutionsPerMinute: Double)
        /// No new event for too many frames: the rate is zero.
        case stopped
        /// The wheel turned backwards: the forward rate is zero.
        case reverse
        /// The frame was refused and became the new baseline.
        case rejected(Rejection)

        /// The rate to report, if any: `nil` for a baseline or a rejected frame, 0 when stopped or reversing.
        public var revolutionsPerMinute: Double? {
            switch self {
            case .rate(let value), .held(let value): value
            case .stopped, .reverse: 0
            case .baseline, .rejected: nil
            }
        }
    }

    /// The counter's behaviour.
    public let configuration: Configuration
    private var last: RevolutionData?
    private var lastReceivedAt: Double?
    private var lastRate: Double = 0
    private var framesWithoutEvent = 0

    /// Creates a deriver with no baseline.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Forgets the baseline, as after a reconnect (sensors may zero their counters).
    public mutating func reset() {
        self = RevolutionRateDeriver(configuration: configuration)
    }

    /// Feeds one counter reading received at `receivedAt` (seconds on any monotonic host clock).
    public mutating func update(_ reading: RevolutionData, receivedAt: Double) -> Update {
        defer {
            last = reading
            lastReceivedAt = receivedAt
        }
        guard let previous = last, let previousTime = lastReceivedAt else { return .baseline }
        let gap = receivedAt - previousTime
        if gap > configuration.wrapPeriod {
            framesWithoutEvent = 0
            return .rejected(.gapLongerThanWrap(seconds: gap))
        }
        let ticks = Int(reading.lastEventTime &- previous.lastEventTime)
        let revolutions: Int
        if configuration.counterBits == 16 {
            revolutions = Int(
                UInt16(truncatingIfNeeded: reading.revolutions) &- UInt16(truncatingIfNeeded: previous.revolutions))
        } else {
            revolutions = Int(Int32(bitPattern: reading.revolutions &- previous.revolutions))
        }
        if revolutions < 0 {
            framesWithoutEvent = 0
            lastRate = 0
            return .reverse
        }
        if ticks == 0 {
            if revolutions != 0 { return .rejected(.revolutionsWithoutTime) }
            framesWithoutEvent += 1
            if framesWithoutEvent > configuration.heldFramesBeforeStop {
                lastRate = 0
                return .stopped
            }
            return .held(revolutionsPerMinute: lastRate)
        }
        framesWithoutEvent = 0
        let rate = Double(revolutions) * 60 * configuration.ticksPerSecond / Double(ticks)
        if rate > configuration.maximumRevolutionsPerMinute {
            return .rejected(.implausibleRate(revolutionsPerMinute: rate))
        }
        lastRate = rate
        return .rate(revolutionsPerMinute: rate)
    }
}
