import Foundation

/// A physiological heart-rate model: first-order response to workload, beat-to-beat variability.
///
/// Target HR = resting + (maximum − resting) × intensity. HR approaches the target with a time
/// constant of 30 s when rising and 60 s when falling (recovery is slower than on-kinetics). Each
/// beat's RR interval is 60/HR modulated by respiratory sinus arrhythmia (0.25 Hz, up to ±5 % at
/// rest, fading with intensity) plus Gaussian noise (1.5 % of the interval). RR values are thus
/// consistent with HR, and heavier work lowers HRV as it does in people.
struct HeartModel: Sendable {
    static let riseTimeConstant = 30.0
    static let fallTimeConstant = 60.0

    let restingHeartRate: Double
    let maximumHeartRate: Double
    private(set) var heartRate: Double
    /// Time of the end of the last beat, seconds since the simulation start.
    private(set) var lastBeatEnd = 0.0

    init(restingHeartRate: Double, maximumHeartRate: Double) {
        self.restingHeartRate = restingHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.heartRate = restingHeartRate
    }

    func target(intensity: Double) -> Double {
        restingHeartRate + (maximumHeartRate - restingHeartRate) * min(max(intensity, 0), 1)
    }

    /// Produces the next beat's RR interval (seconds) under `intensity`.
    mutating func nextBeat(intensity: Double, using generator: inout SeededGenerator) -> Double {
        let target = target(intensity: intensity)
        let base = 60 / heartRate
        let arrhythmia = 0.05 * (1 - min(max(intensity, 0), 1)) * sin(2 * .pi * 0.25 * lastBeatEnd)
        let noise = generator.gaussian(standardDeviation: 0.015)
        let interval = min(max(base * (1 + arrhythmia + noise), 0.3), 2.0)
        let tau = target > heartRate ? Self.riseTimeConstant : Self.fallTimeConstant
        heartRate += (target - heartRate) * (1 - exp(-interval / tau))
        lastBeatEnd += interval
        return interval
    }
}
