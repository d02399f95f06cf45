import Foundation
public import Sensors

/// Raw signals as CSV, one row per sample: `time` (Unix seconds, to the microsecond, from the
/// clock model), `sensor` (its address), `run` (1, then one more after each gap) and the values
/// (`ecg_uV`, or `x_mG,y_mG,z_mG`). Rows come in the frames' order, so a writer can stream a
/// workout's hours of ECG a page at a time.
public struct WaveformCSV: Sendable {
    /// The signal of every row.
    public let kind: WaveformKind
    /// The current run per strap, counting from 1.
    private var runs: [String: Int] = [:]

    public init(kind: WaveformKind) { self.kind = kind }

    /// The header line.
    public var header: String {
        switch kind {
        case .ecg: "time,sensor,run,ecg_uV\n"
        case .acc: "time,sensor,run,x_mG,y_mG,z_mG\n"
        }
    }

    /// The rows of `frames` (frames of another signal are skipped); a frame that does not follow
    /// its strap's previous one starts a new run.
    public mutating func rows(_ frames: [SensorWaveform]) -> String {
        var text = ""
        for frame in frames where frame.kind == kind {
            let address = frame.sensor.address
            let run: Int
            if let current = runs[address] {
                run = frame.continuous ? current : current + 1
            } else {
                run = 1
            }
            runs[address] = run
            let channels = kind.channels
            let sensorField = Self.field(address)
            let prefix = ",\(sensorField),\(run)"
            for index in 0..<frame.sampleCount {
                text += Self.seconds(frame.time(ofSample: index).timeIntervalSince1970)
                text += prefix
                for channel in 0..<channels { text += ",\(frame.values[index * channels + channel])" }
                text += "\n"
            }
        }
        return text
    }

    /// Unix seconds to the microsecond (`1795626000.123456`), without `String(format:)`'s cost per row.
    static func seconds(_ value: Double) -> String {
        let micros = Int64((value * 1_000_000).rounded())
        let whole = micros / 1_000_000
        let fraction = abs(micros % 1_000_000)
        let digits = String(fraction)
        let sign = micros < 0 && whole == 0 ? "-" : ""
        return sign + String(whole) + "." + String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// A field quoted when it holds a comma, quote or line break (an address never should).
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
