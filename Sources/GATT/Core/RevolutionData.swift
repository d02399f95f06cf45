/// A cumulative revolution count with the time of the last revolution event, as CSC and CPS send them.
public struct RevolutionData: Hashable, Sendable {
    /// Cumulative revolutions (32-bit for wheels, 16-bit for cranks).
    public var revolutions: UInt32
    /// Time of the last revolution event, in ticks of the characteristic's time base; wraps at 65536.
    public var lastEventTime: UInt16

    /// Creates a counter reading.
    public init(revolutions: UInt32, lastEventTime: UInt16) {
        self.revolutions = revolutions
        self.lastEventTime = lastEventTime
    }
}

/// A maximum and minimum pair, as Cycling Power's extreme-value fields send them.
public struct ExtremeValues<Value: Hashable & Sendable>: Hashable, Sendable {
    public var maximum: Value
    public var minimum: Value

    /// Creates a pair.
    public init(maximum: Value, minimum: Value) {
        self.maximum = maximum
        self.minimum = minimum
    }
}
