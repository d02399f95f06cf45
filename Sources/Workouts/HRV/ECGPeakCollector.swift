import Foundation
public import Sensors

/// A strap's R peaks from its ECG frames, fed in time order: each run (frames that follow one
/// another without a gap) is searched as a whole when it ends, so a peak is never made up across a
/// gap, and only the run under way is held in memory.
public struct ECGPeakCollector: Sendable {
    /// Each finished run's R-peak times (s since 1970), in order.
    public private(set) var runs: [[Double]] = []
    /// ECG frames taken; frames of another signal are ignored.
    public private(set) var frames = 0
    private var values: [Double] = []
    private var times: [Double] = []
    private var sampleRate: Int?

    /// Nothing collected yet.
    public init() {}

    /// Takes the next ECG frame of the strap.
    public mutating func add(_ frame: SensorWaveform) {
        guard frame.kind == .ecg, frame.sampleCount > 0 else { return }
        if !frame.continuous || sampleRate != frame.sampleRate { finishRun() }
        sampleRate = frame.sampleRate
        frames += 1
        let start = frame.start.timeIntervalSince1970
        for index in 0..<frame.sampleCount {
            values.append(Double(frame.values[index]))
            times.append(start + Double(index) * frame.interval)
        }
    }

    /// Every run's R-peak times, the last run included.
    public mutating func finish() -> [[Double]] {
        finishRun()
        return runs
    }

    private mutating func finishRun() {
        defer {
            values = []
            times = []
        }
        guard let sampleRate, !values.isEmpty else { return }
        let positions = RPeakDetector(sampleRate: Double(sampleRate)).peaks(in: values)
        guard !positions.isEmpty else { return }
        runs.append(
            positions.map { position in
                let index = min(Int(position), times.count - 1)
                let fraction = position - Double(index)
                let step = index + 1 < times.count ? times[index + 1] - times[index] : 1 / Double(sampleRate)
                return times[index] + fraction * step
            })
    }
}
