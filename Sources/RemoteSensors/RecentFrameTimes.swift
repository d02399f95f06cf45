public import FoundationEssentials

/// A strap's latest live frames as two clocks saw them: when each reached the hub, and the time
/// its gateway gave it. A hub that started again learns which of its first frames a recovered
/// session recorded (by the hub's time) and asks the gateway for what came before it (by the
/// gateway's). A ring of fixed size: a frame costs no allocation.
public struct RecentFrameTimes: Sendable {
    /// Frames kept: a minute of a strap sending once a second, 16 s at 4 Hz.
    public static let capacity = 64

    private var heard: [Date] = []
    private var sent: [Date] = []
    private var next = 0

    /// None yet.
    public init() {}

    /// Notes a frame that reached the hub at `heard`, dated `sent` by its gateway.
    public mutating func append(heard: Date, sent: Date) {
        if self.heard.count < Self.capacity {
            self.heard.append(heard)
            self.sent.append(sent)
        } else {
            self.heard[next] = heard
            self.sent[next] = sent
        }
        next = (next + 1) % Self.capacity
    }

    /// The gateway's time of the kept frame that reached the hub at `heard` exactly; nil when
    /// none did (or it is no longer kept).
    public func sent(heardAt heard: Date) -> Date? {
        self.heard.firstIndex(of: heard).map { sent[$0] }
    }
}
