import Foundation

/// Detrended fluctuation analysis of an RR series: the short-term scaling exponent α1.
///
/// The mean-removed series is integrated; for each box size n it is cut into boxes, a
/// least-squares line is removed from each, and F(n) is the root mean square of what remains;
/// α1 is the slope of log F(n) against log n. Pure; intervals in any unit.
public enum DetrendedFluctuation {
    /// How the boxes of one size are laid over the series.
    public enum Boxes: Hashable, Sendable {
        /// Boxes half-overlapping from the start, the last one starting before `count − n`
        /// (NeuroKit2's `fractal_dfa(overlap=True)`).
        case halfOverlapping
        /// Non-overlapping boxes from the start, and as many again from the end backwards
        /// (FatMaxxer's and Marco Altini's implementation).
        case forwardAndBackward
    }

    /// Box sizes 4–16 beats: the α1 range of the HRV-threshold literature.
    public static let alpha1Scales = Array(4...16)

    /// The 30 box sizes FatMaxxer uses (integer parts of 2^(2 + 2k/30), k = 0…29).
    public static let fatMaxxerScales = [
        3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 7, 7, 7, 8, 8, 9, 9, 9, 10, 10, 11, 12, 12, 13, 13, 14, 15, 15,
    ]

    /// α1 of `intervals` over box sizes `scales`; nil when the series is too short for the
    /// largest box or has no variance.
    public static func alpha(_ intervals: [Double], scales: [Int] = alpha1Scales, boxes: Boxes = .halfOverlapping)
        -> Double?
    {
        guard let largest = scales.max(), let smallest = scales.min(), smallest >= 2, intervals.count > largest
        else { return nil }
        let mean = intervals.reduce(0, +) / Double(intervals.count)
        var profile = [Double](repeating: 0, count: intervals.count)
        var sum = 0.0
        for (index, interval) in intervals.enumerated() {
            sum += interval - mean
            profile[index] = sum
        }
        var logScales: [Double] = []
        var logFluctuations: [Double] = []
        for scale in scales {
            guard let fluctuation = fluctuation(profile, scale: scale, boxes: boxes), fluctuation > 0 else {
                return nil
            }
            logScales.append(log2(Double(scale)))
            logFluctuations.append(log2(fluctuation))
        }
        return slope(logScales, logFluctuations)
    }

    /// F(n): the root mean square, over every box, of the residuals of a line fitted in the box.
    static func fluctuation(_ profile: [Double], scale: Int, boxes: Boxes) -> Double? {
        var starts: [Int] = []
        switch boxes {
        case .halfOverlapping:
            starts = Array(stride(from: 0, to: profile.count - scale, by: max(1, scale / 2)))
        case .forwardAndBackward:
            let count = profile.count / scale
            starts = (0..<count).map { $0 * scale } + (0..<count).map { profile.count - scale - $0 * scale }
        }
        var variances: [Double] = []
        for start in starts {
            let variance = residualVariance(profile[start..<start + scale])
            // A flat box (a constant stretch) says nothing about scaling: left out, as NeuroKit2 does.
            if boxes == .forwardAndBackward || variance > 1e-8 { variances.append(variance) }
        }
        guard !variances.isEmpty else { return nil }
        return (variances.reduce(0, +) / Double(variances.count)).squareRoot()
    }

    /// The mean squared residual of the least-squares line through `values` at x = 0, 1, 2, ….
    static func residualVariance(_ values: ArraySlice<Double>) -> Double {
        let count = Double(values.count)
        let meanX = (count - 1) / 2
        let meanY = values.reduce(0, +) / count
        var sxy = 0.0
        var sxx = 0.0
        for (offset, value) in values.enumerated() {
            let dx = Double(offset) - meanX
            sxy += dx * (value - meanY)
            sxx += dx * dx
        }
        let slope = sxx > 0 ? sxy / sxx : 0
        var squares = 0.0
        for (offset, value) in values.enumerated() {
            let residual = value - (meanY + slope * (Double(offset) - meanX))
            squares += residual * residual
        }
        return squares / count
    }

    /// The least-squares slope of y against x.
    static func slope(_ x: [Double], _ y: [Double]) -> Double {
        let count = Double(x.count)
        let meanX = x.reduce(0, +) / count
        let meanY = y.reduce(0, +) / count
        var sxy = 0.0
        var sxx = 0.0
        for index in x.indices {
            sxy += (x[index] - meanX) * (y[index] - meanY)
            sxx += (x[index] - meanX) * (x[index] - meanX)
        }
        return sxy / sxx
    }
}
