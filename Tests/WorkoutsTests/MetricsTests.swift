import Foundation
import Testing

@testable import Workouts

@Suite("HRV and energy")
struct MetricsTests {
    @Test("RMSSD and SDNN on a hand-computed series")
    func handComputed() {
        // RR: 0.8, 0.82, 0.78, 0.8, 0.84 s. Differences: +0.02, −0.04, +0.02, +0.04.
        // RMSSD = √((0.0004 + 0.0016 + 0.0004 + 0.0016) / 4) = √0.001 = 0.0316227766 s.
        // Mean 0.808; deviations −0.008, 0.012, −0.028, −0.008, 0.032; squares sum 0.00208;
        // SDNN = √(0.00208 / 4) = 0.0228035085 s.
        var accumulator = HeartRateVariabilityAccumulator()
        for (index, rr) in [0.8, 0.82, 0.78, 0.8, 0.84].enumerated() {
            accumulator.add(interval: rr, end: t0.addingTimeInterval(Double(index)))
        }
        let hrv = accumulator.workout
        #expect(abs(hrv.rmssd! - 0.0316227766) < 1e-9)
        #expect(abs(hrv.sdnn! - 0.0228035085) < 1e-9)
        #expect(hrv.acceptedIntervals == 5)
        #expect(hrv.rejectedIntervals == 0)
    }

    @Test("artefacts are rejected and break the chain of successive differences")
    func artefacts() {
        var accumulator = HeartRateVariabilityAccumulator()
        for (index, rr) in [0.8, 0.2, 0.82, 1.5, 0.84].enumerated() {
            accumulator.add(interval: rr, end: t0.addingTimeInterval(Double(index)))
        }
        let hrv = accumulator.workout
        // 0.2 is out of range; 1.5 is > 20 % from 0.82. Kept: 0.8, 0.82, 0.84, but each kept beat
        // followed a rejected one, so no successive difference survives.
        #expect(hrv.acceptedIntervals == 3)
        #expect(hrv.rejectedIntervals == 2)
        #expect(hrv.rmssd == nil)
        #expect(HeartRateVariabilityAccumulator.accepts(0.96, previous: 0.8))
        #expect(!HeartRateVariabilityAccumulator.accepts(0.97, previous: 0.8))
    }

    @Test("the rolling window keeps the last 60 s")
    func rolling() {
        var accumulator = HeartRateVariabilityAccumulator(windowLength: 60)
        for second in 0..<60 { accumulator.add(interval: 1.0, end: t0.addingTimeInterval(Double(second))) }
        #expect(accumulator.rolling(at: t0.addingTimeInterval(59)).rmssd == 0)
        for second in 60..<120 {
            accumulator.add(interval: second % 2 == 0 ? 0.9 : 1.0, end: t0.addingTimeInterval(Double(second)))
        }
        let late = accumulator.rolling(at: t0.addingTimeInterval(119))
        #expect(abs(late.rmssd! - 0.1) < 1e-9, "only the alternating beats are in the window")
        #expect(late.acceptedIntervals == 61)
        #expect(abs(accumulator.workout.rmssd! - (0.01 * 60 / 119).squareRoot()) < 1e-9)
    }

    @Test(
        "the rolling RMSSD needs 10 successive differences: none from 2 or 10 beats, one from 11",
        arguments: [(2, false), (10, false), (11, true)])
    func rollingMinimum(beats: Int, reported: Bool) {
        var accumulator = HeartRateVariabilityAccumulator(windowLength: 60)
        for index in 0..<beats {
            accumulator.add(interval: index % 2 == 0 ? 0.8 : 0.85, end: t0.addingTimeInterval(Double(index)))
        }
        let rolling = accumulator.rolling(at: t0.addingTimeInterval(Double(beats - 1)))
        #expect(rolling.acceptedIntervals == beats)
        #expect((rolling.rmssd != nil) == reported)
        if reported { #expect(isClose(rolling.rmssd, 0.05)) }
    }

    @Test("Keytel et al. 2005 equations against worked examples")
    func keytel() {
        // Male, 35 y, 75 kg, 150 bpm: −55.0969 + 94.635 + 14.91 + 7.0595 = 61.5076 kJ/min (14.70 kcal/min).
        let male = EnergyEstimator(sex: .male, age: 35, weightKilograms: 75)
        #expect(abs(male.kilojoulesPerMinute(heartRate: 150) - 61.5076) < 1e-4)
        // Female, 28 y, 60 kg, 140 bpm: −20.4022 + 62.608 − 7.578 + 2.072 = 36.6998 kJ/min.
        let female = EnergyEstimator(sex: .female, age: 28, weightKilograms: 60)
        #expect(abs(female.kilojoulesPerMinute(heartRate: 140) - 36.6998) < 1e-4)
        #expect(male.kilojoulesPerMinute(heartRate: 40) == 0, "negative rates clamp to 0")
        #expect(EnergyEstimator(profile: UserProfile(id: "x", age: 30)) == nil)
        #expect(ActiveEnergy(kilojoules: 4.184, source: .sensor).kilocalories == 1)
    }

    @Test(
        "Keytel: a heart rate no heart beats at (301, 65535 bpm from a corrupt frame) adds no energy",
        arguments: [(150, true), (300, true), (301, false), (65535, false)] as [(Double, Bool)])
    func keytelImplausible(_ heartRate: Double, _ counted: Bool) {
        let male = EnergyEstimator(sex: .male, age: 35, weightKilograms: 75)
        #expect((male.kilojoulesPerMinute(heartRate: heartRate) > 0) == counted)
    }
}
