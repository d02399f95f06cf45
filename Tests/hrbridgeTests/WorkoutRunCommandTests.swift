import BusHarness
import Foundation
import JSONSupport
import Testing
import Wire
import WorkoutStore

@testable import hrbridge

@Suite("hrbridge workout")
struct WorkoutRunCommandTests {
    @Test("--json: samples, events and zone lines, then a summary with the documented keys")
    func jsonRun() async throws {
        let result = try await runHRBridge([
            "workout", "run", "--json", "--speed", "max", "--duration", "4m", "--zones", "110,130,150,165",
            "--age", "35", "--sex", "male", "--weight", "72",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = JSONLines.lines(result.stdout)
        let last = try #require(lines.last)
        // The documented keys: the summary's own object, as printed.
        #expect(
            Set(try JSONLines.decode([String: JSONValue].self, last).keys) == [
                "elapsedTime", "statistics", "zones", "events", "activities", "hrv", "dfaAlpha1", "activeEnergy",
            ])
        let summary = try JSONLines.decode(WorkoutJSON.Summary.self, last)
        #expect(summary.elapsedTime == 240)
        let heartRate = try #require(summary.statistics["heartRate"])
        #expect((heartRate.average ?? 0) > 50)
        #expect(heartRate.unit == "count/min")
        #expect(summary.zones.map(\.index) == [1, 2, 3, 4, 5])
        let covered = summary.zones.map(\.duration).reduce(0, +)
        #expect(covered > 200 && covered <= 240)
        #expect((summary.hrv.rmssd ?? 0) > 0)
        #expect(summary.activeEnergy.source == "sensor")
        // Every line before it is tagged (reading one that is not throws).
        let kinds = Set(try JSONLines.tagged(lines.dropLast()).map(\.kind))
        #expect(kinds.isSuperset(of: [.sample, .zone, .sensor, .activityBegan]))
    }

    @Test("`make demo`'s workout prints the same output byte for byte, twice at --speed max and once paced")
    func deterministic() async throws {
        let demo = [
            "workout", "run", "--activity", "running", "--age", "35", "--sex", "male", "--weight", "72",
            "--resting-hr", "55",
        ]
        let first = try await runHRBridge(demo + ["--speed", "max"])
        let second = try await runHRBridge(demo + ["--speed", "max"])
        // 18 minutes at 3000×: 0.4 s of pacing, with the consumers' waits in between.
        let paced = try await runHRBridge(demo + ["--speed", "3000"])
        for result in [first, second, paced] { #expect(result.status == 0, "\(result.stderr)") }
        #expect(first.stdout.contains("Workout: running, 18:00 elapsed"))
        #expect(first.stdout.contains("Sensors: "))
        #expect(second.stdout == first.stdout)
        #expect(paced.stdout == first.stdout)
    }

    @Test("the built-in scenario's faults show: a refused frame and a disconnect of strap B")
    func faultsShow() async throws {
        let result = try await runHRBridge(["workout", "run", "--json", "--speed", "max", "--duration", "13m"])
        #expect(result.status == 0)
        let lines = JSONLines.lines(result.stdout)
        let sensorLines = try JSONLines.messages(lines.dropLast(), .sensor, as: SensorEventJSON.self).map(\.payload)
        #expect(sensorLines.contains { $0.event == "frameRefused" && $0.sensor == "C0:FF:EE:00:00:02" })
        #expect(sensorLines.contains { $0.event == "disconnected" && $0.reason == "link lost" })
    }

    @Test("a bad scenario file: exit 65, one line per problem with file and JSON path")
    func badScenario() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).json")
        try Data(
            #"{"straps": [{"name": "A", "address": "x", "segments": [{"type": "steady", "duration": "2m", "intensity": 2}]}]}"#
                .utf8
        )
        .write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await runHRBridge(["workout", "run", "--scenario", file.path, "--speed", "max"])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        let problems = result.stderr.split(separator: "\n")
        #expect(problems.count == 2)
        #expect(problems.allSatisfy { $0.hasPrefix(Substring(file.path + ": $.straps[0].")) })
        let check = try await runHRBridge(["workout", "scenario", "--check", file.path])
        #expect(check.status == 65)
    }

    @Test("--store with a bare file name keeps the store in the current directory")
    func bareStoreName() async throws {
        let directory = try scratchDirectory("cwd")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await runHRBridge(
            ["workout", "run", "--speed", "max", "--duration", "20s", "--json", "--store", "store.sqlite"],
            in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("store.sqlite").path))
        let list = try await runHRBridge(["workouts", "list", "--store", "store.sqlite"], in: directory)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("running"))
    }

    @Test(
        "two simulated runs in a row on one store (the first ran ahead of the wall clock): the second starts where the first ended, and each keeps every sample"
    )
    func runsInARowKeepTheirSamples() async throws {
        let directory = try scratchDirectory("twice")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = ["workout", "run", "--speed", "max", "--duration", "2m", "--json", "--store", "store.sqlite"]
        for _ in 0..<2 {
            let result = try await runHRBridge(run, in: directory)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let list = try await runHRBridge(["workouts", "list", "--store", "store.sqlite"], in: directory)
        let rows = list.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        try #require(rows.count == 2, "\(list.stdout)")
        // Newest first: the second began on the first's last second, not within it.
        let starts = rows.map { ISO8601.parse(String($0[1])) }
        let first = try #require(starts[1])
        #expect(starts[0] == first.addingTimeInterval(120))
        var counts: [Int] = []
        for row in rows {
            let export = try await runHRBridge(
                ["workouts", "export", String(row[0]), "--format", "csv", "--store", "store.sqlite", "-o", "-"],
                in: directory)
            #expect(export.status == 0, "\(export.stderr)")
            counts.append(export.stdout.split(separator: "\n").count)
        }
        // 2 minutes of both straps' heart rates (and more): the same in both, none lost to the other.
        #expect(counts[0] == counts[1] && counts[0] > 400, "\(counts)")
    }

    @Test(
        "--json read by `head`, which goes away: the workout stops and is saved (exit 0), not killed by SIGPIPE and left active"
    )
    func readerGoesAway() async throws {
        let directory = try scratchDirectory("head")
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("hrbridge").path
        let store = directory.appendingPathComponent("store.sqlite").path
        // Ten minutes at 60×: `head` has long gone before the run would end by itself.
        let pipeline = try Spawned(
            "/bin/bash",
            [
                "-c",
                #""$0" workout run --speed 60 --duration 10m --json --store "$1" | head -3 > /dev/null; exit "${PIPESTATUS[0]}""#,
                binary, store,
            ])
        #expect(await pipeline.wait() == 0, "\(pipeline.report)")
        #expect(pipeline.output.contains { $0.contains("standard output closed") })
        let workouts = try await WorkoutStore(path: store).workouts()
        #expect(workouts.count == 1 && workouts.allSatisfy { !$0.isActive && $0.summary != nil })
        #expect(workouts.first.flatMap(\.elapsedTime).map { $0 < 600 } == true, "stopped early")
    }

    @Test(
        "`workout recover` and `plan run` hand options to `workout run`: their --help and errors name them, not the root"
    )
    func handedOnOptions() async throws {
        for (command, name) in [
            (["workout", "recover"], "hrbridge workout recover"),
            (["plan", "run", "p.json"], "hrbridge plan run FILE"),
        ] {
            let help = try await runHRBridge(command + ["--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("USAGE: \(name) ["), "\(help.stdout)")
            let bad = try await runHRBridge(command + ["--bogus"])
            #expect(bad.status == 64)
            #expect(
                bad.stderr.contains("Usage: \(name) [") && bad.stderr.contains("'hrbridge workout run --help'"),
                "\(bad.stderr)")
        }
    }

    @Test("bad options exit 64")
    func badOptions() async throws {
        for arguments in [
            ["--zones", "120"], ["--zones", "150,140"], ["--activity", "juggling"], ["--speed", "0"],
            ["--speed", "fast"], ["--speed", "100001"],
            ["--duration", "soon"],
            // The configuration's bounds for an athlete: a typo, not a person.
            ["--age", "100000"], ["--max-hr", "1e308"], ["--max-hr", "0"], ["--weight", "nan"],
            ["--resting-hr", "200", "--max-hr", "150"], ["--resting-hr", "70", "--max-hr", "60"],
            ["--athlete", ""], ["--athlete", "bob\u{1B}[31m"], ["--athlete", String(repeating: "a", count: 100_000)],
            // Options that would change nothing are said, not ignored.
            ["--export-file", "x.fit"], ["--bluetooth-adapter", "hci1"],
        ] {
            let result = try await runHRBridge(["workout", "run"] + arguments)
            #expect(result.status == 64, "\(arguments)")
        }
    }

    @Test("`workout scenario` prints the built-in scenario, which `--check` accepts")
    func printScenario() async throws {
        let result = try await runHRBridge(["workout", "scenario"])
        #expect(result.status == 0)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("default-\(UUID().uuidString).json")
        try Data(result.stdout.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let check = try await runHRBridge(["workout", "scenario", "--check", file.path])
        #expect(check.status == 0)
    }
}
