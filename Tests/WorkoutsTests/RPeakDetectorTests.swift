import BusHarness
import Foundation
import Sensors
import Testing

@testable import Workouts

@Suite("R peaks from ECG: the detector, against NeuroKit2, and its runs")
struct RPeakDetectorTests {
    /// A QRS-like spike (a 10 ms-wide R wave between a Q and an S dip) with a T wave, at `beats` (s).
    static func ecg(beats: [Double], seconds: Double, rate: Double = 130, wander: Double = 0) -> [Double] {
        func bump(_ offset: Double, _ width: Double) -> Double { exp(-(offset * offset) / (2 * width * width)) }
        let count = Int(seconds * rate)
        var signal = (0..<count).map { wander * sin(2 * .pi * 0.25 * Double($0) / rate) }
        // Each beat shapes the samples within 0.6 s of it (beats in order, as each sample sums them).
        for beat in beats {
            let first = max(0, Int(((beat - 0.6) * rate).rounded(.down)))
            let last = min(count - 1, Int(((beat + 0.6) * rate).rounded(.up)))
            guard first <= last else { continue }
            for index in first...last {
                let time = Double(index) / rate
                guard abs(time - beat) < 0.6 else { continue }
                signal[index] += 1300 * bump(time - beat, 0.010) - 150 * bump(time - beat + 0.035, 0.008)
                signal[index] += -350 * bump(time - beat - 0.035, 0.009) + 320 * bump(time - beat - 0.25, 0.045)
            }
        }
        return signal
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var beats: [Double]
        var seconds: Double
        var wander: Double = 0
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "60 bpm", beats: stride(from: 0.5, to: 30, by: 1).map { $0 }, seconds: 30),
        Case(name: "180 bpm, T waves close", beats: stride(from: 0.5, to: 30, by: 1.0 / 3).map { $0 }, seconds: 30),
        Case(
            name: "beats between samples", beats: stride(from: 0.5037, to: 30, by: 0.8123).map { $0 }, seconds: 30),
        Case(
            name: "a breathing baseline of ±600 µV", beats: stride(from: 0.5, to: 30, by: 0.75).map { $0 }, seconds: 30,
            wander: 600),
    ]

    @Test("every beat found, to within a millisecond and a half, nothing else", arguments: cases)
    func syntheticBeats(_ testCase: Case) {
        let signal = Self.ecg(beats: testCase.beats, seconds: testCase.seconds, wander: testCase.wander)
        let peaks = RPeakDetector(sampleRate: 130).peaks(in: signal).map { $0 / 130 }
        #expect(peaks.count == testCase.beats.count, "\(peaks.count) peaks for \(testCase.beats.count) beats")
        for (peak, beat) in zip(peaks, testCase.beats) {
            #expect(abs(peak - beat) < 0.0015, "peak at \(peak) s for the beat at \(beat) s")
        }
    }

    @Test("a flat line, noise alone, and fewer than three samples have no R peak")
    func nothingToFind() {
        let detector = RPeakDetector(sampleRate: 130)
        #expect(detector.peaks(in: []).isEmpty)
        #expect(detector.peaks(in: [5, 900]).isEmpty)
        #expect(detector.peaks(in: Array(repeating: 12, count: 1_300)).isEmpty)
    }

    @Test("the parabola's vertex: a symmetric peak stays, a lopsided one moves toward its higher side")
    func vertex() {
        #expect(RPeakDetector.vertexOffset([0, 10, 0], at: 1) == 0)
        #expect(RPeakDetector.vertexOffset([0, 10, 10], at: 1) == 0.5)
        #expect(RPeakDetector.vertexOffset([5, 10, 0], at: 1) == -0.5 / 3 * 1.0)
        #expect(RPeakDetector.vertexOffset([0, 10, 0], at: 0) == 0, "no neighbour before: left as it is")
        #expect(RPeakDetector.vertexOffset([0, 5, 10], at: 1) == 0, "not a peak")
    }

    @Test("an R peak between two equal samples is found, halfway between them")
    func flatTop() {
        var signal = Self.ecg(beats: [0.5, 1.5, 2.5], seconds: 3)
        // The middle beat's summit flattened onto two samples of the same value, as whole µV can be.
        let top = 195
        signal[top + 1] = signal[top]
        let peaks = RPeakDetector(sampleRate: 130).peaks(in: signal)
        #expect(peaks.count == 3)
        #expect(peaks.contains(Double(top) + 0.5), "\(peaks)")
    }

    @Test("moving averages: centred, shorter at the ends")
    func movingAverage() {
        #expect(RPeakDetector.movingAverage([1, 2, 3, 4, 5], width: 3) == [1.5, 2, 3, 4, 4.5])
        #expect(RPeakDetector.movingAverage([1, 2, 3], width: 1) == [1, 2, 3])
        #expect(RPeakDetector.movingAverage([], width: 5) == [])
    }

    /// NeuroKit2's ECGSYN signals at 130 Hz (rest, a noisy 120 bpm, 170 bpm, a breathing baseline)
    /// and the R peaks its own detector finds in them.
    @Test("NeuroKit2's simulated ECG: the peaks NeuroKit2 finds, each within a sample, none missed or added")
    func againstNeuroKit() async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("ecg-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: output) }
        let reference = try Spawned(
            venvPython, [packageRoot.appendingPathComponent("Tests/Fixtures/hrv/neurokit_ecg.py").path, output.path],
            label: "neurokit2")
        #expect(await reference.wait() == 0, "\(reference.output.suffix(5))")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])
        let rate = try #require(object["rate"] as? Double)
        let cases = try #require(object["cases"] as? [[String: Any]])
        #expect(cases.count == 4)
        for item in cases {
            let name = try #require(item["name"] as? String)
            let signal = try #require(item["signal"] as? [Double])
            let allExpected = try #require(item["peaks"] as? [Int])
            // Within a quarter of a second of the signal's ends the detectors may differ on a complex
            // the signal cuts (NeuroKit2 keeps one 8 samples before the end, drops one 3 before).
            let edge = 0.25 * rate
            let interior = Double(edge)...(Double(signal.count) - edge)
            let found = RPeakDetector(sampleRate: rate).peaks(in: signal).filter { interior.contains($0) }
            let expected = allExpected.filter { interior.contains(Double($0)) }
            #expect(expected.count > 100, "\(name)")
            #expect(found.count == expected.count, "\(name): \(found.count) peaks, NeuroKit2 \(expected.count)")
            let apart = zip(found, expected).map { abs($0 - Double($1)) }
            #expect(apart.allSatisfy { $0 <= 1 }, "\(name): up to \(apart.max() ?? 0) samples from NeuroKit2's")
        }
    }

    /// ECG frames of 73 samples cut from a signal, continuous but for the gap given.
    static func frames(_ signal: [Double], gapAfterFrame gap: Int?, rate: Int = 130) -> [SensorWaveform] {
        let sensor = SensorIdentity(adapter: "mock", address: "A0:9E:1A:00:00:01")
        var frames: [SensorWaveform] = []
        var start = 1_000_000.0
        for (number, first) in stride(from: 0, to: signal.count, by: 73).enumerated() {
            let values = signal[first..<min(first + 73, signal.count)].map { Int32($0.rounded()) }
            frames.append(
                SensorWaveform(
                    sensor: sensor, kind: .ecg, sampleRate: rate, values: values,
                    start: Date(timeIntervalSince1970: start), interval: 1 / Double(rate),
                    continuous: number > 0 && number - 1 != gap, sensorTimestamp: UInt64(number),
                    receivedAt: Date(timeIntervalSince1970: start)))
            start += Double(values.count) / Double(rate)
            if number == gap { start += 5 }
        }
        return frames
    }

    @Test("frames to peaks: a run per gap, times from the frames' own clock, no peak made across a gap")
    func collector() {
        let beats = stride(from: 0.5, to: 40, by: 0.9).map { $0 }
        let signal = Self.ecg(beats: beats, seconds: 40)
        var collector = ECGPeakCollector()
        for frame in Self.frames(signal, gapAfterFrame: 30) { collector.add(frame) }
        let runs = collector.finish()
        #expect(runs.count == 2)
        let gapAt = 1_000_000 + 31 * 73 / 130.0
        #expect(runs[0].allSatisfy { $0 < gapAt } && runs[1].allSatisfy { $0 > gapAt + 5 })
        // Each peak, less the gap when after it, falls on a beat.
        let found = runs[0].map { $0 - 1_000_000 } + runs[1].map { $0 - 1_000_005 }
        #expect(found.count >= beats.count - 2 && found.count <= beats.count, "\(found.count) of \(beats.count)")
        #expect(found.allSatisfy { peak in beats.contains { abs($0 - peak) < 0.0015 } })
        #expect(collector.frames == Int((40 * 130.0 / 73).rounded(.up)))
    }

    @Test("a long run is searched a stretch at a time: the whole run's peaks, with a bounded memory")
    func longRun() {
        // 20 minutes of a heart speeding up and slowing down, beats falling anywhere between samples.
        var beats: [Double] = []
        var time = 0.5
        while time < 1_200 {
            beats.append(time)
            time += 0.55 + 0.35 * (1 + sin(time / 40)) / 2 + 0.013 * sin(time * 7)
        }
        let signal = Self.ecg(beats: beats, seconds: 1_200, wander: 300)
        // The frames carry whole µV: the whole run is searched as they carry it.
        let whole = RPeakDetector(sampleRate: 130).peaks(in: signal.map { $0.rounded() }).map { 1_000_000 + $0 / 130 }
        #expect(whole.count == beats.count, "the detector over the whole run finds every beat")

        var collector = ECGPeakCollector()
        var mostHeld = 0
        for frame in Self.frames(signal, gapAfterFrame: nil) {
            collector.add(frame)
            mostHeld = max(mostHeld, collector.heldSamples)
        }
        let runs = collector.finish()
        #expect(runs.count == 1)
        let found = runs.first ?? []
        #expect(found.count == whole.count, "\(found.count) peaks, \(whole.count) over the whole run")
        let apart = zip(found, whole).map { abs($0 - $1) }
        #expect(apart.allSatisfy { $0 < 1e-6 }, "up to \(apart.max() ?? 0) s from the whole run's")
        let bound = Int((ECGPeakCollector.stretch + 2 * ECGPeakCollector.margin) * 130) + 2 * 73
        #expect(mostHeld <= bound, "\(mostHeld) samples held at most (of \(signal.count))")
        #expect(collector.heldSamples == 0, "nothing held once finished")
    }
}
