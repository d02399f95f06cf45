import Foundation

/// Heart-rate-variability thresholds from DFA α1: HRVT1 where α1 falls through 0.75 (Rogers et
/// al. 2020, the aerobic threshold) and HRVT2 where it falls through 0.5, read off a least-squares
/// line of α1 against heart rate (and power, when there is any) over the declining part.
public struct HRVThresholds: Hashable, Sendable, Codable {
    /// One threshold.
    public struct Threshold: Hashable, Sendable, Codable {
        /// The α1 that defines it.
        public var alpha1: Double
        /// The heart rate where the fitted line crosses it.
        public var heartRate: Double
        /// The power there, when power was recorded.
        public var power: Double?
    }

    /// α1 = 0.75, or nil when the data do not reach it.
    public var hrvt1: Threshold?
    /// α1 = 0.5, or nil when the data do not reach it.
    public var hrvt2: Threshold?
    /// Windows the line was fitted to.
    public var points: Int
    /// How well the line fits (heart rate), when fitted.
    public var rSquared: Double?
    /// Whether the estimate rests on enough, well-fitting data.
    public var confident: Bool
    /// What a reader should know, in words.
    public var note: String

    /// α1 values used for the line: the declining band around both thresholds.
    static let band = 0.35...1.05
    static let minimumPoints = 6
    static let confidentPoints = 12
    static let confidentRSquared = 0.6
    /// Below this the line says nothing: no threshold at all.
    static let minimumRSquared = 0.3

    /// Estimates the thresholds from reliable windows (α1 with heart rate, optionally power).
    ///
    /// Only the windows up to the highest heart rate count, as in a ramp test: after the peak the
    /// heart rate lags the falling load, and a recovering heart (high rate, correlation back
    /// already) would flatten the line.
    public static func estimate(_ windows: [HRVWindow]) -> HRVThresholds {
        let reliable = windows.filter(\.isReliable)
        let peak = reliable.indices.max { reliable[$0].heartRate < reliable[$1].heartRate }
        let ascending = peak.map { Array(reliable[...$0]) } ?? []
        let used = ascending.filter { window in
            guard let alpha1 = window.alpha1 else { return false }
            return band.contains(alpha1)
        }
        let honesty =
            "α1 thresholds estimate the ventilatory ones with error (Kubios' VT1 from α1: −10 ± 16 bpm against gas exchange)"
        guard used.count >= minimumPoints else {
            return HRVThresholds(
                hrvt1: nil, hrvt2: nil, points: used.count, rSquared: nil, confident: false,
                note:
                    "too few reliable windows with α1 between 0.35 and 1.05 (\(used.count), need \(minimumPoints)); \(honesty)"
            )
        }
        let alphas = used.compactMap(\.alpha1)
        let heartRates = used.map(\.heartRate)
        let heartRateLine = Line(x: heartRates, y: alphas)
        let powered = used.filter { $0.power != nil }
        let powers = powered.compactMap(\.power)
        let poweredAlphas = powered.compactMap(\.alpha1)
        let powerLine = powered.count >= minimumPoints ? Line(x: powers, y: poweredAlphas) : nil
        let lowest = alphas.min() ?? 1
        let highest = alphas.max() ?? 0
        // The heart-rate line's guards on the power line, and the power within the watts seen: a
        // line that barely fits (power alternating while α1 falls) puts it hundreds of W away.
        func power(at alpha1: Double) -> Double? {
            guard let powerLine, powerLine.slope < 0, powerLine.rSquared >= minimumRSquared,
                let lowestPowered = poweredAlphas.min(), let highestPowered = poweredAlphas.max(),
                lowestPowered <= alpha1, highestPowered >= alpha1,
                let power = powerLine.x(at: alpha1), let least = powers.min(), let most = powers.max(),
                least <= power, power <= most
            else { return nil }
            return power
        }
        func threshold(_ alpha1: Double) -> Threshold? {
            // Only where the data go: a threshold is never extrapolated past what was seen.
            guard heartRateLine.slope < 0, heartRateLine.rSquared >= minimumRSquared, lowest <= alpha1,
                highest >= alpha1,
                let heartRate = heartRateLine.x(at: alpha1)
            else { return nil }
            return Threshold(alpha1: alpha1, heartRate: heartRate, power: power(at: alpha1))
        }
        let first = threshold(0.75)
        let second = threshold(0.5)
        let confident =
            used.count >= confidentPoints && heartRateLine.rSquared >= confidentRSquared && heartRateLine.slope < 0
        var notes: [String] = []
        if heartRateLine.slope >= 0 || heartRateLine.rSquared < minimumRSquared {
            notes.append(
                "α1 does not fall with heart rate here (r² \(String(format: "%.2f", heartRateLine.rSquared))): no threshold"
            )
        } else {
            if first == nil { notes.append("α1 did not cross 0.75") }
            if second == nil { notes.append("α1 did not cross 0.5") }
        }
        if let powerLine, first != nil || second != nil,
            powerLine.slope >= 0 || powerLine.rSquared < minimumRSquared
        {
            notes.append(
                "α1 does not fall with power (r² \(String(format: "%.2f", powerLine.rSquared))): no threshold power"
            )
        }
        if !confident, first != nil || second != nil {
            notes.append(
                "thin data (\(used.count) windows, r² \(String(format: "%.2f", heartRateLine.rSquared))): treat as a rough guide"
            )
        }
        notes.append(honesty)
        return HRVThresholds(
            hrvt1: first, hrvt2: second, points: used.count, rSquared: heartRateLine.rSquared, confident: confident,
            note: notes.joined(separator: "; "))
    }

    /// A least-squares line y = intercept + slope · x.
    struct Line {
        var slope = 0.0
        var intercept = 0.0
        var rSquared = 0.0

        init(x: [Double], y: [Double]) {
            let count = Double(x.count)
            let meanX = x.reduce(0, +) / count
            let meanY = y.reduce(0, +) / count
            var sxy = 0.0
            var sxx = 0.0
            var syy = 0.0
            for index in x.indices {
                sxy += (x[index] - meanX) * (y[index] - meanY)
                sxx += (x[index] - meanX) * (x[index] - meanX)
                syy += (y[index] - meanY) * (y[index] - meanY)
            }
            guard sxx > 0 else { return }
            slope = sxy / sxx
            intercept = meanY - slope * meanX
            rSquared = syy > 0 ? (sxy * sxy) / (sxx * syy) : 0
        }

        func x(at y: Double) -> Double? { slope == 0 ? nil : (y - intercept) / slope }
    }
}
