public import Foundation
import Samples

extension WorkoutStore {
    /// The end of the last sample dated after `now`, rounded up to the second; nil when none is.
    /// A simulated run faster than real time ends in the future, and the store keeps one sample per
    /// strap, type, moment and value: a later run sharing those moments would keep few samples of
    /// its own, so it starts here instead. A store that cannot answer gives nil (its writes fail
    /// later, loudly).
    public func endOfSamples(after now: Date) async -> Date? {
        var end: Date?
        for type in QuantityType.allCases {
            guard
                let last = try? await samples(
                    type: type, from: now.addingTimeInterval(-86_400), limit: 1, ascending: false
                ).first, last.end > max(now, end ?? now)
            else { continue }
            end = last.end
        }
        return end.map { Date(timeIntervalSinceReferenceDate: $0.timeIntervalSinceReferenceDate.rounded(.up)) }
    }
}
