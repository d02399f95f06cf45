import BusHarness
import Foundation
import Testing

@testable import Workouts

/// Deterministic RR series (ms, whole milliseconds as straps report them after rounding): a mean
/// interval with a mix of white noise (α1 ≈ 0.5) and a slowly wandering AR(1) part (α1 ≈ 1.5).
struct RRSeries {
    var generator: TestGenerator

    init(state: UInt64) { generator = TestGenerator(state: state) }

    mutating func uniform() -> Double { Double(generator.next() >> 11) / Double(1 << 53) }

    mutating func gaussian() -> Double {
        let u = max(uniform(), 1e-12)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * uniform())
    }

    /// A resting heart: `mean` ms swung ±30 ms by breathing (one breath every 5 beats or so) with
    /// a little noise, the smooth series the artefact method was designed on.
    mutating func breathing(count: Int, mean: Double) -> [Double] {
        (0..<count).map { index in
            (mean + 30 * sin(2 * .pi * Double(index) / 5.3) + 2 * gaussian()).rounded()
        }
    }

    /// `count` intervals around `mean` ms; `correlated` (0…1) is the wandering part's weight.
    mutating func make(count: Int, mean: Double, spread: Double, correlated: Double) -> [Double] {
        var wander = 0.0
        return (0..<count).map { _ in
            wander = 0.95 * wander + gaussian() * (1 - 0.95 * 0.95).squareRoot()
            let value = mean + spread * (correlated * wander + (1 - correlated) * gaussian())
            return value.rounded()
        }
    }
}

/// Injects one artefact of `kind` at interval `index` (the beat after it is the artefact's beat).
func inject(_ kind: RRArtefactKind, at index: Int, into series: inout [Double]) {
    switch kind {
    case .missed:
        series[index] += series[index + 1]
        series.remove(at: index + 1)
    case .extra:
        let whole = series[index]
        series[index] = (whole * 0.4).rounded()
        series.insert(whole - series[index], at: index + 1)
    case .ectopic:
        let shift = (series[index] * 0.3).rounded()
        series[index] -= shift
        series[index + 1] += shift
    case .longShort:
        series[index] = (series[index] * 1.45).rounded()
    }
}

@Suite("HRV: artefact correction, time domain, DFA α1, thresholds")
struct HRVTests {
    /// FatMaxxer's self-test series (200 beats, ms) and the α1 its Java code expects.
    /// (193 beats; the reference page calls it "200-beat".)
    static let fatMaxxerSeries: [Double] = [
        635, 628, 627, 625, 624, 627, 624, 623, 633, 636, 633, 628, 625, 628, 622, 621, 613, 608, 604, 612, 620, 616,
        611, 616, 614, 622, 627, 625, 622, 617, 620, 622, 623, 615, 614, 627, 630, 632, 632, 632, 631, 627, 629, 634,
        628, 625, 629, 633, 632, 628, 631, 631, 628, 623, 619, 618, 618, 628, 634, 631, 626, 633, 637, 636, 632, 634,
        625, 614, 610, 607, 613, 616, 622, 625, 620, 633, 640, 639, 631, 626, 634, 628, 615, 610, 607, 611, 613, 614,
        611, 608, 627, 625, 619, 618, 622, 625, 626, 625, 626, 624, 631, 631, 619, 611, 608, 607, 602, 586, 583, 576,
        580, 571, 583, 591, 598, 607, 607, 621, 619, 622, 613, 604, 607, 603, 604, 598, 595, 592, 589, 594, 594, 602,
        611, 614, 634, 635, 636, 628, 627, 628, 626, 619, 616, 616, 622, 615, 607, 611, 610, 619, 624, 625, 626, 633,
        643, 647, 644, 644, 642, 645, 637, 628, 632, 633, 625, 626, 623, 620, 620, 610, 612, 612, 610, 614, 611, 609,
        616, 624, 623, 618, 622, 623, 625, 629, 621, 622, 617, 619, 618, 610, 607, 606, 611,
    ]

    @Test("FatMaxxer's regression vector: α1 = 1.5503173309573228 to 1e-9 (its scales, boxes from both ends)")
    func fatMaxxerVector() throws {
        #expect(Self.fatMaxxerSeries.count == 193)
        let alpha = try #require(
            DetrendedFluctuation.alpha(
                Self.fatMaxxerSeries, scales: DetrendedFluctuation.fatMaxxerScales, boxes: .forwardAndBackward))
        #expect(abs(alpha - 1.5503173309573228) < 1e-9, "α1 \(alpha)")
    }

    @Test(
        "each artefact kind injected at a known place is found there, as that kind", arguments: RRArtefactKind.allCases)
    func classification(kind: RRArtefactKind) {
        var generator = RRSeries(state: 42)
        for index in [40, 120, 250] {
            var series = generator.breathing(count: 400, mean: 800)
            inject(kind, at: index, into: &series)
            let found = RRArtefactCorrection.find(in: series.reduce(into: [0.0]) { $0.append($0.last! + $1) })
            #expect(found.count(of: kind) >= 1, "\(kind) at \(index): \(found)")
            let positions: [Int] =
                switch kind {
                case .ectopic: found.ectopic
                case .missed: found.missed
                case .extra: found.extra
                case .longShort: found.longShort
                }
            // An ectopic beat is named at the beat closing the compensatory pause (the premature
            // interval before it counts as short); the others at the artefact's own beat.
            let beat = kind == .ectopic ? index + 2 : index + 1
            #expect(positions.contains(beat), "\(kind) at beat \(beat): \(found)")
            // Nothing else in the smooth series around it.
            #expect(found.count <= 2, "\(found)")
            let corrected = RRArtefactCorrection.correct(series)
            // Missed and extra beats are repaired outright; a misplaced beat is moved halfway
            // between its neighbours, which spreads the error over two intervals.
            let worstBefore = series.map { abs($0 - 800) }.max() ?? 0
            let worstAfter = corrected.corrected.map { abs($0 - 800) }.max() ?? 0
            if kind == .missed || kind == .extra {
                #expect(worstAfter < 60, "corrected: \(kind) \(corrected.corrected[(index - 3)...(index + 3)])")
            } else {
                #expect(worstAfter < 0.6 * worstBefore, "corrected: \(kind) \(worstBefore) → \(worstAfter)")
            }
            #expect(corrected.artefacts.count(of: kind) >= 1)
        }
    }

    @Test("a clean series has no artefacts; fewer than 10 intervals are returned as given")
    func cleanAndShort() {
        var generator = RRSeries(state: 7)
        let series = generator.breathing(count: 600, mean: 700)
        let result = RRArtefactCorrection.correct(series)
        #expect(result.artefacts.count == 0)
        #expect(result.corrected == series)
        let short: [Double] = [800, 1600, 800, 400]
        #expect(RRArtefactCorrection.correct(short).corrected == short)
    }

    @Test("time domain: RMSSD, SDNN, pNN50 and mean HR by hand")
    func timeDomain() throws {
        let figures = try #require(TimeDomainHRV([800, 860, 790, 800]))
        // Differences 60, −70, 10: RMSSD = sqrt((3600 + 4900 + 100) / 3); two of three over 50 ms.
        #expect(abs(figures.rmssd - (8600.0 / 3).squareRoot()) < 1e-9)
        #expect(abs(figures.pnn50 - 200.0 / 3) < 1e-9)
        #expect(abs(figures.meanRR - 812.5) < 1e-9)
        #expect(abs(figures.meanHeartRate - 60_000 / 812.5) < 1e-9)
        // Sample standard deviation (n − 1).
        let squares = [800.0, 860, 790, 800].reduce(0) { $0 + ($1 - 812.5) * ($1 - 812.5) }
        #expect(abs(figures.sdnn - (squares / 3).squareRoot()) < 1e-9)
        #expect(TimeDomainHRV([800, 810]) == nil)
    }

    @Test("α1 tracks the correlation: white noise near 0.5, a wandering series well above 1")
    func alphaRange() throws {
        var generator = RRSeries(state: 3)
        let white = try #require(
            DetrendedFluctuation.alpha(generator.make(count: 2000, mean: 500, spread: 20, correlated: 0)))
        let wandering = try #require(
            DetrendedFluctuation.alpha(generator.make(count: 2000, mean: 900, spread: 20, correlated: 1)))
        #expect(abs(white - 0.5) < 0.1, "white \(white)")
        #expect(wandering > 1.1, "wandering \(wandering)")
    }

    @Test(
        "NeuroKit2 decides: artefacts, corrected series, RMSSD, SDNN, pNN50 and α1 agree on simulated series at three intensities and artefact rates 0–5 %, and on a real 60-minute recording"
    )
    func agreesWithNeuroKit() async throws {
        var generator = RRSeries(state: 2026)
        var cases: [(label: String, series: [Double])] = []
        for (intensity, mean, correlated) in [("rest", 1000.0, 0.9), ("moderate", 650.0, 0.6), ("hard", 400.0, 0.1)] {
            for rate in [0.0, 0.02, 0.05] {
                var series = generator.make(count: 600, mean: mean, spread: mean * 0.02, correlated: correlated)
                let count = Int(Double(series.count) * rate)
                let kinds = RRArtefactKind.allCases
                // Spread out, away from the ends, never two side by side.
                for artefact in 0..<count {
                    let index = 20 + artefact * (series.count - 60) / max(count, 1)
                    inject(kinds[artefact % kinds.count], at: index, into: &series)
                }
                cases.append(("\(intensity), \(Int(rate * 100)) %", series))
            }
        }
        // And a real recording: the 60-minute NN series pyhrv ships (its wheel, fetched by
        // scripts/setup-python.sh).
        let sample = try Spawned(
            venvPython,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/hrv/pyhrv_sample.py").path,
                packageRoot.appendingPathComponent(".venv/share/hrbridge-data/pyhrv-0.5.0-py3-none-any.whl").path,
            ], label: "pyhrv sample")
        #expect(await sample.wait() == 0, "\(sample.output.suffix(3))")
        let real = try #require(
            sample.output.first { $0.hasPrefix("{") }.flatMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }?["series"] as? [Double])
        #expect(real.count == 4684)
        cases.append(("real: pyhrv's 60-minute sample", real))
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("hrv-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: input) }
        try JSONSerialization.data(withJSONObject: ["series": cases.map(\.series)]).write(to: input)
        let reference = try Spawned(
            venvPython,
            [packageRoot.appendingPathComponent("Tests/Fixtures/hrv/neurokit_reference.py").path, input.path],
            label: "neurokit2")
        #expect(await reference.wait() == 0, "\(reference.output.suffix(5))")
        let line = try #require(reference.output.first { $0.hasPrefix("{") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let results = try #require(object["results"] as? [[String: Any]])
        try #require(results.count == cases.count)
        for (index, (label, series)) in cases.enumerated() {
            let expected = results[index]
            let ours = RRArtefactCorrection.correct(series)
            let kinds = try #require(expected["artefacts"] as? [String: [Int]])
            #expect(ours.artefacts.ectopic == kinds["ectopic"], "\(label): ectopic")
            #expect(ours.artefacts.missed == kinds["missed"], "\(label): missed")
            #expect(ours.artefacts.extra == kinds["extra"], "\(label): extra")
            #expect(ours.artefacts.longShort == kinds["longshort"], "\(label): long/short")
            let corrected = try #require(expected["corrected"] as? [Double])
            #expect(ours.corrected.count == corrected.count, "\(label): corrected length")
            if ours.corrected.count == corrected.count {
                let worst = zip(ours.corrected, corrected).map { abs($0 - $1) }.max() ?? 0
                #expect(worst <= 1, "\(label): corrected intervals differ by up to \(worst) ms")
            }
            let time = try #require(TimeDomainHRV(ours.corrected))
            #expect(abs(time.rmssd - (expected["rmssd"] as? Double ?? .nan)) < 0.1, "\(label): RMSSD \(time.rmssd)")
            #expect(abs(time.sdnn - (expected["sdnn"] as? Double ?? .nan)) < 0.1, "\(label): SDNN \(time.sdnn)")
            #expect(abs(time.meanRR - (expected["meanNN"] as? Double ?? .nan)) < 0.1, "\(label): mean RR")
            #expect(abs(time.pnn50 - (expected["pnn50"] as? Double ?? .nan)) < 0.5, "\(label): pNN50 \(time.pnn50)")
            let alpha = try #require(DetrendedFluctuation.alpha(ours.corrected))
            #expect(abs(alpha - (expected["alpha1"] as? Double ?? .nan)) < 0.02, "\(label): α1 \(alpha)")
        }
    }

    @Test("windows: 2 minutes every 5 s, none before 2 minutes or under 100 beats, > 5 % artefacts unreliable")
    func windows() throws {
        var generator = RRSeries(state: 11)
        var series = generator.make(count: 900, mean: 600, spread: 12, correlated: 0.7)
        let analysis = HRVAnalysis(intervals: series)
        let total = series.reduce(0, +) / 1000
        #expect(analysis.windows.count == Int((total - 120) / 5) + 1)
        #expect(analysis.windows.first?.end == 120)
        #expect(analysis.windows.allSatisfy { $0.alpha1 != nil && $0.isReliable && $0.beats >= 190 })
        // Many artefacts in the last two minutes: those windows are marked, their value kept.
        for index in stride(from: 700, to: 890, by: 12) { inject(.missed, at: index, into: &series) }
        let dirty = HRVAnalysis(intervals: series)
        let last = try #require(dirty.windows.last)
        #expect(last.artefactPercent > 5)
        #expect(!last.isReliable)
        #expect(last.alpha1 != nil)
        // A slow heart: 120 s of 1.5 s beats is 80 beats, too few.
        let slow = HRVAnalysis(intervals: generator.make(count: 200, mean: 1500, spread: 10, correlated: 0.5))
        #expect(slow.windows.allSatisfy { $0.alpha1 == nil && !$0.isReliable })
    }

    /// A series of whole-millisecond beats whose ends fall exactly on window starts: every
    /// `every`-th window start is hit by the nearest beat, its interval and the next one shifted
    /// by the few ms it takes (the sum after them unchanged).
    static func onEdges(_ series: [Double], every: Int) -> [Double] {
        var series = series
        var edge = 5_000.0 * Double(every)
        while true {
            var time = 0.0
            var nearest: (index: Int, end: Double)?
            for (index, interval) in series.enumerated() {
                time += interval
                if nearest == nil || abs(time - edge) < abs(nearest!.end - edge) { nearest = (index, time) }
            }
            guard let hit = nearest, hit.index + 1 < series.count, time > edge + 120_000 else { break }
            series[hit.index] += edge - hit.end
            series[hit.index + 1] -= edge - hit.end
            edge += 5_000 * Double(every)
        }
        return series
    }

    /// The intervals of the beats ending in (end − 120 s, end], summed in whole milliseconds.
    static func members(_ series: [Double], end: Int) -> [Double] {
        var time = 0
        return series.filter { interval in
            time += Int(interval)
            return time > end - 120_000 && time <= end
        }
    }

    @Test(
        "window edges are exact: a beat ending on a window's start is out, on its end is in, at 150, 140, 100 and 60 bpm",
        arguments: [400.0, 428.0, 600.0, 1000.0])
    func exactEdges(mean: Double) throws {
        var generator = RRSeries(state: UInt64(mean))
        let series = Self.onEdges(
            generator.make(count: Int(300_000 / mean), mean: mean, spread: mean * 0.02, correlated: 0.5), every: 1)
        let windows = HRVAnalysis.windows(series)
        try #require(windows.count == (Int(series.reduce(0, +)) - 120_000) / 5_000 + 1)
        for window in windows {
            let end = Int((window.end * 1000).rounded())
            #expect(window.end * 1000 == Double(end), "window ends on the 5 s grid: \(window.end)")
            let expected = HRVAnalysis.window(Self.members(series, end: end), end: window.end, power: nil)
            #expect(window == expected, "window ending \(end) ms: \(window.beats) beats, \(expected.beats) expected")
        }
    }

    @Test("the live tracker sees the windows hrv analyze sees, though the beats' dates jitter by up to 0.3 s")
    func liveMatchesAnalysis() throws {
        var generator = RRSeries(state: 140)
        let series = Self.onEdges(
            generator.make(count: 800, mean: 428, spread: 10, correlated: 0.6), every: 2)
        var tracker = DFAAlpha1Tracker()
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000.123)
        var time = 0.0
        for interval in series {
            time += interval / 1000
            // A frame's receipt, late by a jitter that a strap's radio adds.
            let jitter = Double(generator.generator.next() % 300) / 1000
            _ = tracker.add(interval: interval / 1000, end: start.addingTimeInterval(time + jitter))
        }
        let analysed = HRVAnalysis.windows(series)
        #expect(tracker.windows.count == analysed.count)
        for (live, stored) in zip(tracker.windows, analysed) {
            #expect(live.end == stored.end)
            #expect(live.beats == stored.beats)
            #expect(live.alpha1 == stored.alpha1)
            let date = try #require(live.date)
            #expect(abs(date.timeIntervalSince(start) - live.end) < 0.5, "window dated from the first beat")
        }
    }

    @Test("a gap in the beats (a lost link) is a gap: the timeline follows the dates, the grid moves past it")
    func gapInBeats() throws {
        var timeline = BeatTimeline()
        let start = Date(timeIntervalSinceReferenceDate: 1_000)
        let tick = BeatClock.ticksPerSecond
        #expect(timeline.place(interval: tick, end: start.addingTimeInterval(1)) == tick)
        // Jitter within the tolerance: the interval's sum rules.
        #expect(timeline.place(interval: tick / 2, end: start.addingTimeInterval(1.5 + 1.9)) == tick * 3 / 2)
        // 30 s without beats: the date rules.
        #expect(timeline.place(interval: tick / 2, end: start.addingTimeInterval(32)) == tick * 32)
        // A date far behind (a clock set back): beats never go back.
        #expect(timeline.place(interval: tick / 2, end: start.addingTimeInterval(2)) == tick * 32 + 1)
        // Windows: beats for 130 s, nothing for 20 s, beats again: the window due when the beats
        // stopped ends at 135 s, no window is invented in the gap, the next ends on the grid past
        // the first beat back.
        var windowing = AlphaWindowing()
        var due: [(end: Int64, beats: Int)] = []
        let before: [Int64] = (1...260).map { Int64($0) * tick / 2 }
        let after: [Int64] = (1...100).map { 150 * tick + Int64($0) * tick / 2 }
        let ends = before + after
        for end in ends {
            if let window = windowing.add(milliseconds: 500, end: end) {
                due.append((window.end, window.intervals.count))
            }
        }
        let expected: [Int64] = [120, 125, 130, 135] + Array(stride(from: 155, through: 200, by: 5))
        #expect(due.map { $0.end / tick } == expected)
        // 135: beats ending in (15, 130]; 155: (35, 130] and (150, 155].
        #expect(due.first { $0.end == 135 * tick }?.beats == 230)
        #expect(due.first { $0.end == 155 * tick }?.beats == 200)
    }

    @Test(
        "NeuroKit2 decides α1 per window: within 0.02 at 60, 90 and 140 bpm, windows starting exactly on a beat included"
    )
    func windowsAgreeWithNeuroKit() async throws {
        var generator = RRSeries(state: 37)
        let cases = [(1000.0, 0.8), (667.0, 0.6), (428.0, 0.3)].map { mean, correlated in
            Self.onEdges(
                generator.make(count: Int(330_000 / mean), mean: mean, spread: mean * 0.025, correlated: correlated),
                every: 3)
        }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("windows-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: input) }
        try JSONSerialization.data(withJSONObject: ["series": cases]).write(to: input)
        let reference = try Spawned(
            venvPython,
            [packageRoot.appendingPathComponent("Tests/Fixtures/hrv/neurokit_windows.py").path, input.path],
            label: "neurokit2 windows")
        #expect(await reference.wait() == 0, "\(reference.output.suffix(5))")
        let line = try #require(reference.output.first { $0.hasPrefix("{") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let expected = try #require(object["windows"] as? [[[String: Any]]])
        try #require(expected.count == cases.count)
        var onEdge = 0
        for (series, reference) in zip(cases, expected) {
            let ours = HRVAnalysis.windows(series)
            #expect(ours.count == reference.count)
            for (window, theirs) in zip(ours, reference) {
                let end = try #require(theirs["end"] as? Int)
                #expect(window.end * 1000 == Double(end))
                var time = 0.0
                if series.contains(where: {
                    time += $0; return time == Double(end) - 120_000
                }) {
                    onEdge += 1
                }
                #expect(window.beats == theirs["beats"] as? Int, "window ending \(end) ms: beats")
                let alpha = try #require(window.alpha1, "window ending \(end) ms")
                let reference = try #require(theirs["alpha1"] as? Double)
                #expect(abs(alpha - reference) < 0.02, "window ending \(end) ms: α1 \(alpha) vs \(reference)")
            }
        }
        #expect(onEdge >= 15, "windows starting exactly on a beat: \(onEdge)")
    }

    @Test("thresholds: a ramp whose α1 falls with heart rate gives HRVT1 and HRVT2 where the line crosses 0.75 and 0.5")
    func thresholds() throws {
        // α1 = 1.25 − 0.01 × (HR − 100): 0.75 at 150 bpm, 0.5 at 175 bpm.
        let windows = stride(from: 100.0, through: 185, by: 2.5).map { heartRate in
            HRVWindow(
                end: heartRate, date: nil, beats: 200, alpha1: 1.25 - 0.01 * (heartRate - 100), artefactPercent: 0,
                isReliable: true,
                heartRate: heartRate, power: 2 * heartRate)
        }
        let thresholds = HRVThresholds.estimate(windows)
        let first = try #require(thresholds.hrvt1)
        let second = try #require(thresholds.hrvt2)
        #expect(abs(first.heartRate - 150) < 1e-6)
        #expect(abs(second.heartRate - 175) < 1e-6)
        #expect(abs((first.power ?? 0) - 300) < 1e-6)
        #expect(thresholds.confident)
        #expect(thresholds.note.contains("−10 ± 16 bpm"))
        // An easy ride never reaches 0.5: HRVT2 is not invented.
        let easy = HRVThresholds.estimate(windows.filter { $0.heartRate <= 160 })
        #expect(easy.hrvt1 != nil)
        #expect(easy.hrvt2 == nil)
        #expect(easy.note.contains("did not cross 0.5"))
        #expect(HRVThresholds.estimate(Array(windows.prefix(3))).hrvt1 == nil)
    }

    @Test("thresholds: power alternating 180/260 W while α1 falls with heart rate gives no power past the watts seen")
    func powerLineFitCheck() throws {
        // α1 1.0 → 0.4 over 130–165 bpm (r² 1 against heart rate); power does not follow it.
        let windows = (0..<36).map { index in
            let heartRate = 130 + Double(index)
            return HRVWindow(
                end: Double(index), date: nil, beats: 200, alpha1: 1.0 - 0.6 * (heartRate - 130) / 35,
                artefactPercent: 0, isReliable: true, heartRate: heartRate, power: index % 2 == 0 ? 180 : 260)
        }
        let thresholds = HRVThresholds.estimate(windows)
        let first = try #require(thresholds.hrvt1)
        let second = try #require(thresholds.hrvt2)
        #expect(abs(first.heartRate - (130 + 35 * 0.25 / 0.6)) < 1e-6)
        // Unchecked, the line (r² 0.002) put them at −13 W and 1153 W.
        #expect(first.power == nil, "\(first)")
        #expect(second.power == nil, "\(second)")
        #expect(thresholds.note.contains("no threshold power"))
    }

    @Test("an RR of 65535/1024 s (a corrupt frame) among 0.8 s beats is no beat: 75 bpm kept, the artefact counted")
    func implausibleInterval() throws {
        var generator = RRSeries(state: 64)
        let series = generator.breathing(count: 300, mean: 800)
        var tracker = DFAAlpha1Tracker()
        var time = 0.0
        var corruptEnd = 0.0
        for (index, interval) in series.enumerated() {
            time += interval / 1000
            // Beat 200's field reads 0xFFFF; the frame came when the beat did.
            let seconds = index == 200 ? 65535.0 / 1024 : interval / 1000
            if index == 200 { corruptEnd = time }
            _ = tracker.add(interval: seconds, end: date(time))
        }
        let windows = tracker.windows
        try #require(windows.count > 20)
        for window in windows {
            #expect(abs(window.heartRate - 75) < 1, "window ending \(window.end) s: \(window.heartRate) bpm")
            #expect((window.rmssd ?? .infinity) < 100, "window ending \(window.end) s: RMSSD \(window.rmssd ?? .nan)")
        }
        let holding = windows.filter {
            $0.end > corruptEnd + 0.5 && $0.end - HRVAnalysis.windowLength < corruptEnd - 0.5
        }
        try #require(holding.count > 10)
        for window in holding {
            let artefacts = try #require(window.artefacts)
            #expect(artefacts.longShort >= 1, "window ending \(window.end) s: \(artefacts)")
            #expect(window.artefactPercent >= 100 / Double(window.beats + 1) - 1e-9)
        }
        #expect(HRVAnalysis.plausibleIntervals.upperBound == 5000, "longer than 5 s: a gap, not missed beats")
    }

    @Test("a 6 s interval in the whole series is a gap: left out of the correction and time domain, counted once")
    func gapInWholeSeries() throws {
        var generator = RRSeries(state: 65)
        let series = generator.breathing(count: 600, mean: 800)
        var withGap = series
        withGap.insert(6000, at: 300)
        let clean = HRVAnalysis(intervals: series)
        let gapped = HRVAnalysis(intervals: withGap)
        #expect(clean.gaps == 0)
        #expect(gapped.gaps == 1)
        #expect(gapped.correction == clean.correction, "the correction never sees the gap")
        let figures = try #require(gapped.timeDomain)
        #expect(figures == clean.timeDomain, "the same whole-series figures as without it")
        #expect(figures.count == series.count)
        #expect(abs(figures.meanHeartRate - 60_000 / 800) < 1, "no 6 s beat pulls the heart rate down")
        // Just under the bound is an interval like any other.
        withGap[300] = 5000
        #expect(HRVAnalysis(intervals: withGap).gaps == 0)
    }

    @Test("power readings with no RR (a strap heard only by its broadcast) stay bounded; the windows still get theirs")
    func powerWithoutBeats() throws {
        var tracker = DFAAlpha1Tracker()
        // 25,000 s of a 4 Hz power meter and no beat.
        for index in 0..<100_000 { tracker.add(power: 100, at: date(Double(index) / 4)) }
        #expect(tracker.heldPowerReadings < 2_500, "\(tracker.heldPowerReadings) readings held")
        // Then the beats come, with the power at 200 W: the first window's power is theirs alone.
        var time = 25_000.0
        var first: HRVWindow?
        for _ in 0..<200 {
            time += 0.8
            tracker.add(power: 200, at: date(time))
            if let window = tracker.add(interval: 0.8, end: date(time)), first == nil { first = window }
        }
        let window = try #require(first)
        #expect(window.power == 200)
        #expect(tracker.heldPowerReadings < 2_500)
    }
}
