import Foundation
import Samples
import Sensors
import Testing
import Wire
import WorkoutStore
import Workouts

@Suite("hrbridge workouts: delete, and the commands that read the store")
struct WorkoutsCommandTests {
    @Test(
        "a mistyped Bluetooth address, session id or count is a usage error (64) before any bus or daemon is asked",
        arguments: [
            ["pair", "nonsense"], ["forget", "11:22"], ["monitor", "zz:zz:zz:zz:zz:zz"], ["relay", "x"],
            ["workout", "run", "--sensor", "nonsense"], ["workout", "run", "--sensor", "+0:+0:+0:+0:+0:+0"],
            ["session", "status", "a b"], ["session", "stop", "../workouts"], ["session", "watch", "--count", "0"],
            ["session", "watch", "--count=-3"], ["session", "watch", "--sensor", "bad"],
            ["session", "watch", "--session", "x&kinds=all"],
            ["workouts", "export", "6D5A57E6-FA9F-407F-8BAE-554D00BFDA82", "--format", "fit", "--wide"],
        ])
    func malformedArguments(_ arguments: [String]) async throws {
        let result = try await runHRBridge(
            arguments
                + ["--socket", "/nonexistent/api.sock"].filter { _ in
                    arguments[0] == "session"
                })
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains("Error: "), "\(result.stderr)")
    }

    @Test(
        "samples: a day is a calendar day, --from takes a local day, --limit caps buckets too and must be 1 or more; changes takes kebab case"
    )
    func samplesOptions() async throws {
        let directory = try scratchDirectory("samples")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await runHRBridge(
            ["workout", "run", "--speed", "max", "--duration", "3m", "--json", "--store", "store.sqlite"], in: directory
        )
        #expect(run.status == 0, "\(run.stderr)")
        func lines(_ arguments: [String]) async throws -> [String] {
            let result = try await runHRBridge(
                ["samples", "--type", "heart-rate", "--store", "store.sqlite"] + arguments, in: directory)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let first = try #require(try await lines(["--limit", "1", "--json"]).first)
        let firstStart = try #require(ISO8601.parse(try JSONLines.decode(SampleJSON.self, first).start))
        let day = try #require(try await lines(["--bucket", "day", "--json"]).first)
        #expect(day.contains(#""start":"\#(ISO8601.format(Calendar.current.startOfDay(for: firstStart)))""#), "\(day)")
        #expect(try await lines(["--bucket", "minute", "--limit", "2"]).count == 2)
        let components = Calendar.current.dateComponents([.year, .month, .day], from: firstStart)
        let localDay = String(format: "%04d-%02d-%02d", components.year!, components.month!, components.day!)
        #expect(try await lines(["--from", localDay, "--limit", "5"]).count == 5)
        for bad in [["--limit=-1"], ["--limit", "0"], ["--from", "yesterday"]] {
            let result = try await runHRBridge(
                ["samples", "--type", "heart-rate", "--store", "store.sqlite"] + bad, in: directory)
            #expect(result.status == 64, "\(bad)")
        }
        let changes = try await runHRBridge(
            ["workouts", "changes", "--type", "heart-rate", "--limit", "3", "--store", "store.sqlite"], in: directory)
        #expect(changes.status == 0 && changes.stdout.contains(#""type":"heartRate""#), "\(changes.stderr)")
    }

    /// Runs `mount ARGUMENTS`; true when it succeeded.
    private static func mount(_ arguments: [String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments.first == "-u" ? "/bin/umount" : "/bin/mount")
        process.arguments = arguments.first == "-u" ? Array(arguments.dropFirst()) : arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test(
        "a store on read-only media: a copy closed cleanly (no -wal, no -shm) is read; one whose -wal was not checkpointed is refused, naming it",
        .enabled(if: getuid() == 0, "a read-only bind mount needs root"))
    func readOnlyMedia() async throws {
        let directory = try scratchDirectory("read-only")
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("source")
        let media = directory.appendingPathComponent("media")
        for folder in [source, media] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let run = try await runHRBridge(
            [
                "workout", "run", "--speed", "max", "--duration", "1m", "--store",
                source.appendingPathComponent("store.sqlite").path,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let store = media.appendingPathComponent("store.sqlite").path
        try FileManager.default.copyItem(atPath: source.appendingPathComponent("store.sqlite").path, toPath: store)
        #expect(try Self.mount(["--bind", media.path, media.path]))
        defer { _ = try? Self.mount(["-u", media.path]) }
        #expect(try Self.mount(["-o", "remount,bind,ro", media.path, media.path]))
        #expect(access(media.path, W_OK) != 0, "read-only, even for root")

        let listed = try await runHRBridge(["workouts", "list", "--store", store])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("running"), "\(listed.stdout)")
        #expect(!FileManager.default.fileExists(atPath: store + "-shm"))

        // A copy taken while a writer held changes in its -wal, without the -shm beside it.
        #expect(try Self.mount(["-u", media.path]))
        let writer = try WorkoutStore(path: source.appendingPathComponent("store.sqlite").path)
        let strap = SampleSource(adapter: "hci0", address: "C0:FF:EE:00:00:01", name: nil)
        let sample = try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 120),
            start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_000_000),
            source: strap)
        #expect(try await writer.append([sample], workout: nil) == 1)
        for suffix in ["", "-wal"] {
            try? FileManager.default.removeItem(atPath: store + suffix)
            try FileManager.default.copyItem(
                atPath: source.appendingPathComponent("store.sqlite").path + suffix, toPath: store + suffix)
        }
        #expect(try Self.mount(["--bind", media.path, media.path]))
        #expect(try Self.mount(["-o", "remount,bind,ro", media.path, media.path]))
        let refused = try await runHRBridge(["workouts", "list", "--store", store])
        #expect(refused.status == 73)
        #expect(refused.stderr.contains("\(store)-wal can be checkpointed"), "\(refused.stderr)")
        withExtendedLifetime(writer) {}
    }

    @Test("a store that is not there (a mistyped --store) is said, exit 66, and nothing is created")
    func missingStoreNotCreated() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrbridge-typo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("sub/store.sqlite").path
        for command in [
            ["workouts", "list"], ["workouts", "show", UUID().uuidString], ["samples", "--type", "heart-rate"],
            ["workouts", "changes"], ["workouts", "export", UUID().uuidString],
        ] {
            let result = try await runHRBridge(command + ["--store", store])
            #expect(result.status == 66, "\(command)")
            #expect(result.stderr.contains("no store at \(store)"), "\(command): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test(
        "a workout still being recorded (or interrupted) is not deleted: exit 66, its samples kept; a finished one is deleted"
    )
    func activeWorkoutKept() async throws {
        let directory = try scratchDirectory("delete")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let active = UUID()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            // As a recorder leaves it: journaled, with samples, not finished.
            let store = try WorkoutStore(path: path)
            try await store.beginWorkout(
                ActiveSessionRecord(
                    workoutID: active, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                    start: start, state: .running))
            let strap = SampleSource(adapter: "hci0", address: "C0:FF:EE:00:00:01", name: nil)
            let samples = try (0..<10).map {
                try QuantitySample(
                    type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 120),
                    start: start.addingTimeInterval(Double($0)), end: start.addingTimeInterval(Double($0)),
                    source: strap)
            }
            #expect(try await store.append(samples, workout: active) == 10)
        }
        let refused = try await runHRBridge(
            ["workouts", "delete", active.uuidString, "--store", "store.sqlite"], in: directory)
        #expect(refused.status == 66)
        #expect(refused.stderr.contains("still being recorded"), "\(refused.stderr)")
        let store = try WorkoutStore(path: path)
        #expect(try await store.samples(type: .heartRate, workout: active).count == 10)
        #expect(try await store.workout(active).isActive)

        let run = try await runHRBridge(
            // Another athlete's: a run of the same athlete would close the interrupted one first.
            [
                "workout", "run", "--speed", "max", "--duration", "20s", "--json", "--athlete", "other", "--store",
                "store.sqlite",
            ],
            in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        let finished = try #require(try await store.workouts().first { !$0.isActive }).id
        let deleted = try await runHRBridge(
            ["workouts", "delete", finished.uuidString, "--store", "store.sqlite"], in: directory)
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(try await store.workouts().map(\.id) == [active])
        #expect(try await store.workout(active).isActive, "still there to recover")
    }
}
