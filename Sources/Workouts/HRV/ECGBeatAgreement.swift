/// How a strap's own RR intervals agree with those its ECG's R peaks give, as a pure value.
///
/// A strap's beats carry exact intervals (1/1024 s), but their times only say when their frame
/// arrived: a strap sends one frame a second with the beats since the last, so a beat is placed
/// up to a second (and the radio's delay) after its R peak. The intervals are what identify a beat:
/// each is paired with the R peak, among those in ``searchBefore`` before to ``searchAfter`` after
/// it, where the strap's intervals around it (``window`` each side, unbroken on both sides) run
/// along the ECG's with the least median difference, at most ``pairingCost``; a pair stands only
/// when the beat is also the R peak's best. A paired beat's interval is compared with the time
/// back from its R peak to the one before in the same run: a peak the detector missed or added
/// shows as a large difference, not hidden.
public struct ECGBeatAgreement: Hashable, Sendable, Codable {
    /// How far before a beat's time its R peak may be (s): a frame's second, and the radio's delay.
    public static let searchBefore = 2.0
    /// …and after it (s): the beat's time is its frame's arrival, never before its R peak by much.
    public static let searchAfter = 0.25
    /// Intervals compared on each side of a beat to place it.
    public static let window = 3
    /// The largest median difference of those intervals at which a beat is placed (ms).
    public static let pairingCost = 40.0
    /// Two beats follow one another when their times are at most this much more apart than the
    /// later one's interval (s): the frames' lags differ by up to a second.
    public static let frameLag = 1.5
    /// Intervals this close agree (ms): about one sample of the H10's 130 Hz ECG.
    public static let agreement = 8.0

    /// R peaks found.
    public var rPeaks: Int
    /// Strap beats given.
    public var strapBeats: Int
    /// Beats paired with an R peak.
    public var pairedBeats: Int
    /// Intervals compared (a paired beat with an R peak before its own in the same run).
    public var comparedIntervals: Int
    /// Beats without an R peak.
    public var beatsWithoutPeak: Int
    /// R peaks without a beat, between the first and the last paired one.
    public var peaksWithoutBeat: Int
    /// The median of beat time minus R peak time (ms): how late the strap's frames place its beats.
    public var beatDelay: Double?
    /// ECG interval minus strap interval (ms): mean, and mean, 95th percentile and largest of its size.
    public var meanDifference: Double?
    public var meanAbsoluteDifference: Double?
    public var p95AbsoluteDifference: Double?
    public var maximumAbsoluteDifference: Double?
    /// Compared intervals within ``agreement`` of the strap's, in %.
    public var agreeingPercent: Double?

    /// Compares `beats` (each beat's time, s, and its interval, ms, in order) with `peakRuns` (R-peak
    /// times in s, run by run, in order).
    public init(beats: [(end: Double, interval: Double)], peakRuns: [[Double]]) {
        let peaks = peakRuns.flatMap { $0 }
        var runOf: [Int] = []
        for (run, times) in peakRuns.enumerated() { runOf += Array(repeating: run, count: times.count) }
        rPeaks = peaks.count
        strapBeats = beats.count
        pairedBeats = 0
        comparedIntervals = 0
        beatsWithoutPeak = beats.count
        peaksWithoutBeat = 0
        guard !peaks.isEmpty, !beats.isEmpty else { return }

        func ecgInterval(_ peak: Int) -> Double? {
            peak > 0 && runOf[peak - 1] == runOf[peak] ? (peaks[peak] - peaks[peak - 1]) * 1000 : nil
        }
        // Whether beat j's interval starts at beat j − 1 (no frame lost between them).
        let follows = beats.indices.map { j in
            j > 0 && beats[j].end - beats[j - 1].end <= beats[j].interval / 1000 + Self.frameLag
        }
        func cost(beat j: Int, peak k: Int) -> Double? {
            var terms: [Double] = []
            for offset in -Self.window...Self.window {
                let (beat, peak) = (j + offset, k + offset)
                guard beats.indices.contains(beat), peaks.indices.contains(peak), runOf[peak] == runOf[k] else {
                    continue
                }
                let links = offset > 0 ? (j + 1)...(j + offset) : offset < 0 ? (j + offset + 1)...j : j...j
                guard offset == 0 || links.allSatisfy({ follows[$0] }), let interval = ecgInterval(peak) else {
                    continue
                }
                terms.append(abs(interval - beats[beat].interval))
            }
            return terms.isEmpty ? nil : Self.median(terms)
        }

        // Each beat's best R peak, and each R peak's best beat.
        var bestPeak: [Int: (peak: Int, cost: Double)] = [:]
        var bestBeat: [Int: (beat: Int, cost: Double)] = [:]
        for (j, beat) in beats.enumerated() {
            var k = peaks.firstIndex(notBelow: beat.end - Self.searchBefore)
            while k < peaks.count, peaks[k] <= beat.end + Self.searchAfter {
                defer { k += 1 }
                guard let cost = cost(beat: j, peak: k), cost <= Self.pairingCost else { continue }
                // Equal fits (a heart without any variability): the latest R peak, the frame's own beat.
                if let best = bestPeak[j], cost > best.cost { continue }
                bestPeak[j] = (k, cost)
            }
            if let best = bestPeak[j], bestBeat[best.peak].map({ best.cost < $0.cost }) ?? true {
                bestBeat[best.peak] = (j, best.cost)
            }
        }

        var pairedPeaks: [Int] = []
        var delays: [Double] = []
        var differences: [Double] = []
        for j in beats.indices {
            guard let best = bestPeak[j], bestBeat[best.peak]?.beat == j else { continue }
            pairedPeaks.append(best.peak)
            delays.append(beats[j].end - peaks[best.peak])
            if let interval = ecgInterval(best.peak) { differences.append(interval - beats[j].interval) }
        }
        pairedBeats = pairedPeaks.count
        beatsWithoutPeak = beats.count - pairedBeats
        comparedIntervals = differences.count
        if let first = pairedPeaks.min(), let last = pairedPeaks.max() {
            peaksWithoutBeat = last - first + 1 - Set(pairedPeaks).count
        }
        guard !delays.isEmpty else { return }
        beatDelay = Self.median(delays) * 1000
        guard !differences.isEmpty else { return }
        let sizes = differences.map(abs).sorted()
        meanDifference = differences.reduce(0, +) / Double(differences.count)
        meanAbsoluteDifference = sizes.reduce(0, +) / Double(sizes.count)
        p95AbsoluteDifference = sizes[min(sizes.count - 1, Int((Double(sizes.count) * 0.95).rounded(.up)) - 1)]
        maximumAbsoluteDifference = sizes.last
        agreeingPercent = Double(sizes.filter { $0 <= Self.agreement }.count) * 100 / Double(sizes.count)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
