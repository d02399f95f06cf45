public import Foundation
import Samples
public import WorkoutExport
public import WorkoutStore
import Workouts

/// A stored workout as a FIT, TCX or CSV file: shared by `hrbridge workouts export`,
/// `workout run --export` and the API's export route.
public enum WorkoutFile {
    /// The file's bytes; `wide` picks the one-row-per-second CSV layout.
    public static func bytes(workout id: UUID, format: ExportFormat, wide: Bool = false, store: WorkoutStore)
        async throws
        -> [UInt8]
    {
        guard let workout = try await store.workout(id).summary else { throw ExportError.workoutNotFinished }
        var samples: [QuantitySample] = []
        for type in QuantityType.allCases { samples += try await store.samples(type: type, workout: id) }
        switch format {
        case .fit: return try FITExporter.export(workout, samples: samples)
        case .tcx: return Array(try TCXExporter.export(workout, samples: samples).utf8)
        case .csv:
            let primaries = CountedSamples.primaries(of: workout)
            return Array(
                (wide
                    ? try CSVExporter.wide(samples, primaries: primaries)
                    : try CSVExporter.long(samples, primaries: primaries)).utf8)
        }
    }

    /// The media type of a format.
    public static func contentType(_ format: ExportFormat) -> String {
        switch format {
        case .fit: "application/vnd.ant.fit"
        case .tcx: "application/vnd.garmin.tcx+xml"
        case .csv: "text/csv"
        }
    }
}
