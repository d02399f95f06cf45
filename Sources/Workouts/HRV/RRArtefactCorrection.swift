/// The kinds of RR artefact of Lipponen & Tarvainen (2019), the method Kubios calls "automatic".
public enum RRArtefactKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// A premature beat followed by a compensatory pause (or the reverse).
    case ectopic
    /// A beat the sensor did not see: one interval twice as long as its neighbours.
    case missed
    /// A beat that is not one: two short intervals that add up to one.
    case extra
    /// An interval too long or too short for its neighbourhood, of no other kind.
    case longShort
}

/// How many artefacts of each kind.
public struct RRArtefactCounts: Hashable, Sendable, Codable {
    /// Ectopic beats.
    public var ectopic: Int
    /// Missed beats.
    public var missed: Int
    /// Extra beats.
    public var extra: Int
    /// Long or short intervals.
    public var longShort: Int
}

/// Artefacts found in an RR series, by kind: indices of the beats (the interval ending at beat
/// `i` is the series' `i − 1`th).
public struct RRArtefacts: Hashable, Sendable, Codable {
    /// Ectopic beats.
    public var ectopic: [Int] = []
    /// Missed beats.
    public var missed: [Int] = []
    /// Extra beats.
    public var extra: [Int] = []
    /// Long or short intervals.
    public var longShort: [Int] = []

    /// Nothing found.
    public init() {}

    /// How many of every kind.
    public var count: Int { ectopic.count + missed.count + extra.count + longShort.count }

    /// How many of each kind.
    public var counts: RRArtefactCounts {
        RRArtefactCounts(ectopic: ectopic.count, missed: missed.count, extra: extra.count, longShort: longShort.count)
    }

    /// How many of `kind`.
    public func count(of kind: RRArtefactKind) -> Int {
        switch kind {
        case .ectopic: ectopic.count
        case .missed: missed.count
        case .extra: extra.count
        case .longShort: longShort.count
        }
    }
}

/// RR artefact detection and correction after Lipponen & Tarvainen 2019 (J. Med. Eng. Technol.
/// 43(3)), as NeuroKit2's `signal_fixpeaks(method="kubios")` implements it, so the two agree:
/// successive differences and deviations from an 11-beat median, each normalised by 5.2 quartile
/// deviations over 91 beats, classified with c1 = 0.13, c2 = 0.17; extra beats are deleted,
/// missed ones split, ectopic and long/short ones moved to the middle of their neighbours; then
/// the search runs again on the corrected series while the count keeps falling.
///
/// Pure and deterministic; intervals are in milliseconds.
public enum RRArtefactCorrection {
    /// The correction of one series.
    public struct Result: Hashable, Sendable {
        /// The corrected intervals, in milliseconds.
        public var corrected: [Double]
        /// What the first pass found in the series as given.
        public var artefacts: RRArtefacts
        /// Searches run (the first included).
        public var passes: Int
        /// Intervals in the series as given.
        public var inputCount: Int

        /// The artefacts' share of the intervals given, in percent.
        public var artefactPercent: Double {
            inputCount == 0 ? 0 : 100 * Double(artefacts.count) / Double(inputCount)
        }
    }

    static let c1 = 0.13
    static let c2 = 0.17
    static let alpha = 5.2
    static let thresholdWindow = 91
    static let medianWindow = 11
    /// Fewer intervals than this are returned as they are: the thresholds mean nothing.
    public static let minimumIntervals = 10

    /// Finds and corrects the artefacts of `intervals` (milliseconds).
    public static func correct(_ intervals: [Double]) -> Result {
        guard intervals.count >= minimumIntervals else {
            return Result(corrected: intervals, artefacts: RRArtefacts(), passes: 0, inputCount: intervals.count)
        }
        var beats = [0.0]
        beats.reserveCapacity(intervals.count + 1)
        for interval in intervals { beats.append(beats[beats.count - 1] + interval) }
        let first = find(in: beats)
        var corrected = apply(first, to: beats)
        var previousCount = first.count
        var passes = 1
        while true {
            let again = find(in: corrected)
            passes += 1
            guard again.count < previousCount else { break }
            previousCount = again.count
            corrected = apply(again, to: corrected)
        }
        return Result(
            corrected: zip(corrected.dropFirst(), corrected).map { $0 - $1 }, artefacts: first, passes: passes,
            inputCount: intervals.count)
    }

    /// The artefacts among `beats` (beat times in milliseconds, ascending).
    public static func find(in beats: [Double]) -> RRArtefacts {
        let count = beats.count
        guard count > minimumIntervals else { return RRArtefacts() }
        // In seconds, as NeuroKit2 computes, so that values on a threshold (frequent with whole
        // milliseconds) fall on the same side.
        var rr = [Double](repeating: 0, count: count)
        for index in 1..<count { rr[index] = (beats[index] - beats[index - 1]) / 1000 }
        rr[0] = mean(rr[1...])
        var drrs = [Double](repeating: 0, count: count)
        for index in 1..<count { drrs[index] = rr[index] - rr[index - 1] }
        drrs[0] = mean(drrs[1...])
        let th1 = threshold(drrs)
        for index in 0..<count { drrs[index] = th1[index] != 0 ? drrs[index] / th1[index] : .nan }
        // Reflect-padded by two, as numpy's "reflect" (the edge itself is not repeated).
        let padded = [drrs[2], drrs[1]] + drrs + [drrs[count - 2], drrs[count - 3]]
        var s12 = [Double](repeating: 0, count: count)
        var s22 = [Double](repeating: 0, count: count)
        for index in 0..<count {
            let d = index + 2
            if padded[d] > 0 {
                s12[index] = nanMax(padded[d - 1], padded[d + 1])
            } else if padded[d] < 0 {
                s12[index] = nanMin(padded[d - 1], padded[d + 1])
            }
            if padded[d] >= 0 {
                s22[index] = nanMin(padded[d + 1], padded[d + 2])
            } else if padded[d] < 0 {
                s22[index] = nanMax(padded[d + 1], padded[d + 2])
            }
        }
        let medrr = rollingMedian(rr, window: medianWindow)
        var mrrs = zip(rr, medrr).map { $0 - $1 }
        for index in 0..<count where mrrs[index] < 0 { mrrs[index] *= 2 }
        let th2 = threshold(mrrs)
        for index in 0..<count { mrrs[index] = th2[index] != 0 ? mrrs[index] / th2[index] : .nan }

        var found = RRArtefacts()
        var i = 0
        while i < count - 2 {
            if abs(drrs[i]) <= 1 {
                i += 1
                continue
            }
            let eq1 = drrs[i] > 1 && s12[i] < -c1 * drrs[i] - c2
            let eq2 = drrs[i] < -1 && s12[i] > -c1 * drrs[i] + c2
            if eq1 || eq2 {
                found.ectopic.append(i)
                i += 1
                continue
            }
            if !(abs(drrs[i]) > 1 || abs(mrrs[i]) > 3) {
                i += 1
                continue
            }
            var candidates = [i]
            if abs(drrs[i + 1]) < abs(drrs[i + 2]) { candidates.append(i + 1) }
            for j in candidates {
                let eq3 = drrs[j] > 1 && s22[j] < -1
                let eq4 = abs(mrrs[j]) > 3
                let eq5 = drrs[j] < -1 && s22[j] > 1
                if !(eq3 || eq4 || eq5) {
                    i += 1
                    continue
                }
                let eq6 = abs(rr[j] / 2 - medrr[j]) < th2[j]
                let eq7 = abs(rr[j] + rr[j + 1] - medrr[j]) < th2[j]
                if eq5 && eq7 {
                    found.extra.append(j)
                } else if eq3 && eq6 {
                    found.missed.append(j)
                } else {
                    found.longShort.append(j)
                }
                i += 1
            }
        }
        return found
    }

    /// `beats` with `artefacts` corrected: extra beats deleted, missed beats split, ectopic and
    /// long/short beats moved halfway between their neighbours.
    public static func apply(_ artefacts: RRArtefacts, to beats: [Double]) -> [Double] {
        var beats = beats
        var missed = artefacts.missed
        var ectopic = artefacts.ectopic
        var longShort = artefacts.longShort
        if !artefacts.extra.isEmpty {
            let extra = Set(artefacts.extra)
            beats = beats.enumerated().filter { !extra.contains($0.offset) }.map(\.element)
            missed = shifted(missed, by: artefacts.extra, step: -1)
            ectopic = shifted(ectopic, by: artefacts.extra, step: -1)
            longShort = shifted(longShort, by: artefacts.extra, step: -1)
        }
        if !missed.isEmpty {
            let valid = missed.filter { $0 > 1 && $0 < beats.count }
            // Inserted before each original position, all positions taken in the uncorrected array.
            var result: [Double] = []
            result.reserveCapacity(beats.count + valid.count)
            let inserts = Set(valid)
            for (index, beat) in beats.enumerated() {
                if inserts.contains(index) { result.append(beats[index - 1] + (beat - beats[index - 1]) / 2) }
                result.append(beat)
            }
            beats = result
            ectopic = shifted(ectopic, by: missed, step: 1)
            longShort = shifted(longShort, by: missed, step: 1)
        }
        for misaligned in [ectopic, longShort] where !misaligned.isEmpty {
            let valid = misaligned.filter { $0 > 1 && $0 < beats.count - 1 }
            let moved = valid.map { beats[$0 - 1] + (beats[$0 + 1] - beats[$0 - 1]) / 2 }
            let removed = Set(valid)
            // Whole milliseconds after a move, as NeuroKit2 keeps beats as sample indices at 1 kHz.
            beats = (beats.enumerated().filter { !removed.contains($0.offset) }.map(\.element) + moved)
                .map { $0.rounded(.towardZero) }.sorted()
        }
        return beats
    }

    /// Indices after deleting (step −1) or inserting (step +1) at `sources`: each source moves the
    /// indices beyond it, one source at a time; the result sorted and unique.
    static func shifted(_ indices: [Int], by sources: [Int], step: Int) -> [Int] {
        guard !indices.isEmpty else { return indices }
        var indices = indices
        for source in sources { indices = indices.map { $0 > source ? $0 + step : $0 } }
        return Array(Set(indices)).sorted()
    }

    /// 5.2 quartile deviations of |x| over a centred 91-point window (shorter at the ends).
    static func threshold(_ values: [Double]) -> [Double] {
        slidingQuantiles(values.map(abs), window: thresholdWindow) { sorted in
            alpha * (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / 2
        }
    }

    /// The centred rolling median over `window` points (shorter at the ends).
    static func rollingMedian(_ values: [Double], window: Int) -> [Double] {
        slidingQuantiles(values, window: window) { quantile($0, 0.5) }
    }

    /// `figure` of the sorted values of a centred window (shorter at the ends; NaN left out) at
    /// every position, the window kept sorted as it slides rather than sorted anew.
    static func slidingQuantiles(_ values: [Double], window: Int, _ figure: ([Double]) -> Double) -> [Double] {
        let half = window / 2
        var sorted: [Double] = []
        sorted.reserveCapacity(window + 1)
        func position(_ value: Double) -> Int { sorted.firstIndex(notBelow: value) }
        var result = [Double](repeating: .nan, count: values.count)
        var added = 0
        for index in 0..<values.count {
            while added < values.count, added <= index + half {
                if !values[added].isNaN { sorted.insert(values[added], at: position(values[added])) }
                added += 1
            }
            let leaving = index - half - 1
            if leaving >= 0, !values[leaving].isNaN { sorted.remove(at: position(values[leaving])) }
            if !sorted.isEmpty { result[index] = figure(sorted) }
        }
        return result
    }

    /// Linear-interpolated quantile of sorted values (numpy's and pandas' default).
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        let position = q * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - Double(lower))
    }

    static func mean(_ values: ArraySlice<Double>) -> Double {
        values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
    }

    private static func nanMax(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : max(a, b) }
    private static func nanMin(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : min(a, b) }
}
