public import Samples
public import Sensors
public import Workouts

/// Which samples a workout's totals count: every reading, and of each cumulative amount (energy,
/// distance) only its primary source's — two sensors on one person measure the same kilojoules
/// and metres, so an amount comes from one source, as the builder's statistics do.
public enum CountedSamples {
    /// The primary source of each cumulative type of `workout`, where it has one.
    public static func primaries(of workout: Workout) -> [QuantityType: SampleSource] {
        var result: [QuantityType: SampleSource] = [:]
        for type in QuantityType.allCases where type.aggregationStyle == .cumulative {
            result[type] = workout.primarySource(for: type)
        }
        return result
    }

    /// `samples` without the amounts of sources other than their type's primary.
    public static func filter(
        _ samples: [QuantitySample], primaries: [QuantityType: SampleSource]
    ) -> [QuantitySample] {
        guard !primaries.isEmpty else { return samples }
        return samples.filter { counts($0, primaries: primaries) }
    }

    /// Whether the workout's figures count `sample`: a reading always, an amount when its type has
    /// no primary or it came from the primary's strap.
    public static func counts(_ sample: QuantitySample, primaries: [QuantityType: SampleSource]) -> Bool {
        guard sample.type.aggregationStyle == .cumulative, let primary = primaries[sample.type] else { return true }
        // The primary strap through whichever adapter heard it, as the workout's figures count it.
        return sample.source.address == primary.address
    }
}
