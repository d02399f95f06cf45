/// Time-domain HRV of an RR series in milliseconds (NeuroKit2's `hrv_time` definitions).
public struct TimeDomainHRV: Hashable, Sendable, Codable {
    /// Intervals.
    public var count: Int
    /// Mean interval, ms.
    public var meanRR: Double
    /// 60,000 / mean interval, beats per minute.
    public var meanHeartRate: Double
    /// Root mean square of successive differences, ms.
    public var rmssd: Double
    /// Standard deviation of the intervals (n − 1), ms.
    public var sdnn: Double
    /// Share of successive differences larger than 50 ms, percent.
    public var pnn50: Double

    /// The figures of `intervals`; nil with fewer than 3 (no two differences).
    public init?(_ intervals: [Double]) {
        guard intervals.count >= 3 else { return nil }
        let count = Double(intervals.count)
        let mean = intervals.reduce(0, +) / count
        var squaredDeviations = 0.0
        for interval in intervals { squaredDeviations += (interval - mean) * (interval - mean) }
        var squaredDifferences = 0.0
        var over50 = 0
        for index in 1..<intervals.count {
            let difference = intervals[index] - intervals[index - 1]
            squaredDifferences += difference * difference
            if abs(difference) > 50 { over50 += 1 }
        }
        let differences = Double(intervals.count - 1)
        self.count = intervals.count
        meanRR = mean
        meanHeartRate = 60_000 / mean
        rmssd = (squaredDifferences / differences).squareRoot()
        sdnn = (squaredDeviations / (count - 1)).squareRoot()
        pnn50 = 100 * Double(over50) / differences
    }
}
