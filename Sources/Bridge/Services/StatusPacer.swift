import Foundation

/// Decides when systemd's status line is worked out again: at once for the first change after a
/// quiet second, and once at the end of the second for every change that came within it. A class
/// of 60 publishes 60 session snapshots a second; systemd needs the line at most once.
struct StatusPacer {
    enum Action: Equatable {
        /// Work the line out now.
        case now
        /// Work it out when the clock reaches this date (arm a timer).
        case at(Date)
        /// A later update is due already.
        case nothing
    }

    /// The shortest time between two lines.
    var spacing: TimeInterval = 1
    private var nextAllowed = Date.distantPast
    private var pending = false

    /// Something that may change the line happened at `now`.
    mutating func changed(at now: Date) -> Action {
        if pending { return .nothing }
        guard now >= nextAllowed else {
            pending = true
            return .at(nextAllowed)
        }
        nextAllowed = now.addingTimeInterval(spacing)
        return .now
    }

    /// The armed date came: whether to work the line out.
    mutating func deadlineReached(at now: Date) -> Bool {
        guard pending else { return false }
        pending = false
        nextAllowed = now.addingTimeInterval(spacing)
        return true
    }
}
