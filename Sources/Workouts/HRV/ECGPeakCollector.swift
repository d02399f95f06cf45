import Foundation
public import Sensors

/// A strap's R peaks from its ECG frames, fed in time order: each run (frames that follow one
/// another without a gap) is searched a stretch at a time, so a peak is never made up across a gap
/// and memory stays bounded however long a run lasts (an hour of 130 Hz ECG held whole was 26 MB).
///
/// Stretches overlap by ``margin`` on each side: every figure the detector works out at a sample
/// depends only on the samples within its averaging window (0.75 s) and a complex's length, so a
/// peak taken at least a margin inside a stretch is the peak the whole run gives. The one thing
/// taken per stretch rather than per run is the mean complex length that rules out noise.
public struct ECGPeakCollector: Sendable {
    /// Each finished run's R-peak times (s since 1970), in order.
    public private(set) var runs: [[Double]] = []
    /// ECG frames taken; frames of another signal are ignored.
    public private(set) var frames = 0
    /// The samples held now: at most a stretch, its margins and a frame.
    public var heldSamples: Int { values.count }
    /// Seconds searched at a time, beside the margins.
    public static let stretch = 60.0
    /// Seconds of context kept on each side of what a search decides.
    public static let margin = 2.0

    private var values: [Double] = []
    private var times: [Double] = []
    private var sampleRate: Int?
    /// The run under way's peaks so far.
    private var peaks: [Double] = []
    /// Samples before this index (of `values`) are decided: their peaks are in `peaks`.
    private var decided = 0

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
        let margin = Int((Self.margin * Double(frame.sampleRate)).rounded(.up))
        if values.count - decided >= Int(Self.stretch * Double(frame.sampleRate)) + margin {
            search(upTo: values.count - margin)
            // What the next search needs before its first undecided sample: a margin of context.
            let drop = max(0, decided - margin)
            values.removeFirst(drop)
            times.removeFirst(drop)
            decided -= drop
        }
    }

    /// Every run's R-peak times, the last run included.
    public mutating func finish() -> [[Double]] {
        finishRun()
        return runs
    }

    private mutating func finishRun() {
        search(upTo: values.count)
        if !peaks.isEmpty { runs.append(peaks) }
        peaks = []
        values = []
        times = []
        decided = 0
    }

    /// Decides the samples from `decided` to `end`: the peaks the held samples place there.
    private mutating func search(upTo end: Int) {
        defer { decided = max(decided, end) }
        guard let sampleRate, end > decided, !values.isEmpty else { return }
        let minimumGap = RPeakDetector.minimumDelay
        for position in RPeakDetector(sampleRate: Double(sampleRate)).peaks(in: values)
        where position >= Double(decided) && position < Double(end) {
            let index = min(Int(position), times.count - 1)
            let fraction = position - Double(index)
            let step = index + 1 < times.count ? times[index + 1] - times[index] : 1 / Double(sampleRate)
            let time = times[index] + fraction * step
            // A peak just before this stretch's first sample was the last search's: the same beat.
            if let last = peaks.last, time - last < minimumGap { continue }
            peaks.append(time)
        }
    }
}
