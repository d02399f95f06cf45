import Foundation

/// A physiological heart-rate model: first-order response to workload, beat-to-beat variability
/// with the fractal correlation of a real heart.
///
/// Target HR = resting + (maximum − resting) × intensity. HR approaches the target with a time
/// constant of 30 s when rising and 60 s when falling (recovery is slower than on-kinetics).
///
/// Each beat's RR interval is 60/HR times (1 + fluctuation + respiratory sinus arrhythmia). The
/// fluctuation mixes a correlated part (three AR(1) processes, φ = 0.7, 0.9, 0.97) with an
/// anti-correlated one (white noise minus 0.7 of the previous draw), in the proportion whose DFA
/// α1 (box sizes 4–16) is ``designedAlpha1(intensity:)``: 1.15 at rest, falling linearly to 0.35
/// at full intensity, 0.75 at intensity 0.5 (the model's own HRVT1) and 0.5 at 0.81 (its HRVT2),
/// as Rogers et al. report in people. Its size falls from 4 % of the interval at rest to 1 % at
/// full intensity; breathing adds up to ±1 % at 0.25 Hz, fading with intensity.
///
/// A strap may also report artefacts at chosen rates: a missed beat (the interval reported is two
/// beats long) and an ectopic beat (a premature beat at 70 % of the interval, then the
/// compensatory pause).
struct HeartModel: Sendable {
    static let riseTimeConstant = 30.0
    static let fallTimeConstant = 60.0
    static let correlations = [0.7, 0.9, 0.97]
    /// Measured α1 of the fluctuation for mixing weights 0…1 of the correlated part (NumPy, 9,000
    /// beats per point, box sizes 4–16, half-overlapping boxes).
    static let calibration: [(weight: Double, alpha1: Double)] = [
        (0, 0.221), (0.2, 0.258), (0.3, 0.287), (0.4, 0.358), (0.5, 0.445), (0.6, 0.524), (0.7, 0.646),
        (0.8, 0.777), (0.9, 0.959), (0.95, 1.073), (1, 1.235),
    ]

    let restingHeartRate: Double
    let maximumHeartRate: Double
    let ectopicRate: Double
    let missedBeatRate: Double
    private(set) var heartRate: Double
    /// Time of the end of the last beat, seconds since the simulation start.
    private(set) var lastBeatEnd = 0.0
    private var correlated = [0.0, 0.0, 0.0]
    private var previousDraw = 0.0
    /// The part of a beat an ectopic beat came early by, added to the next interval.
    private var compensatoryPause = 0.0

    init(restingHeartRate: Double, maximumHeartRate: Double, ectopicRate: Double = 0, missedBeatRate: Double = 0) {
        self.restingHeartRate = restingHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.ectopicRate = ectopicRate
        self.missedBeatRate = missedBeatRate
        self.heartRate = restingHeartRate
    }

    func target(intensity: Double) -> Double {
        restingHeartRate + (maximumHeartRate - restingHeartRate) * min(max(intensity, 0), 1)
    }

    /// The DFA α1 the model's beats have at `intensity`.
    static func designedAlpha1(intensity: Double) -> Double {
        max(0.3, 1.15 - 0.8 * min(max(intensity, 0), 1))
    }

    /// The heart rate at which the model's α1 is 0.75: its HRVT1.
    var thresholdHeartRate: Double { target(intensity: (1.15 - 0.75) / 0.8) }

    /// The correlated part's weight that gives `alpha1`.
    static func weight(for alpha1: Double) -> Double {
        guard alpha1 > calibration[0].alpha1 else { return 0 }
        for (lower, upper) in zip(calibration, calibration.dropFirst()) where alpha1 <= upper.alpha1 {
            return lower.weight + (upper.weight - lower.weight) * (alpha1 - lower.alpha1)
                / (upper.alpha1 - lower.alpha1)
        }
        return 1
    }

    /// Produces the next beat's true RR interval (seconds) under `intensity`.
    mutating func nextBeat(intensity: Double, using generator: inout SeededGenerator) -> Double {
        let load = min(max(intensity, 0), 1)
        let target = target(intensity: load)
        let base = 60 / heartRate
        var wander = 0.0
        for index in correlated.indices {
            let phi = Self.correlations[index]
            correlated[index] = phi * correlated[index] + (1 - phi * phi).squareRoot() * generator.gaussian()
            wander += correlated[index]
        }
        wander /= Double(correlated.count).squareRoot()
        let draw = generator.gaussian()
        let antiCorrelated = (draw - 0.7 * previousDraw) / 1.49.squareRoot()
        previousDraw = draw
        let weight = Self.weight(for: Self.designedAlpha1(intensity: load))
        let fluctuation = (0.04 - 0.03 * load) * (weight * wander + (1 - weight * weight).squareRoot() * antiCorrelated)
        let arrhythmia = 0.01 * (1 - load) * sin(2 * .pi * 0.25 * lastBeatEnd)
        let interval = min(max(base * (1 + fluctuation + arrhythmia), 0.3), 2.0)
        let tau = target > heartRate ? Self.riseTimeConstant : Self.fallTimeConstant
        heartRate += (target - heartRate) * (1 - exp(-interval / tau))
        lastBeatEnd += interval
        return interval
    }

    /// The next interval as the strap reports it: a true beat, or an artefact at the configured
    /// rates. Reported intervals add up to the true ones: a missed beat spans two, an ectopic beat
    /// comes 30 % early and the next interval is that much longer.
    mutating func nextReportedBeat(intensity: Double, using generator: inout SeededGenerator) -> Double {
        let beat = nextBeat(intensity: intensity, using: &generator) + compensatoryPause
        compensatoryPause = 0
        guard ectopicRate > 0 || missedBeatRate > 0 else { return beat }
        let draw = Double(generator.next() >> 11) / Double(1 << 53)
        if draw < missedBeatRate {
            // The strap did not see the next beat: one interval spans both.
            return beat + nextBeat(intensity: intensity, using: &generator)
        }
        if draw < missedBeatRate + ectopicRate {
            compensatoryPause = beat * 0.3
            return beat * 0.7
        }
        return beat
    }
}
