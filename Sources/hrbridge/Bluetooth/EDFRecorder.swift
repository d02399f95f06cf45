import Foundation
import Sensors
import Synchronization
import WorkoutExport

/// `monitor --edf PREFIX`: each strap's raw signals into EDF+ files, one per strap, signal and run
/// of samples without a gap (`PREFIX-<address>-ecg.edf`, then `-ecg-2.edf` after a gap; `-acc`
/// likewise): EDF readers read only continuous files. Data records are one second (130 ECG
/// samples; the acceleration rate's samples per axis); a run's last samples short of a record are
/// left out and counted, never padded.
final class EDFRecorder: Sendable {
    private struct Stream {
        var writer: EDFWriter
        var pending: [[Double]]
        var files = 1
        /// Samples left out at the ends of runs: fewer than a record, which EDF cannot hold unpadded.
        var dropped = 0
        var written: [String] = []
    }

    private let prefix: String
    private let streams = Mutex<[String: Stream]>([:])
    private let failures = Mutex<[String]>([])

    init(prefix: String) { self.prefix = prefix }

    /// The file of a strap's signal, for its `run`-th run (1: no suffix).
    func path(for sensor: String, _ kind: WaveformKind, run: Int = 1) -> String {
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

    func record(_ waveform: SensorWaveform) {
        let key = "\(waveform.sensor.address) \(waveform.kind.rawValue)"
        let channels = waveform.kind.channels
        let columns = (0..<channels).map { channel in
            stride(from: channel, to: waveform.values.count, by: channels).map { Double(waveform.values[$0]) }
        }
        streams.withLock { streams in
            do {
                if var stream = streams[key], !waveform.continuous {
                    // A gap: this run's file ends here, the next run gets its own.
                    stream.dropped += stream.pending[0].count
                    try stream.writer.close()
                    stream.written.append(stream.writer.path + " (\(stream.writer.records) records)")
                    stream.files += 1
                    stream.writer = try writer(for: waveform, run: stream.files)
                    stream.pending = Array(repeating: [], count: channels)
                    streams[key] = stream
                } else if streams[key] == nil {
                    streams[key] = Stream(
                        writer: try writer(for: waveform, run: 1), pending: Array(repeating: [], count: channels))
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
                return
            }
            guard var stream = streams[key] else { return }
            for channel in 0..<channels { stream.pending[channel] += columns[channel] }
            let size = stream.writer.samplesPerRecord
            while stream.pending[0].count >= size {
                do {
                    try stream.writer.write(stream.pending.map { Array($0.prefix(size)) })
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
                stream.pending = stream.pending.map { Array($0.dropFirst(size)) }
            }
            streams[key] = stream
        }
    }

    /// Closes every file; one line per file written (records; samples left out) and per failure.
    func finish() -> [String] {
        let summary = streams.withLock { streams in
            streams.keys.sorted().flatMap { key -> [String] in
                var stream = streams[key]!
                do {
                    try stream.writer.close()
                } catch {
                    return ["hrbridge: \(error)"]
                }
                stream.written.append(stream.writer.path + " (\(stream.writer.records) records)")
                let dropped = stream.dropped + stream.pending[0].count
                return stream.written.map { "hrbridge: wrote \($0)" }
                    + (dropped > 0
                        ? ["hrbridge: \(key): \(dropped) samples at run ends left out (less than a record)"] : [])
            }
        }
        return summary + failures.withLock { $0.map { "hrbridge: EDF: \($0)" } }
    }
}
