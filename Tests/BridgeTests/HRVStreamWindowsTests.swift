import Foundation
import GATT
import LabStreaming
import SensorSimulator
import Testing
import Workouts

@Suite("HRVStreamWindows: a strap's HRV windows from its heart-rate frames, for its LSL stream")
struct HRVStreamWindowsTests {
    static let scenario = """
        {"version": 1, "seed": 11, "straps": [
          {"name": "Strap", "address": "C0:FF:EE:00:00:01",
           "segments": [{"type": "steady", "duration": "10m", "intensity": 0.3},
                        {"type": "steady", "duration": "10m", "intensity": 0.7}]}]}
        """

    /// The simulated strap's heart-rate frames: when each arrived, and its RR intervals.
    static func frames(seconds: Double) throws -> [(time: Double, intervals: [RRInterval])] {
        let scenario = try ScenarioParser.parse(Data(Self.scenario.utf8), file: "hrv.json")
        var simulation = StrapSimulation(scenario: scenario.straps[0], seed: 11)
        return simulation.advance(to: seconds).compactMap { output in
            guard case .frame(let time, .heartRateMeasurement, let bytes) = output,
                let frame = try? HeartRateMeasurement(bytes: bytes), !frame.rrIntervals.isEmpty
            else { return nil }
            return (time, frame.rrIntervals)
        }
    }

    @Test("frame by frame, the windows HRVAnalysis computes over the whole series, each dated at its end")
    func sameAsTheLibrary() throws {
        let origin = Date(timeIntervalSince1970: 1_800_000_000)
        let frames = try Self.frames(seconds: 1_200)
        var stream = HRVStreamWindows()
        let windows = frames.flatMap { stream.add($0.intervals, receivedAt: origin.addingTimeInterval($0.time)) }
        let truth = HRVAnalysis.windows(frames.flatMap { $0.intervals.map { $0.seconds * 1000 } })
        #expect(windows.count == truth.count && windows.count > 200, "\(windows.count) of \(truth.count)")
        for (window, expected) in zip(windows, truth) {
            #expect(window.end == expected.end && window.beats == expected.beats)
            let alpha1: Double = window.alpha1 ?? -1
            let expectedAlpha1: Double = expected.alpha1 ?? -1
            #expect(abs(alpha1 - expectedAlpha1) < 1e-9)
            let rmssd: Double = window.rmssd ?? -1
            let expectedRMSSD: Double = expected.rmssd ?? -2
            #expect(abs(rmssd - expectedRMSSD) < 1e-9)
            #expect(window.artefactPercent == expected.artefactPercent)
        }
        // Dated on the frames' clock: 5 s of beats apart, the first 2 minutes after the first beat began.
        let dates = windows.compactMap(\.date)
        #expect(dates.count == windows.count)
        let steps: [Double] = zip(dates, dates.dropFirst()).map { $1.timeIntervalSince($0) }
        #expect(steps.allSatisfy { abs($0 - 5) < 1e-6 })
        let firstBeat: Double = frames[0].intervals.reduce(0.0) { $0 + $1.seconds }
        let firstBeatStart = origin.addingTimeInterval(frames[0].time - firstBeat)
        let firstWindow: Double = dates[0].timeIntervalSince(firstBeatStart)
        #expect(abs(firstWindow - 120) < 0.001)
        // The harder half lowers α1 (the simulator's heart crosses its threshold at intensity 0.5).
        let easy = windows.prefix(100).compactMap(\.alpha1)
        let hard = windows.suffix(100).compactMap(\.alpha1)
        let easyMean: Double = easy.reduce(0, +) / Double(easy.count)
        let hardMean: Double = hard.reduce(0, +) / Double(hard.count)
        #expect(easyMean > hardMean + 0.2, "α1 \(easyMean) easy, \(hardMean) hard")
    }

    @Test("no frame for a minute: one last window of the beats before it, then the windows go on after it")
    func gap() throws {
        let origin = Date(timeIntervalSince1970: 1_800_000_000)
        let frames = try Self.frames(seconds: 900).filter { $0.time < 300 || $0.time > 360 }
        var stream = HRVStreamWindows()
        let windows = frames.flatMap { stream.add($0.intervals, receivedAt: origin.addingTimeInterval($0.time)) }
        let dates = windows.compactMap(\.date).map { $0.timeIntervalSince(origin) }
        // The window due when the last beat before the gap ended (its beats all real), none after it
        // until the beats come back and a new grid begins past the first of them.
        let inGap = dates.filter { $0 > 300 && $0 < 360 }
        #expect(inGap.count <= 1 && inGap.allSatisfy { $0 < 305 }, "\(inGap)")
        let after = dates.filter { $0 >= 360 }
        #expect(after.count > 50 && after.allSatisfy { $0 > 360 })
        #expect(zip(after, after.dropFirst()).allSatisfy { abs($1 - $0 - 5) < 1e-6 })
    }
}
