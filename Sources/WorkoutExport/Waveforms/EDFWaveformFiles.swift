import Foundation
public import Sensors
import Synchronization

/// Raw signals into EDF+ files, one per strap, signal and run of samples without a gap
/// (`PREFIX-<address>-ecg.edf`, then `-ecg-2.edf` after a gap; `-acc` likewise): EDF readers read
/// only continuous files. Data records are one second (130 ECG samples; the acceleration rate's
/// samples per axis); a run's last samples short of a record are left out and counted, never
/// padded. Used by `monitor --edf` as frames arrive and by `workouts export --format edf` from the
/// store, which adds the workout's events as annotations.
public final class EDFWaveformFiles: Sendable {
    private struct Stream {
        var writer: EDFWriter
        var pending: [[Double]]
        var files = 1
        /// Samples left out at the ends of runs: fewer than a record, which EDF cannot hold unpadded.
        var dropped = 0
        var written: [WrittenFile] = []
        /// The next annotation this file has not written.
        var nextAnnotation = 0
        /// Its writer is closed and its file listed in `written` (the next run's could not be made).
        var closed = false
    }

    /// One file written.
    public struct WrittenFile: Sendable, Equatable {
        public var path: String
        /// One-second data records.
        public var records: Int
    }

    /// What was written, and what could not be.
    public struct Report: Sendable, Equatable {
        /// Files in the order their streams sort (address, then signal), runs in order.
        public var files: [WrittenFile] = []
        /// Samples left out at run ends, by "address signal".
        public var leftOut: [String: Int] = [:]
        /// Files that could not be created or written.
        public var failures: [String] = []

        /// One line per file, per stream with samples left out and per failure.
        public var lines: [String] {
            files.map { "hrbridge: wrote \($0.path) (\($0.records) records)" }
                + leftOut.keys.sorted().map {
                    "hrbridge: \($0): \(leftOut[$0]!) samples at run ends left out (less than a record)"
                } + failures.map { "hrbridge: EDF: \($0)" }
        }
    }

    private let prefix: String
    private let annotations: [EDFWriter.Annotation]
    /// Guards `streams` and `failures`, which every frame updates.
    private let streams = Mutex<[String: Stream]>([:])
    private let failures = Mutex<[String]>([])
    /// Streams whose file could not be created or written: said once, their later frames skipped
    /// (an unwritable directory would otherwise fail every frame of an hour).
    private let abandoned = Mutex<Set<String>>([])

    /// Files named from `prefix`; `annotations` (e.g. a workout's laps) go into every file that
    /// covers their time.
    public init(prefix: String, annotations: [EDFWriter.Annotation] = []) {
        self.prefix = prefix
        self.annotations = annotations.sorted { $0.date < $1.date }
    }

    /// The file of a strap's signal, for its `run`-th run (1: no suffix).
    public func path(for sensor: String, _ kind: WaveformKind, run: Int = 1) -> String {
        "\(prefix)-\(sensor.replacingOccurrences(of: ":", with: "-"))-\(kind.rawValue)\(run > 1 ? "-\(run)" : "").edf"
    }

    private func writer(for waveform: SensorWaveform, run: Int) throws(EDFWriter.Failure) -> EDFWriter {
        let signals: [EDFWriter.Signal] =
            waveform.kind == .ecg
            ? [.init(label: "ECG", transducer: "chest strap electrodes", physicalDimension: "uV")]
            : ["X", "Y", "Z"].map { .init(label: "ACC \($0)", transducer: "accelerometer", physicalDimension: "mG") }
        return try EDFWriter(
            path: path(for: waveform.sensor.address, waveform.kind, run: run), signals: signals,
            samplesPerRecord: waveform.sampleRate, recordDuration: 1, start: waveform.start,
            recording: "hrbridge \(waveform.sensor.address) \(waveform.kind.rawValue)")
    }

    /// Adds a frame; a frame that does not follow the stream's previous one (`continuous` false)
    /// ends that file and starts the next run's.
    public func record(_ waveform: SensorWaveform) {
        let key = "\(waveform.sensor.address) \(waveform.kind.rawValue)"
        guard !abandoned.withLock({ $0.contains(key) }) else { return }
        let channels = waveform.kind.channels
        let columns = (0..<channels).map { channel in
            stride(from: channel, to: waveform.values.count, by: channels).map { Double(waveform.values[$0]) }
        }
        streams.withLock { streams in
            do {
                if var stream = streams[key], !waveform.continuous {
                    // A gap: this run's file ends here, the next run gets its own.
                    stream.dropped += stream.pending[0].count
                    stream.pending = Array(repeating: [], count: channels)
                    try stream.writer.close()
                    stream.written.append(WrittenFile(path: stream.writer.path, records: stream.writer.records))
                    stream.closed = true
                    // Kept as it stands: if the next run's file cannot be made, this one is still listed.
                    streams[key] = stream
                    stream.files += 1
                    stream.writer = try writer(for: waveform, run: stream.files)
                    stream.closed = false
                    stream.pending = Array(repeating: [], count: channels)
                    stream.nextAnnotation = 0
                    streams[key] = stream
                } else if streams[key] == nil {
                    streams[key] = Stream(
                        writer: try writer(for: waveform, run: 1), pending: Array(repeating: [], count: channels))
                }
            } catch {
                abandon(key, error)
                return
            }
            guard var stream = streams[key] else { return }
            for channel in 0..<channels { stream.pending[channel] += columns[channel] }
            let size = stream.writer.samplesPerRecord
            while stream.pending[0].count >= size {
                do {
                    let due = annotations(for: &stream)
                    let taken = try stream.writer.write(stream.pending.map { Array($0.prefix(size)) }, annotations: due)
                    // What did not fit in this record's annotation bytes goes in the next.
                    stream.nextAnnotation -= due.count - taken
                } catch {
                    abandon(key, error)
                    break
                }
                stream.pending = stream.pending.map { Array($0.dropFirst(size)) }
            }
            streams[key] = stream
        }
    }

    private func abandon(_ key: String, _ error: any Error) {
        abandoned.withLock { _ = $0.insert(key) }
        failures.withLock { $0.append("\(key): \(error)") }
    }

    /// The annotations due by the end of the stream's next record and not written yet; those
    /// before a later run's first sample are skipped (an earlier run's), while a stream's first
    /// file takes them all (a negative onset); they are taken from the queue.
    private func annotations(for stream: inout Stream) -> [EDFWriter.Annotation] {
        let writer = stream.writer
        let fileStart = writer.start.addingTimeInterval(writer.firstOnset)
        let end = fileStart.addingTimeInterval(Double(writer.records + 1) * writer.recordDuration)
        var due: [EDFWriter.Annotation] = []
        while stream.nextAnnotation < annotations.count, annotations[stream.nextAnnotation].date < end {
            let annotation = annotations[stream.nextAnnotation]
            if annotation.date >= fileStart || stream.files == 1 { due.append(annotation) }
            stream.nextAnnotation += 1
        }
        return due
    }

    /// Closes every file.
    public func finish() -> Report {
        var report = streams.withLock { streams in
            var report = Report()
            for key in streams.keys.sorted() {
                var stream = streams[key]!
                if !stream.closed {
                    do {
                        try stream.writer.close()
                        stream.written.append(WrittenFile(path: stream.writer.path, records: stream.writer.records))
                    } catch {
                        report.failures.append("\(error)")
                    }
                }
                report.files += stream.written
                let dropped = stream.dropped + stream.pending[0].count
                if dropped > 0 { report.leftOut[key] = dropped }
            }
            return report
        }
        report.failures += failures.withLock { $0 }
        return report
    }
}
