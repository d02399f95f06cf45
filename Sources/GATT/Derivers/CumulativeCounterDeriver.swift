/// Turns a cumulative counter (Energy Expended, accumulated energy, total distance) into increments.
///
/// The first reading is a baseline, since many machines send lifetime totals. A counter that
/// saturates (Heart Rate Energy Expended stays at 0xFFFF) reports `.saturated` and never
/// accumulates across it; a counter that drops is treated as reset, and the new value counts as
/// the increment since the reset. Wrapping counters add across the wrap.
public struct CumulativeCounterDeriver: Hashable, Sendable {
    /// What the counter does when it reaches its maximum.
    public enum Overflow: Hashable, Sendable {
        /// It stays at the maximum until reset (Heart Rate Energy Expended).
        case saturates
        /// It wraps to zero; a drop of more than half the range is still taken as a reset.
        case wraps
    }

    /// The outcome of one reading.
    public enum Update: Hashable, Sendable {
        /// The first reading: nothing to add.
        case baseline
        /// The counter grew by this many units.
        case increment(UInt32)
        /// The counter is at its maximum: increments are lost until a reset.
        case saturated
        /// The counter went down (a reset): the new value is what accrued since.
        case reset(increment: UInt32)

        /// The units to add: 0 for a baseline or a saturated counter.
        public var increment: UInt32 {
            switch self {
            case .increment(let value), .reset(let value): value
            case .baseline, .saturated: 0
            }
        }
    }

    /// The counter's width in bits.
    public let bits: Int
    /// What the counter does at its maximum.
    public let overflow: Overflow
    private var last: UInt32?

    /// Creates a deriver with no baseline.
    public init(bits: Int, overflow: Overflow) {
        self.bits = bits
        self.overflow = overflow
    }

    /// Heart Rate Energy Expended: 16-bit kJ, saturating at 0xFFFF.
    public static var energyExpended: CumulativeCounterDeriver { .init(bits: 16, overflow: .saturates) }

    private var maximum: UInt32 { bits >= 32 ? UInt32.max : (1 << UInt32(bits)) - 1 }

    /// Forgets the baseline, as after a reconnect.
    public mutating func reset() { last = nil }

    /// Feeds one reading.
    public mutating func update(_ value: UInt32) -> Update {
        defer { last = value }
        guard let previous = last else { return value == maximum && overflow == .saturates ? .saturated : .baseline }
        if overflow == .saturates && value == maximum { return .saturated }
        if value >= previous { return .increment(value - previous) }
        if overflow == .wraps {
            let delta = (value &- previous) & maximum
            if delta <= maximum / 2 { return .increment(delta) }
        }
        return .reset(increment: value)
    }
}
