/// liblsl's clock minus the events' clock, kept steady: each reading brackets one look at the
/// events' clock between two of liblsl's, and a reading whose bracket is wide (the thread was
/// preempted between the looks) would shift every timestamp pushed with it. So the offset moves
/// only for a reading that is tighter, or one that disagrees by more than both brackets and
/// ``stepTolerance`` together: the events' clock was stepped or has slewed away.
public struct ClockOffsetEstimate: Hashable, Sendable {
    /// How far readings may disagree, beyond their brackets, before the offset follows them (s).
    public static let stepTolerance = 0.002

    /// The offset taken (s; nil before the first reading).
    public private(set) var offset: Double?
    /// Half the bracket of the reading it came from (s).
    public private(set) var uncertainty = Double.infinity

    /// No reading yet.
    public init() {}

    /// Takes one reading: liblsl's clock before and after a look at the events' clock (all in s).
    /// Returns the offset to use now.
    @discardableResult
    public mutating func read(lslBefore: Double, events: Double, lslAfter: Double) -> Double {
        let half = max(0, lslAfter - lslBefore) / 2
        let measured = lslBefore + half - events
        guard let offset else {
            self.offset = measured
            uncertainty = half
            return measured
        }
        let apart = abs(measured - offset)
        let stepped = apart > uncertainty + half + Self.stepTolerance
        if stepped || half < uncertainty {
            self.offset = measured
            uncertainty = half
        }
        return self.offset!
    }
}
