import Foundation
import JSONSupport
import Testing
import Wire
import Workouts

@testable import hrbridge

@Suite("hrbridge hrv analyze")
struct HRVCommandTests {
    /// What these tests read of the report (`HRVReport` only writes): the count and the α1 windows.
    struct Report: Decodable {
        var intervals: Int
        var dfaAlpha1: [WorkoutJSON.HRVWindow]
    }

    /// A breathing heart with one missed and one extra beat, as whole milliseconds.
    static func series() -> [Double] {
        var series = (0..<900).map { index in (650 + 25 * sin(2 * Double.pi * Double(index) / 5.3)).rounded() }
        series[300] += series[301]
        series.remove(at: 301)
        series.insert(200, at: 600)
        series[601] -= 200
        return series
    }

    @Test("a file of milliseconds: the same figures as the library, every key documented")
    func file() async throws {
        let series = Self.series()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rr-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = "# RR in ms\n" + series.map { String(Int($0)) }.joined(separator: "\n") + "\n\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let result = try await runHRBridge(["hrv", "analyze", path])
        #expect(result.status == 0, "\(result.stderr)")
        // Every key documented: the report's own keys, nulls kept, as printed.
        let object = try JSONLines.decode([String: JSONValue].self, result.stdout)
        #expect(
            Set(object.keys) == [
                "intervals", "artefacts", "meanRR", "meanHeartRate", "rmssd", "sdnn", "pnn50", "dfaAlpha1",
                "thresholds",
            ])
        #expect(object["intervals"]?.integer == series.count)
        let artefacts = try #require(object["artefacts"]?.object)
        #expect(artefacts["missed"]?.integer == 1)
        #expect(artefacts["extra"]?.integer == 1)
        #expect(artefacts["gaps"]?.integer == 0, "a file's intervals are 5 s at most")
        let analysis = HRVAnalysis(intervals: series)
        #expect(abs((object["rmssd"]?.number ?? 0) - (analysis.timeDomain?.rmssd ?? .nan)) < 1e-9)
        #expect(abs((object["sdnn"]?.number ?? 0) - (analysis.timeDomain?.sdnn ?? .nan)) < 1e-9)
        #expect(abs((object["pnn50"]?.number ?? -1) - (analysis.timeDomain?.pnn50 ?? .nan)) < 1e-9)
        let windowObjects = try #require(object["dfaAlpha1"]?.array).compactMap { $0.object }
        #expect(
            windowObjects.first.map { Set($0.keys) } == [
                "end", "beats", "alpha1", "artefactPercent", "artefacts", "reliable", "heartRate", "power",
            ])
        // The windows themselves, as the live stream's `hrv` messages carry them.
        let windows = try JSONLines.decode(Report.self, result.stdout).dfaAlpha1
        #expect(windows.count == analysis.windows.count)
        let printed = windows.map { $0.alpha1 ?? .nan }
        let computed = analysis.windows.map { $0.alpha1 ?? .nan }
        #expect(zip(printed, computed).allSatisfy { abs($0 - $1) < 1e-9 }, "the printed α1 series is the library's")
        let thresholds = try #require(object["thresholds"]?.object)
        #expect(Set(thresholds.keys) == ["hrvt1", "hrvt2", "points", "rSquared", "confident", "note"])
    }

    @Test("a 6 s interval (a gap) in the series: the same whole-series figures as without it, artefacts.gaps 1")
    func gapLeftOut() throws {
        let series = Self.series()
        var withGap = series
        withGap.insert(6000, at: 450)
        // The report as the command prints it, read back.
        func printed(_ intervals: [Double]) throws -> [String: JSONValue] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
            let data = try encoder.encode(HRVReport(HRVAnalysis(intervals: intervals)))
            return try JSONDecoder().decode([String: JSONValue].self, from: data)
        }
        let clean = try printed(series)
        let gapped = try printed(withGap)
        for key in ["meanRR", "meanHeartRate", "rmssd", "sdnn", "pnn50"] {
            let value = try #require(gapped[key]?.number, "\(key)")
            #expect(value == clean[key]?.number, "\(key)")
        }
        #expect(gapped["intervals"]?.integer == series.count + 1, "the gap is an interval of the input")
        let artefacts = try #require(gapped["artefacts"]?.object)
        let cleanArtefacts = try #require(clean["artefacts"]?.object)
        #expect(artefacts["gaps"]?.integer == 1)
        #expect(cleanArtefacts["gaps"]?.integer == 0)
        for kind in ["ectopic", "missed", "extra"] { #expect(artefacts[kind] == cleanArtefacts[kind], "\(kind)") }
        // Counted as a long/short artefact too, as each window counts it.
        #expect(artefacts["longShort"]?.integer == cleanArtefacts["longShort"]?.integer.map { $0 + 1 })
        #expect(artefacts["total"]?.integer == cleanArtefacts["total"]?.integer.map { $0 + 1 })
    }

    @Test("bad input is one line naming the place, exit 65; a missing file or workout is 66; --rr ecg on a file is 64")
    func badInput() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rr-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        for (text, line) in [("800\n810\nabc\n", 3), ("800\n-5\n", 2), ("800\n1e9\n", 2), ("nan\n", 1)] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let result = try await runHRBridge(["hrv", "analyze", path])
            #expect(result.status == 65)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("\(path):\(line):"), "\(result.stderr)")
        }
        #expect(try await runHRBridge(["hrv", "analyze", path + ".missing"]).status == 66)
        // A directory is not an empty series.
        let directory = try await runHRBridge(["hrv", "analyze", FileManager.default.temporaryDirectory.path])
        #expect(directory.status == 66 && directory.stdout.isEmpty && directory.stderr.contains("it is a directory"))
        // Lines ended as Windows and spreadsheets end them read as any others; a bad one is named by its line.
        try Data("800\r\n810\r\n820\r\n".utf8).write(to: URL(fileURLWithPath: path))
        let crlf = try await runHRBridge(["hrv", "analyze", path])
        #expect(crlf.status == 0, "\(crlf.stderr)")
        #expect(crlf.stdout.contains(#""intervals":3"#))
        try Data("800\r\n810\r\nabc\r\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try await runHRBridge(["hrv", "analyze", path]).stderr.contains("\(path):3:"))
        try Data("800\n".utf8).write(to: URL(fileURLWithPath: path))
        let fileFromECG = try await runHRBridge(["hrv", "analyze", path, "--rr", "ecg"])
        #expect(fileFromECG.status == 64 && fileFromECG.stderr.contains("--rr ecg needs a stored workout"))
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("s-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: store) }
        #expect(
            try await runHRBridge(["hrv", "analyze", UUID().uuidString, "--store", store + "/none.sqlite"]).status == 66
        )
        _ = try await runHRBridge([
            "workout", "run", "--speed", "max", "--duration", "10s", "--store", store + "/store.sqlite",
        ])
        let unknown = try await runHRBridge(["hrv", "analyze", UUID().uuidString, "--store", store + "/store.sqlite"])
        #expect(unknown.status == 66, "\(unknown.stderr)")
    }

    @Test("a stored workout: its RR intervals from the store, windows every 5 s")
    func storedWorkout() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrv-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/store.sqlite"
        let run = try await runHRBridge([
            "workout", "run", "--json", "--speed", "max", "--duration", "6m", "--store", store,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let listing = try await runHRBridge(["workouts", "list", "--json", "--store", store])
        let line = try #require(JSONLines.lines(listing.stdout).first)
        let id = try JSONLines.decode(ListLine.self, line).id
        let result = try await runHRBridge(["hrv", "analyze", id, "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONLines.decode(Report.self, result.stdout)
        #expect(report.intervals > 300, "six minutes of beats")
        #expect(report.dfaAlpha1.count >= 40)
        #expect(report.dfaAlpha1.allSatisfy { $0.end >= 120 })
        // No ECG recorded: nothing to compare, and no R peaks to analyse.
        let object = try JSONLines.decode([String: JSONValue].self, result.stdout)
        #expect(object["ecg"]?.array?.isEmpty == true)
        let fromECG = try await runHRBridge(["hrv", "analyze", id, "--rr", "ecg", "--store", store])
        #expect(fromECG.status == 64 && fromECG.stdout.isEmpty)
        #expect(fromECG.stderr.contains("has no ECG"), "\(fromECG.stderr)")
    }

    /// A simulated H10 (its ECG's R peaks on its beats), four minutes.
    static let h10 = """
        {"version": 1, "seed": 5, "straps": [
          {"name": "Polar H10 0A1B2C3D", "address": "A0:9E:1A:00:00:01", "pmd": true,
           "segments": [{"type": "steady", "duration": "5m", "intensity": 0.5}]}]}
        """

    @Test("a workout with ECG: its R peaks agree with the strap's beats; --rr ecg analyses the R peaks' intervals")
    func workoutWithECG() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrv-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/store.sqlite"
        let scenario = directory + "/h10.json"
        try Data(Self.h10.utf8).write(to: URL(fileURLWithPath: scenario))
        let run = try await runHRBridge([
            "workout", "run", "--json", "--speed", "max", "--duration", "4m", "--scenario", scenario, "--ecg",
            "--store", store,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let listing = try await runHRBridge(["workouts", "list", "--json", "--store", store])
        let id = try JSONLines.decode(ListLine.self, try #require(JSONLines.lines(listing.stdout).first)).id

        let result = try await runHRBridge(["hrv", "analyze", id, "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try JSONLines.decode([String: JSONValue].self, result.stdout)
        let comparisons = try #require(object["ecg"]?.array).compactMap(\.object)
        #expect(comparisons.count == 1)
        let ecg = try #require(comparisons.first)
        #expect(
            Set(ecg.keys) == [
                "sensor", "rPeaks", "strapBeats", "pairedBeats", "comparedIntervals", "beatsWithoutPeak",
                "peaksWithoutBeat", "beatDelay", "meanDifference", "meanAbsoluteDifference", "p95AbsoluteDifference",
                "maximumAbsoluteDifference", "agreeingPercent",
            ])
        #expect(ecg["sensor"]?.string == "A0:9E:1A:00:00:01")
        let beats = try #require(ecg["strapBeats"]?.integer)
        let paired = try #require(ecg["pairedBeats"]?.integer)
        let compared = try #require(ecg["comparedIntervals"]?.integer)
        #expect(beats == object["intervals"]?.integer && beats > 4 * 60, "four minutes of beats: \(beats)")
        #expect(Double(paired) >= 0.99 * Double(beats), "\(paired) of \(beats) paired")
        #expect(Double(compared) >= 0.99 * Double(beats), "\(compared) compared")
        #expect((ecg["peaksWithoutBeat"]?.integer ?? 99) <= 2)
        // The strap's intervals are whole 1/1024 s; the R peaks come from 130 Hz samples.
        #expect((ecg["meanAbsoluteDifference"]?.number ?? 99) < 1, "\(ecg)")
        #expect((ecg["agreeingPercent"]?.number ?? 0) >= 99, "\(ecg)")
        // A frame a second: its beats are placed at its arrival, up to a second after their R peaks.
        #expect((ecg["beatDelay"]?.number).map { $0 > 0 && $0 < 1000 } == true, "\(ecg)")

        let fromECG = try await runHRBridge(["hrv", "analyze", id, "--rr", "ecg", "--store", store])
        #expect(fromECG.status == 0, "\(fromECG.stderr)")
        let ecgReport = try JSONLines.decode([String: JSONValue].self, fromECG.stdout)
        let ecgIntervals = try #require(ecgReport["intervals"]?.integer)
        #expect(abs(ecgIntervals - beats) <= beats / 50, "\(ecgIntervals) R–R intervals, \(beats) beats")
        let strapRMSSD = try #require(object["rmssd"]?.number)
        let ecgRMSSD = try #require(ecgReport["rmssd"]?.number)
        #expect(abs(strapRMSSD - ecgRMSSD) < 2, "RMSSD: strap \(strapRMSSD) ms, ECG \(ecgRMSSD) ms")
        #expect(ecgReport["ecg"]?.array?.count == 1)
    }
}
