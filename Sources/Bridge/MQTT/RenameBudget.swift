import Foundation

/// How often a strap's new name may re-announce its Home Assistant configs: a burst of
/// ``burst``, then one more every ``interval`` seconds. A device that changes its name with every
/// advertisement (a spoofer of a configured strap's address) must not flood the broker.
struct RenameBudget: Equatable, Sendable {
    static let burst = 3.0
    static let interval = 10.0

    private var left = Self.burst
    private var at: Date?

    /// Takes one rename at `now` when there is budget for it.
    mutating func take(at now: Date) -> Bool {
        if let at { left = min(Self.burst, left + max(0, now.timeIntervalSince(at)) / Self.interval) }
        at = now
        guard left >= 1 else { return false }
        left -= 1
        return true
    }
}
