/// Why an export was refused.
public enum ExportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The workout has no samples to write.
    case emptyWorkout
    /// The workout is still active.
    case workoutNotFinished
    /// The workout holds no raw signal (of the kind asked for).
    case noRawSignals

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .emptyWorkout: "the workout has no samples to export"
        case .workoutNotFinished: "the workout is still active; finish or recover it first"
        case .noRawSignals: "the workout holds no raw signal (ECG or acceleration) of that kind"
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
