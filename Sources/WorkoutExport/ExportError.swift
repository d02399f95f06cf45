public import Foundation

/// Why an export was refused.
public enum ExportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The workout has no samples to write.
    case emptyWorkout
    /// The workout is still active.
    case workoutNotFinished
    /// The workout holds no raw signal (of the kind asked for).
    case noRawSignals
    /// A time of the workout that FIT's `date_time` cannot hold (before 1998-07-03T21:24:16Z,
    /// after 2126-02-06T06:28:14Z).
    case dateOutsideFIT(Date)

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .emptyWorkout: "the workout has no samples to export"
        case .workoutNotFinished: "the workout is still active; finish or recover it first"
        case .noRawSignals: "the workout holds no raw signal (ECG or acceleration) of that kind"
        case .dateOutsideFIT(let date):
            "the workout's time \(date.formatted(.iso8601)) is outside what FIT can hold "
                + "(1998-07-03T21:24:16Z to 2126-02-06T06:28:14Z): export it as TCX or CSV"
        }
    }
}

/// The formats hrbridge writes.
public enum ExportFormat: String, Hashable, Sendable, CaseIterable {
    /// Garmin FIT activity file.
    case fit
    /// TrainingCenterDatabase v2.
    case tcx
    /// Comma-separated values (long format, or per second with `wide`).
    case csv
}
