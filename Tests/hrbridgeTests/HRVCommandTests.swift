import Foundation
import Testing
import Workouts

@Suite("hrbridge hrv analyze")
struct HRVCommandTests {
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
    func file() throws {
        let series = Self.series()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rr-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text = "# RR in ms\n" + series.map { String(Int($0)) }.joined(separator: "\n") + "\n\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let result = try runHRBridge(["hrv", "analyze", path])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "intervals", "artefacts", "meanRR", "meanHeartRate", "rmssd", "sdnn", "pnn50", "dfaAlpha1",
                "thresholds",
            ])
        #expect(object["intervals"] as? Int == series.count)
        let artefacts = try #require(object["artefacts"] as? [String: Any])
        #expect(artefacts["missed"] as? Int == 1)
        #expect(artefacts["extra"] as? Int == 1)
        let analysis = HRVAnalysis(intervals: series)
        #expect(abs((object["rmssd"] as? Double ?? 0) - (analysis.timeDomain?.rmssd ?? .nan)) < 1e-9)
        #expect(abs((object["sdnn"] as? Double ?? 0) - (analysis.timeDomain?.sdnn ?? .nan)) < 1e-9)
        #expect(abs((object["pnn50"] as? Double ?? -1) - (analysis.timeDomain?.pnn50 ?? .nan)) < 1e-9)
        let windows = try #require(object["dfaAlpha1"] as? [[String: Any]])
        #expect(windows.count == analysis.windows.count)
        #expect(
            windows.first.map { Set($0.keys) } == [
                "end", "beats", "alpha1", "artefactPercent", "artefacts", "reliable", "heartRate", "power",
            ])
        let printed = windows.map { $0["alpha1"] as? Double ?? .nan }
        let computed = analysis.windows.map { $0.alpha1 ?? .nan }
        #expect(zip(printed, computed).allSatisfy { abs($0 - $1) < 1e-9 }, "the printed α1 series is the library's")
        let thresholds = try #require(object["thresholds"] as? [String: Any])
        #expect(Set(thresholds.keys) == ["hrvt1", "hrvt2", "points", "rSquared", "confident", "note"])
    }

    @Test("bad input is one line naming the place, exit 65; a missing file or workout is 66")
    func badInput() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rr-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        for (text, line) in [("800\n810\nabc\n", 3), ("800\n-5\n", 2), ("800\n1e9\n", 2), ("nan\n", 1)] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let result = try runHRBridge(["hrv", "analyze", path])
            #expect(result.status == 65)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("\(path):\(line):"), "\(result.stderr)")
        }
        #expect(try runHRBridge(["hrv", "analyze", path + ".missing"]).status == 66)
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("s-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: store) }
        _ = try runHRBridge(["workouts", "list", "--store", store + "/store.sqlite"])
        let unknown = try runHRBridge(["hrv", "analyze", UUID().uuidString, "--store", store + "/store.sqlite"])
        #expect(unknown.status == 66, "\(unknown.stderr)")
    }

    @Test("a stored workout: its RR intervals from the store, windows every 5 s")
    func storedWorkout() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrv-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = directory + "/store.sqlite"
        let run = try runHRBridge(["workout", "run", "--json", "--speed", "max", "--duration", "6m", "--store", store])
        #expect(run.status == 0, "\(run.stderr)")
        let listing = try runHRBridge(["workouts", "list", "--json", "--store", store])
        let line = try #require(listing.stdout.split(separator: "\n").first)
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String)
        let result = try runHRBridge(["hrv", "analyze", id, "--store", store])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let intervals = try #require(object["intervals"] as? Int)
        #expect(intervals > 300, "six minutes of beats")
        let windows = try #require(object["dfaAlpha1"] as? [[String: Any]])
        #expect(windows.count >= 40)
        #expect(windows.allSatisfy { ($0["end"] as? Double ?? 0) >= 120 })
    }
}
