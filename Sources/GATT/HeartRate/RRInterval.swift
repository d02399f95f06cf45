/// One beat-to-beat (RR) interval as a strap sends it, in units of 1/1024 s.
public struct RRInterval: Hashable, Sendable {
    /// The raw value in 1/1024 s.
    public var raw: UInt16

    /// Creates an interval from its raw 1/1024 s value.
    public init(raw: UInt16) { self.raw = raw }

    /// Creates the interval nearest to `seconds`, clamped to what 16 bits of 1/1024 s hold.
    public init(seconds: Double) {
        let ticks = (seconds * 1024).rounded()
        raw = ticks <= 0 ? 0 : ticks >= 65535 ? 65535 : UInt16(ticks)
    }

    /// The interval in seconds; exact, since 1/1024 is a power of two.
    public var seconds: Double { Double(raw) / 1024 }
}
