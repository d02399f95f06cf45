import BusHarness
import Foundation
import Testing
import WorkoutStore

/// `hrbridge workout run --ecg --acc` on the simulated H10, then the stored raw signals exported
/// as EDF+ (read back by pyEDFlib, not by our code) and as CSV.
@Suite("Raw signals from the store: EDF+ read back with pyEDFlib, CSV")
struct WaveformExportTests {
    static let scenario = """
        {"version": 1, "seed": 9, "straps": [
          {"name": "Polar H10 0A1B2C3D", "address": "A0:9E:1A:00:00:01", "pmd": true,
           "segments": [{"type": "steady", "duration": "3m", "intensity": 0.4}]}]}
        """
    /// Two laps of a 40-second and a 20-second step: laps and segments to annotate.
    static let plan = """
        {"version": 1, "name": "Lab steps", "activity": "running", "custom": {"blocks": [{"iterations": 2,
        "steps": [{"purpose": "work", "goal": {"time": "40 s"}}, {"purpose": "recovery", "goal": {"time": "20 s"}}]}]}}
        """

    @Test(
        "workout run --ecg --acc stores both; EDF+ has the rate, units, every value and the laps as annotations; CSV has every sample on the strap's clock"
    )
    func endToEnd() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("waveforms-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("hrbridge").path
        let store = directory.appendingPathComponent("store.sqlite").path
        let scenario = directory.appendingPathComponent("h10.json")
        let plan = directory.appendingPathComponent("plan.json")
        try Data(Self.scenario.utf8).write(to: scenario)
        try Data(Self.plan.utf8).write(to: plan)
        let run = try Spawned(
            binary,
            [
                "workout", "run", "--scenario", scenario.path, "--plan", plan.path, "--speed", "max", "--json",
                "--ecg", "--acc", "--acc-rate", "25", "--store", store,
            ])
        #expect(await run.wait() == 0, "\(run.report)")
        let id = try #require(try await WorkoutStore(path: store).workouts().first?.id).uuidString

        let show = try Spawned(binary, ["workouts", "show", id, "--store", store])
        #expect(await show.wait() == 0)
        #expect(show.output.contains { $0.contains("(A0:9E:1A:00:00:01) ecg: 130 Hz,") && $0.hasSuffix("1 run") })
        #expect(show.output.contains { $0.contains("(A0:9E:1A:00:00:01) acc: 25 Hz,") })

        // CSV: every stored ECG sample, evenly spaced at the strap's interval within each frame.
        let csvPath = directory.appendingPathComponent("ecg.csv").path
        let csv = try Spawned(
            binary, ["workouts", "export", id, "--format", "csv", "--signal", "ecg", "-o", csvPath, "--store", store])
        #expect(await csv.wait() == 0, "\(csv.report)")
        let rows = try String(contentsOfFile: csvPath, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: ",").map(String.init)
        }
        #expect(rows.first == ["time", "sensor", "run", "ecg_uV"])
        let samples = rows.dropFirst()
        // The plan's 2 minutes at 130 Hz, within a frame of 73 at either end.
        #expect(abs(samples.count - 120 * 130) <= 2 * 73, "\(samples.count) ECG samples")
        #expect(samples.allSatisfy { $0.count == 4 && $0[1] == "A0:9E:1A:00:00:01" && $0[2] == "1" })
        let times = samples.compactMap { Double($0[0]) }
        let steps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(steps.allSatisfy { $0 > 0 }, "times only go forward")
        #expect(steps.prefix(72).allSatisfy { abs($0 - 1.0 / 130) < 2e-6 }, "1/130 s apart within a frame")
        let csvValues = samples.compactMap { Double($0[3]) }

        // EDF+: one file per signal, read by pyEDFlib.
        let prefix = directory.appendingPathComponent("s01").path
        let edf = try Spawned(binary, ["workouts", "export", id, "--format", "edf", "-o", prefix, "--store", store])
        #expect(await edf.wait() == 0, "\(edf.report)")
        let ecgFile = prefix + "-A0-9E-1A-00-00-01-ecg.edf"
        #expect(edf.output.contains { $0.hasPrefix("hrbridge: wrote \(ecgFile) (") })
        let ecg = try await EDFTests.read(ecgFile)
        #expect(ecg.filetype == 1, "EDF+")
        let signal = try #require(ecg.signals.first)
        #expect(signal.label == "ECG" && signal.unit == "uV" && signal.frequency == 130)
        #expect(signal.values.count == ecg.records * 130 && !signal.values.isEmpty)
        #expect(signal.values == Array(csvValues.prefix(signal.values.count)), "the same samples as the CSV")
        let texts = ecg.annotations.compactMap { $0.count == 3 ? $0[2].text : nil }
        #expect(texts.filter { $0 == "lap" }.count == 2, "\(texts)")
        #expect(texts.filter { $0 == "segment" }.count == 4)
        #expect(texts.contains("workout start"))
        let laps = ecg.annotations.filter { $0.count == 3 && $0[2].text == "lap" }
        #expect(laps.map { $0[1].number } == [60, 60], "a lap's duration")
        let onsets = laps.compactMap { $0[0].number }
        #expect(onsets.count == 2 && abs(onsets[1] - onsets[0] - 60) < 1e-3, "laps a minute apart: \(onsets)")

        let acc = try await EDFTests.read(prefix + "-A0-9E-1A-00-00-01-acc.edf")
        #expect(acc.signals.map(\.label) == ["ACC X", "ACC Y", "ACC Z"])
        #expect(acc.signals.allSatisfy { $0.unit == "mG" && abs($0.frequency - 25) < 0.01 })
        #expect(abs(acc.records - 120) <= 2)

        // --signal picks one signal's files; the errors say what is wrong.
        let only = try Spawned(
            binary,
            ["workouts", "export", id, "--format", "edf", "--signal", "acc", "-o", prefix + "-only", "--store", store])
        #expect(await only.wait() == 0)
        #expect(!FileManager.default.fileExists(atPath: prefix + "-only-A0-9E-1A-00-00-01-ecg.edf"))
        #expect(FileManager.default.fileExists(atPath: prefix + "-only-A0-9E-1A-00-00-01-acc.edf"))
        let missing = try Spawned(
            binary, ["workouts", "export", UUID().uuidString, "--format", "edf", "--store", store])
        #expect(await missing.wait() == 66)
        let badSignal = try Spawned(
            binary, ["workouts", "export", id, "--format", "csv", "--signal", "ppg", "--store", store])
        #expect(await badSignal.wait() == 64)
        let plain = try Spawned(
            binary,
            [
                "workout", "run", "--scenario", scenario.path, "--speed", "max", "--json", "--duration", "30s",
                "--athlete", "other", "--store", store,
            ])
        #expect(await plain.wait() == 0)
        let plainID = try #require(
            try await WorkoutStore(path: store).workouts(athlete: "other").first?.id
        ).uuidString
        let none = try Spawned(
            binary,
            [
                "workouts", "export", plainID, "--format", "csv", "--signal", "ecg", "-o", csvPath + ".2", "--store",
                store,
            ])
        #expect(await none.wait() == 65)
        #expect(none.output.contains { $0.contains("no raw signal") })
        #expect(!FileManager.default.fileExists(atPath: csvPath + ".2"), "no empty file left behind")

        // A failed export leaves a file already there as it was, and nothing beside it.
        let kept = directory.appendingPathComponent("keep.csv").path
        try Data("mine\n".utf8).write(to: URL(fileURLWithPath: kept))
        for (workout, status) in [(plainID, Int32(65)), (UUID().uuidString, 66)] {
            let failed = try Spawned(
                binary,
                ["workouts", "export", workout, "--format", "csv", "--signal", "ecg", "-o", kept, "--store", store])
            #expect(await failed.wait() == status)
            #expect(try String(contentsOfFile: kept, encoding: .utf8) == "mine\n")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".partial-") }
                .isEmpty)
        // One that succeeds replaces it.
        let replaced = try Spawned(
            binary, ["workouts", "export", id, "--format", "csv", "--signal", "ecg", "-o", kept, "--store", store])
        #expect(await replaced.wait() == 0)
        #expect(try String(contentsOfFile: kept, encoding: .utf8).hasPrefix("time,sensor,run,ecg_uV\n"))

        // EDF+ files that cannot be created: exit 73, a line per signal, not one per frame.
        let unwritable = try Spawned(
            binary,
            ["workouts", "export", id, "--format", "edf", "-o", directory.path + "/missing/s01", "--store", store])
        #expect(await unwritable.wait() == 73)
        #expect(unwritable.output.filter { $0.hasPrefix("hrbridge: EDF: ") }.count == 2, "\(unwritable.report)")
    }
}
