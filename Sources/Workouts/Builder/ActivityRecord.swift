import Foundation
import Samples

/// One activity's record inside the collector.
struct ActivityRecord: Sendable {
    let id = UUID()
    let configuration: WorkoutConfiguration
    let start: Date
    var end: Date?
    var statistics: [QuantityType: StatisticsAccumulator] = [:]

    init(configuration: WorkoutConfiguration, start: Date) {
        self.configuration = configuration
        self.start = start
    }
}
