public import Foundation
public import Sensors
public import WorkoutExport
public import WorkoutStore
import Workouts

/// A stored workout's raw signals (ECG, acceleration) as EDF+ files or CSV, read from the store a
/// page of frames at a time: shared by `hrbridge workouts export` and the API.
public enum WorkoutWaveformFile {
    /// Writes EDF+ files named from `prefix` (one per strap, signal and run without a gap) with the
    /// workout's start, events and end as annotations; only `kinds` when given.
    public static func edf(
        workout id: UUID, prefix: String, kinds: Set<WaveformKind>? = nil, store: WorkoutStore
    ) async throws -> EDFWaveformFiles.Report {
        let (stored, summaries) = try await streams(of: id, kinds: kinds, store: store)
        var annotations = [EDFWriter.Annotation(date: stored.start, text: "workout start")]
        for event in try await store.events(of: id) {
            // A lap or segment lasts: its onset and duration; a pause or resume is an instant.
            annotations.append(
                EDFWriter.Annotation(
                    date: event.dateInterval.start, duration: event.dateInterval.duration, text: event.kind.rawValue))
        }
        if let end = stored.end { annotations.append(EDFWriter.Annotation(date: end, text: "workout end")) }
        let files = EDFWaveformFiles(prefix: prefix, annotations: annotations)
        for summary in summaries {
            // A stream's first frame opens its first file, whether or not the strap streamed before.
            try await store.forEachWaveformPage(workout: id, sensor: summary.sensor, kind: summary.kind) { page in
                for frame in page { files.record(frame) }
            }
        }
        return files.finish()
    }

    /// Writes one signal's CSV through `write`, a page at a time; returns the samples written.
    @discardableResult
    public static func csv(
        workout id: UUID, kind: WaveformKind, store: WorkoutStore, write: (String) async throws -> Void
    ) async throws -> Int {
        let (_, summaries) = try await streams(of: id, kinds: [kind], store: store)
        var csv = WaveformCSV(kind: kind)
        try await write(csv.header)
        var samples = 0
        for summary in summaries {
            try await store.forEachWaveformPage(workout: id, sensor: summary.sensor, kind: kind) { page in
                samples += page.reduce(0) { $0 + $1.sampleCount }
                try await write(csv.rows(page))
            }
        }
        return samples
    }

    /// The finished workout and its raw signals' streams; throws when it is active or holds none.
    private static func streams(of id: UUID, kinds: Set<WaveformKind>?, store: WorkoutStore) async throws
        -> (StoredWorkout, [WaveformSummary])
    {
        let stored = try await store.workout(id)
        guard !stored.isActive else { throw ExportError.workoutNotFinished }
        let summaries = try await store.waveformSummaries(of: id).filter { kinds?.contains($0.kind) ?? true }
        guard !summaries.isEmpty else { throw ExportError.noRawSignals }
        return (stored, summaries)
    }
}
