public import Foundation
import JSONSupport
public import Sensors

/// One frame of a raw signal as a JSON line (`monitor --ecg --acc --json`, the live API's `ecg` and
/// `acc` messages): the first sample's host time (ISO 8601 to the millisecond, and `t0` in Unix
/// seconds to the microsecond), the spacing, whether it follows the previous frame, and the samples
/// as compact integer arrays: `values` in µV for ECG, `x`, `y`, `z` in mG for acceleration.
///
/// ```json
/// {"kind":"ecg","sensor":"A0:9E:…","time":"2026-11-25T17:00:00.123Z","t0":1795626000.123456,
///  "interval":0.0076923,"rate":130,"continuous":true,"sensorTimestamp":599616000123456789,
///  "unit":"uV","values":[512,498,…]}
/// ```
public enum WaveformJSON {
    /// The line, with `session` when the frame belongs to one.
    public static func line(_ waveform: SensorWaveform, session: UUID? = nil) -> [UInt8] {
        var writer = JSONObjectWriter(capacity: 96 + 6 * waveform.values.count)
        writer.add("kind", waveform.kind.rawValue)
        if let session { writer.add("session", session.uuidString.lowercased()) }
        writer.add("sensor", waveform.sensor.address)
        writer.add("time", ISO8601.format(waveform.start))
        writer.add("t0", (waveform.start.timeIntervalSince1970 * 1e6).rounded() / 1e6)
        writer.add("interval", (waveform.interval * 1e9).rounded() / 1e9)
        writer.add("rate", waveform.sampleRate)
        writer.add("continuous", waveform.continuous)
        writer.add("sensorTimestamp", Double(waveform.sensorTimestamp))
        switch waveform.kind {
        case .ecg:
            writer.add("unit", "uV")
            writer.add("values", integers: waveform.values)
        case .acc:
            writer.add("unit", "mG")
            writer.add(
                "x", integers: stride(from: 0, to: waveform.values.count, by: 3).lazy.map { waveform.values[$0] })
            writer.add(
                "y", integers: stride(from: 1, to: waveform.values.count, by: 3).lazy.map { waveform.values[$0] })
            writer.add(
                "z", integers: stride(from: 2, to: waveform.values.count, by: 3).lazy.map { waveform.values[$0] })
        }
        return writer.finish()
    }
}
