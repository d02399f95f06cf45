import Foundation
import Testing
import Wire

@testable import hrbridge

private func temporaryFile(_ name: String, _ text: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent(name)
    try Data(text.utf8).write(to: file)
    return file
}

private let badPlan = """
    {"version": 1, "name": "bad", "activity": "strength", "custom": {"blocks": [
      {"iterations": 0, "steps": [{"goal": {"distance": "2 mi"}, "alert": {"power": "275-250 W"}}]},
      {"steps": []}
    ]}}
    """

@Suite("hrbridge plan")
struct PlanCommandTests {
    @Test("validate: 0 for the example; 65 with every problem, where it is and its JSON path")
    func validate() async throws {
        let example = try await runHRBridge(["plan", "example"])
        #expect(example.status == 0)
        let good = try temporaryFile("good.json", example.stdout)
        let ok = try await runHRBridge(["plan", "validate", good.path])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("ok (Heart-rate intervals, 8 steps to run)"))

        let bad = try temporaryFile("bad.json", badPlan)
        let result = try await runHRBridge(["plan", "validate", bad.path])
        #expect(result.status == 65)
        let problems = result.stderr.split(separator: "\n").map(String.init)
        #expect(
            problems == [
                "\(bad.path): block 1 ($.custom.blocks[0].iterations): iterations must be 1 or more",
                "\(bad.path): block 1, step 1 ($.custom.blocks[0].steps[0].goal): a distance goal does not fit strength",
                "\(bad.path): block 1, step 1 ($.custom.blocks[0].steps[0].alert): range 275-250 W is inverted",
                "\(bad.path): block 1, step 1 ($.custom.blocks[0].steps[0].alert): a power alert does not fit strength: no power meter",
                "\(bad.path): block 2 ($.custom.blocks[1].steps): the block has no steps",
            ])
        // A plan bomb: refused at once, naming the path.
        let bomb = try temporaryFile(
            "bomb.json",
            #"{"version": 1, "activity": "running", "custom": {"blocks": [{"iterations": 9000000000000000000, "steps": [{"goal": "open"}]}]}}"#
        )
        let refused = try await runHRBridge(["plan", "validate", bomb.path])
        #expect(refused.status == 65)
        #expect(
            refused.stderr
                == "\(bomb.path): block 1 ($.custom.blocks[0].iterations): too many iterations: at most 1000\n")
        // Zone alerts are checked against the zones given (5 by default).
        let zone7 = try temporaryFile(
            "zone7.json",
            #"{"version": 1, "activity": "running", "custom": {"blocks": [{"steps": [{"alert": {"heartRateZone": 7}}]}]}}"#
        )
        let fiveZones = try await runHRBridge(["plan", "validate", zone7.path])
        #expect(fiveZones.status == 65)
        #expect(fiveZones.stderr.contains("block 1, step 1 ($.custom.blocks[0].steps[0].alert.heartRateZone)"))
        let sevenZones = try await runHRBridge(["plan", "validate", zone7.path, "--zones", "100,110,120,130,140,150"])
        #expect(sevenZones.status == 0, "\(sevenZones.stderr)")
    }

    @Test("show: blocks, steps, goals, alerts and the estimated time")
    func show() async throws {
        let file = try temporaryFile("p.json", try await runHRBridge(["plan", "example"]).stdout)
        let result = try await runHRBridge(["plan", "show", file.path])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Heart-rate intervals — running, outdoor")
        #expect(lines.contains("  block 1 × 3"))
        #expect(lines.contains("    step 1  work: “Hard” 1 min · heart rate 140-175 bpm"))
        #expect(lines.contains("    step 2  recovery: “Easy” 1 min · heart rate 90-135 bpm (average)"))
        #expect(lines.last == "  estimated time: 13:00")
    }

    @Test("run on the simulator: steps in order at their times, laps per iteration, the plan completes")
    func run() async throws {
        let file = try temporaryFile("p.json", try await runHRBridge(["plan", "example"]).stdout)
        let result = try await runHRBridge([
            "plan", "run", file.path, "--speed", "max", "--json", "--guest", "--age", "35",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        // Tagged lines, then the summary.
        let lines = JSONLines.lines(result.stdout)
        let plan = try JSONLines.messages(lines.dropLast(), .plan, as: PlanJSON.Event.self).map(\.payload)
        let started = plan.filter { $0.event == "stepStarted" }
        #expect(started.compactMap(\.step?.index) == Array(0..<8))
        #expect(plan.filter { $0.event == "lap" }.count == 3)
        #expect(plan.last?.event == "completed")
        // Time goals end on time, whatever the tick.
        let ended = plan.filter { $0.event == "stepEnded" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let lengths = ended.compactMap { event -> Double? in
            guard let start = event.start.flatMap(formatter.date(from:)),
                let end = event.end.flatMap(formatter.date(from:))
            else { return nil }
            return end.timeIntervalSince(start)
        }
        let goals: [Double] = [240, 60, 60, 60, 60, 60, 60, 180]
        #expect(lengths.count == 8)
        for (length, goal) in zip(lengths, goals) { #expect(abs(length - goal) < 0.5, "\(lengths)") }
        // The workout ends when the plan does: 13 minutes, not the backstop.
        let summary = try JSONLines.decode(WorkoutJSON.Summary.self, try #require(lines.last))
        #expect(abs(summary.elapsedTime - 780) < 1)
        #expect(summary.events.filter { $0.type == "segment" }.count == 8)
        #expect(summary.events.filter { $0.type == "lap" }.count == 3)
    }

    @Test("schedule, list, and completion by a run of the same plan")
    func schedule() async throws {
        let file = try temporaryFile("p.json", try await runHRBridge(["plan", "example"]).stdout)
        let store = file.deletingLastPathComponent().appendingPathComponent("store.sqlite").path
        let soon = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))
        let scheduled = try await runHRBridge(["plan", "schedule", file.path, "--at", soon, "--store", store])
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        let badDate = try await runHRBridge(["plan", "schedule", file.path, "--at", "tomorrowish", "--store", store])
        #expect(badDate.status == 64)
        var list = try await runHRBridge(["plan", "list", "--json", "--store", store])
        var entry = try JSONLines.decode(ScheduledLine.self, try #require(JSONLines.lines(list.stdout).first))
        #expect(entry.status == "upcoming")
        #expect(entry.name == "Heart-rate intervals")

        let run = try await runHRBridge([
            "plan", "run", file.path, "--speed", "max", "--json", "--age", "35", "--store", store,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("marked the scheduled 'Heart-rate intervals'"))
        list = try await runHRBridge(["plan", "list", "--json", "--store", store])
        entry = try JSONLines.decode(ScheduledLine.self, try #require(JSONLines.lines(list.stdout).first))
        #expect(entry.status == "done")
        #expect(entry.workout != nil)
    }

    @Test(
        "every entry the limit counts is listed with its id and can be removed; dates in the past, a year ahead or malformed are refused"
    )
    func fullScheduleCanBeSeenAndEmptied() async throws {
        let file = try temporaryFile("p.json", try await runHRBridge(["plan", "example"]).stdout)
        let store = file.deletingLastPathComponent().appendingPathComponent("store.sqlite").path
        // Weeks ahead: beyond the old 7-day window, which hid them while they filled the schedule.
        for day in 8..<23 {
            let at = ISO8601DateFormatter().string(from: Date().addingTimeInterval(Double(day) * 86_400))
            let scheduled = try await runHRBridge(["plan", "schedule", file.path, "--at", at, "--store", store])
            #expect(scheduled.status == 0, "\(scheduled.stderr)")
        }
        let later = ISO8601DateFormatter().string(from: Date().addingTimeInterval(30 * 86_400))
        #expect(try await runHRBridge(["plan", "schedule", file.path, "--at", later, "--store", store]).status == 75)
        let list = try await runHRBridge(["plan", "list", "--json", "--store", store])
        let entries = try JSONLines.lines(list.stdout).map { try JSONLines.decode(ScheduledLine.self, $0) }
        #expect(entries.count == 15 && entries.allSatisfy { $0.status == "upcoming" })
        let text = try await runHRBridge(["plan", "list", "--store", store])
        #expect(text.stdout.contains(try #require(entries.first).id))

        let removed = try await runHRBridge(["plan", "unschedule", try #require(entries.first).id, "--store", store])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await runHRBridge(["plan", "schedule", file.path, "--at", later, "--store", store]).status == 0)
        #expect(try await runHRBridge(["plan", "unschedule", UUID().uuidString, "--store", store]).status == 66)
        #expect(try await runHRBridge(["plan", "unschedule", "nonsense", "--store", store]).status == 64)

        let yesterday = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-86_400 - 3600))
        let nextYear = ISO8601DateFormatter().string(from: Date().addingTimeInterval(400 * 86_400))
        for at in ["1-1-1", "2026--12--01", "2026-12-01T07::30", yesterday, nextYear] {
            let refused = try await runHRBridge(["plan", "schedule", file.path, "--at", at, "--store", store])
            #expect(refused.status == 64, "\(at)")
        }
    }

    @Test("the hint to give zones follows a zone alert without zones, and only that")
    func zoneHint() async throws {
        let example = try temporaryFile("p.json", try await runHRBridge(["plan", "example"]).stdout)
        let noZones = try await runHRBridge(["workout", "run", "--plan", example.path, "--speed", "max", "--guest"])
        #expect(noZones.status == 65)
        #expect(noZones.stderr.contains("zone alerts need zones"), "\(noZones.stderr)")
        let broken = try temporaryFile("p.json", #"{"version": 1, "activity": "running","#)
        let unreadable = try await runHRBridge(["workout", "run", "--plan", broken.path, "--speed", "max", "--guest"])
        #expect(unreadable.status == 65)
        #expect(
            unreadable.stderr.contains("not valid JSON") && !unreadable.stderr.contains("zones"), "\(unreadable.stderr)"
        )
    }

    @Test("a file is read no further than the format's 1 MiB: /dev/zero is refused at once (65)")
    func endlessFile() async throws {
        let result = try await runHRBridge(["plan", "validate", "/dev/zero"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr == "/dev/zero: too many bytes: at most 1048576\n", "\(result.stderr)")
    }

    @Test("power-zone alerts run with --ftp, and without it the hint says to give it")
    func powerZones() async throws {
        let plan = try temporaryFile(
            "power.json",
            #"{"version": 1, "activity": "cycling", "custom": {"blocks": [{"steps": [{"goal": {"time": "5 s"}, "alert": {"powerZone": 3}}]}]}}"#
        )
        let without = try await runHRBridge(["workout", "run", "--plan", plan.path, "--speed", "max", "--guest"])
        #expect(without.status == 65)
        #expect(without.stderr.contains("power zone alerts need power zones: give --ftp"), "\(without.stderr)")
        let with = try await runHRBridge([
            "workout", "run", "--plan", plan.path, "--speed", "max", "--guest", "--ftp", "250", "--json",
        ])
        #expect(with.status == 0, "\(with.stderr)")
        #expect(with.stdout.contains(#""event":"completed""#), "\(with.stdout.suffix(500))")
    }

    @Test("a plan name with an escape sequence or a newline is refused (65), never printed raw")
    func controlCharactersInNames() async throws {
        for name in [#"red \u001b[31m"#, #"two\nlines"#, #"\u202eevil"#] {
            let file = try temporaryFile(
                "p.json", #"{"version": 1, "name": "\#(name)", "activity": "running", "singleGoal": {"time": "5 min"}}"#
            )
            let result = try await runHRBridge(["plan", "validate", file.path])
            #expect(result.status == 65, "\(name)")
            #expect(result.stderr.contains("$.name") && !result.stderr.contains("\u{1B}"), "\(result.stderr)")
        }
        let emoji = try temporaryFile(
            "p.json", #"{"version": 1, "name": "Family 👨‍👩‍👧", "activity": "running", "singleGoal": {"time": "5 min"}}"#)
        #expect(try await runHRBridge(["plan", "validate", emoji.path]).status == 0)
    }
}
