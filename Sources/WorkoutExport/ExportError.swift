/// Why an export was refused.
public enum ExportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The workout has no samples to write.
    case emptyWorkout
    /// The workout is still active.
    case workoutNotFinished

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .emptyWorkout: "the workout has no samples to export"
        case .workoutNotFinished: "the workout is still active; finish or recover it first"
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
