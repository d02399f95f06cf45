import Foundation

/// When Home Assistant's `online` (it restarted and needs every config again) is answered.
/// Anyone allowed on the broker may publish it, and each answer is five retained configs per
/// strap: at most one answer per ``interval``; those asked within it are answered once, at its
/// end, so Home Assistant restarting twice in a row still gets the configs after its second start.
/// A pure value: ``MQTTBridge`` asks it, on its clock.
struct DiscoveryRefresh: Sendable, Equatable {
    /// What to do with an `online`.
    enum Decision: Equatable, Sendable {
        /// Publish the configs now.
        case now
        /// Publish them at this date (nothing is scheduled yet).
        case at(Date)
        /// Already scheduled: this one is counted, nothing more.
        case coalesced
    }

    /// The least time between two answers.
    static let interval: TimeInterval = 10

    /// When the configs last went out.
    private(set) var last: Date?
    /// Whether an answer is scheduled.
    private(set) var scheduled = false

    /// An `online` heard at `now`.
    mutating func asked(at now: Date) -> Decision {
        if scheduled { return .coalesced }
        // A clock set back counts as a long time since: the configs go out.
        guard let last, now >= last, now < last.addingTimeInterval(Self.interval) else {
            last = now
            return .now
        }
        scheduled = true
        return .at(last.addingTimeInterval(Self.interval))
    }

    /// The scheduled answer went out at `now`.
    mutating func answered(at now: Date) {
        scheduled = false
        last = now
    }
}
