/// R peaks in one run of ECG samples (no gap inside), as a pure value.
///
/// The QRS complexes are where the signal's steepness, smoothed over ``smoothing`` seconds, rises
/// above ``gradientWeight`` times its average over ``averaging`` seconds (the rule of NeuroKit2's
/// default `neurokit` method); complexes shorter than ``minimumLengthWeight`` of their mean length
/// are noise. The R peak is the complex's highest sample, placed between samples by a parabola
/// through it and its neighbours (at 130 Hz a sample is 7.7 ms: the parabola brings an R peak
/// to about a millisecond); it must be a summit inside the run, so a complex cut by the run's
/// start or end has a peak only when the run holds it. A peak within ``minimumDelay`` of the one before is the same beat's
/// T wave or noise and is dropped. Slow baseline wander barely changes a gradient, so no
/// filtering comes first.
public struct RPeakDetector: Hashable, Sendable {
    /// Samples per second.
    public var sampleRate: Double
    /// The steepness is smoothed over this long (s).
    public static let smoothing = 0.1
    /// …and compared with its average over this long (s).
    public static let averaging = 0.75
    /// A complex is where the smoothed steepness exceeds this many times its average.
    public static let gradientWeight = 1.5
    /// Complexes shorter than this share of the run's mean complex length are dropped.
    public static let minimumLengthWeight = 0.4
    /// The least time between two R peaks (s): 200 bpm.
    public static let minimumDelay = 0.3

    /// A detector for samples at `sampleRate` Hz.
    public init(sampleRate: Double) {
        self.sampleRate = sampleRate
    }

    /// The R peaks of `signal` (µV, one run), as fractional sample positions, in order.
    public func peaks(in signal: [Double]) -> [Double] {
        let count = signal.count
        guard count >= 3, sampleRate > 0 else { return [] }
        var steepness = [Double](repeating: 0, count: count)
        steepness[0] = abs(signal[1] - signal[0])
        steepness[count - 1] = abs(signal[count - 1] - signal[count - 2])
        for index in 1..<(count - 1) { steepness[index] = abs(signal[index + 1] - signal[index - 1]) / 2 }
        let smoothed = Self.movingAverage(steepness, width: max(1, Int((Self.smoothing * sampleRate).rounded())))
        let average = Self.movingAverage(steepness, width: max(1, Int((Self.averaging * sampleRate).rounded())))

        // Complexes from where the steepness rises through the threshold to where it falls back
        // (one under way at the run's start or end is cut there).
        var complexes: [Range<Int>] = []
        var start: Int?
        for index in 0..<count {
            let inside = smoothed[index] > Self.gradientWeight * average[index]
            if inside, start == nil { start = index }
            if !inside, let begun = start {
                complexes.append(begun..<index)
                start = nil
            }
        }
        if let begun = start { complexes.append(begun..<count) }
        guard !complexes.isEmpty else { return [] }
        let meanLength = Double(complexes.map(\.count).reduce(0, +)) / Double(complexes.count)
        let shortest = meanLength * Self.minimumLengthWeight

        var peaks: [Double] = []
        let minimumGap = Self.minimumDelay * sampleRate
        for complex in complexes where Double(complex.count) > shortest {
            var highest = complex.lowerBound
            for index in complex where signal[index] > signal[highest] { highest = index }
            // A complex cut by the run's start or end has its R peak only if its highest sample is
            // a summit inside the run (the first of two equal ones is: the peak lies between them).
            guard highest > 0, highest < count - 1, signal[highest] > signal[highest - 1],
                signal[highest] >= signal[highest + 1]
            else { continue }
            let position = Double(highest) + Self.vertexOffset(signal, at: highest)
            if let last = peaks.last, position - last < minimumGap { continue }
            peaks.append(position)
        }
        return peaks
    }

    /// Where the parabola through a sample and its neighbours peaks, relative to the sample (−½…½).
    static func vertexOffset(_ signal: [Double], at index: Int) -> Double {
        guard index > 0, index < signal.count - 1 else { return 0 }
        let (before, at, after) = (signal[index - 1], signal[index], signal[index + 1])
        let curvature = before - 2 * at + after
        guard curvature < 0 else { return 0 }
        return min(max(0.5 * (before - after) / curvature, -0.5), 0.5)
    }

    /// A centred moving average (`width` samples; shorter at the ends, where fewer samples exist).
    static func movingAverage(_ values: [Double], width: Int) -> [Double] {
        var prefix = [Double](repeating: 0, count: values.count + 1)
        for (index, value) in values.enumerated() { prefix[index + 1] = prefix[index] + value }
        let before = (width - 1) / 2
        let after = width - 1 - before
        return values.indices.map { index in
            let low = max(0, index - before)
            let high = min(values.count - 1, index + after)
            return (prefix[high + 1] - prefix[low]) / Double(high - low + 1)
        }
    }
}
