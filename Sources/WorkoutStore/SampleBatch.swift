public import Foundation
public import Samples

/// Samples to store together, attributed to one workout (or to none).
public struct SampleBatch: Sendable {
    /// The workout the samples belong to; nil for samples outside any workout.
    public var workout: UUID?
    public var samples: [QuantitySample]

    public init(workout: UUID?, samples: [QuantitySample]) {
        self.workout = workout
        self.samples = samples
    }
}
