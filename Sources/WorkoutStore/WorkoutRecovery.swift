import Foundation
public import Logging
import Samples
public import Workouts

/// Rebuilds an interrupted workout from the journal and the stored events, activities and samples.
public enum WorkoutRecovery {
    /// A collector in the state the workout had: zones and primary sources as journaled, events and
    /// activities replayed, statistics, zones, HRV and energy recomputed from the stored samples.
    ///
    /// Samples an earlier process left in the workout's spill file (it stopped while the store
    /// refused them) are stored first; while the store still refuses, this throws its error.
    public static func rebuild(
        _ record: ActiveSessionRecord, store: WorkoutStore, spillDirectory: String? = nil, logger: Logger
    ) async throws -> WorkoutCollector {
        let spilled = SampleStreamer(
            store: store, workout: record.workoutID, spillDirectory: spillDirectory, timer: nil, logger: logger)
        if spilled.health.spilled > 0 {
            logger.notice(
                "storing samples from the spill file", metadata: ["count": "\(spilled.health.spilled)"])
        }
        try await spilled.storeWaiting()
        var collector = WorkoutCollector(
            configuration: record.configuration, profile: record.profile, id: record.workoutID)
        for zones in record.customZones {
            try collector.setCustomZoneConfiguration(zones, for: zones.quantityType)
        }
        for (type, source) in record.primarySources {
            if let quantityType = Samples.QuantityType(rawValue: type) {
                collector.setPrimarySource(source, for: quantityType)
            }
        }
        try collector.begin(at: record.start)
        for (configuration, start, end) in try await store.activityIntervals(of: record.workoutID) {
            _ = try collector.beginActivity(configuration, at: start)
            if let end { _ = try collector.endActivity(at: end) }
        }
        _ = try collector.add(events: try await store.events(of: record.workoutID))
        var samples: [Samples.QuantitySample] = []
        for type in Samples.QuantityType.allCases {
            samples += try await store.samples(type: type, workout: record.workoutID)
        }
        samples.sort { $0.start < $1.start }
        var index = 0
        while index < samples.count {
            let end = min(index + 4096, samples.count)
            _ = try collector.add(Array(samples[index..<end]))
            index = end
        }
        return collector
    }

    /// Saves a journaled workout that nothing will record any more (every strap it followed is
    /// in another session) as the store holds it, ending where it last recorded
    /// (``WorkoutCollector/lastRecordedDate``), not when it was found; the journal row goes with it.
    public static func finishAsStored(
        _ record: ActiveSessionRecord, store: WorkoutStore, spillDirectory: String? = nil, logger: Logger
    ) async throws -> Workout {
        var collector = try await rebuild(record, store: store, spillDirectory: spillDirectory, logger: logger)
        try collector.end(at: collector.lastRecordedDate ?? record.start)
        let workout = try collector.finish()
        try await store.finish(workout)
        return workout
    }
}
