import ArgumentParser
import Foundation
import JSONSupport
import Samples
import Wire
import WorkoutPlans
import WorkoutStore
import Workouts

/// `hrbridge plan …`: structured workouts (WorkoutKit's custom workouts, as files).
struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Structured workouts: validate, preview, run and schedule plan files.",
        discussion: """
            A plan is a JSON file (format version 1, schema in Sources/WorkoutPlans/plan.schema.json):
            a custom plan (warm-up, blocks of work/recovery steps repeated N times, cool-down), a single
            goal, or a pacer. Values carry their unit: "5 min", "2 mi", "250-275 W", "4:30-5:00 /km".
            """,
        subcommands: [
            PlanValidateCommand.self, PlanShowCommand.self, PlanRunCommand.self, PlanScheduleCommand.self,
            PlanListCommand.self, PlanUnscheduleCommand.self, PlanExampleCommand.self,
        ]
    )
}

/// What a plan is checked against: the athlete's zones and whether a power meter is there.
struct PlanContextOptions: ParsableArguments {
    @Option(help: "Heart-rate zone boundaries in bpm for zone alerts, e.g. 120,140,160,175 (default: 5 zones).")
    var zones: String?

    @Option(
        name: .customLong("power-zones"),
        help: "Power zone boundaries in W for zone alerts, e.g. 150,200,250,300 (default: 7 zones).")
    var powerZones: String?

    @Flag(
        name: .customLong("power-meter"), inversion: .prefixedNo,
        help: "Whether a power meter is used (power alerts on running need one); default: not checked.")
    var powerMeter: Bool?

    /// Without --zones / --power-zones, zone alerts are checked against the default zone models'
    /// shape: 5 heart-rate zones and 7 power zones (as any profile with an age or FTP gets).
    func context() throws -> PlanContext {
        let model = UserProfile(id: UserProfile.anonymousID, maximumHeartRate: 190, functionalThresholdPower: 250)
        var zones: [QuantityType: ZoneConfiguration] = [:]
        zones[.heartRate] = model.preferredZoneConfiguration(for: .heartRate)
        zones[.cyclingPower] = model.preferredZoneConfiguration(for: .cyclingPower)
        if let text = self.zones { zones[.heartRate] = try Self.parse(text, type: .heartRate, option: "--zones") }
        if let text = powerZones {
            zones[.cyclingPower] = try Self.parse(text, type: .cyclingPower, option: "--power-zones")
        }
        return PlanContext(zones: zones, hasPowerMeter: powerMeter)
    }

    static func parse(_ text: String, type: QuantityType, option: String) throws -> ZoneConfiguration {
        let values = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else {
            throw ValidationError("\(option) '\(text)': give ascending numbers separated by commas")
        }
        do {
            return try ZoneConfiguration(quantityType: type, boundaryValues: values.compactMap { $0 })
        } catch {
            throw ValidationError("\(option) '\(text)': \(error)")
        }
    }
}

/// Reads and validates a plan file; prints every problem and exits 65 when it is not valid.
enum PlanFile {
    /// `hint` may add a line after the problems (what to give on the command line).
    static func load(_ path: String, context: PlanContext, hint: ([PlanProblem]) -> String? = { _ in nil }) throws
        -> (plan: WorkoutPlan, data: Data)
    {
        // Never past the format's limit: `/dev/zero` or a huge file is refused after 1 MiB + 1.
        let data: Data
        do {
            data = try BoundedFile.read(path, limit: PlanLimits.fileBytes)
        } catch .larger(let limit) {
            StandardError.write("\(path): too many bytes: at most \(limit)")
            throw ExitCode(65)
        } catch {
            StandardError.write("\(path): cannot be read")
            throw ExitCode(66)
        }
        do {
            return (try PlanFormat.decode(data, context: context), data)
        } catch {
            for problem in error.problems { StandardError.write("\(path): \(problem)") }
            if let line = hint(error.problems) { StandardError.write(line) }
            throw ExitCode(65)
        }
    }
}

/// `hrbridge plan example`: a plan to start from, which runs on the simulator.
struct PlanExampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example",
        abstract: "Print an example plan (heart-rate intervals that run on the simulator).")

    static let text = """
        {
          "version": 1,
          "name": "Heart-rate intervals",
          "activity": "running",
          "location": "outdoor",
          "custom": {
            "warmup": {"goal": {"time": "4 min"}, "alert": {"heartRateZone": 1}},
            "blocks": [
              {"iterations": 3, "steps": [
                {"purpose": "work", "name": "Hard", "goal": {"time": "1 min"}, "alert": {"heartRate": "140-175 bpm"}},
                {"purpose": "recovery", "name": "Easy", "goal": {"time": "1 min"}, "alert": {"heartRate": "90-135 bpm", "metric": "average"}}
              ]}
            ],
            "cooldown": {"goal": {"time": "3 min"}}
          }
        }
        """

    func run() { print(Self.text) }
}

/// `hrbridge plan validate FILE`.
struct PlanValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a plan file: exit 0, or 65 with every problem listed (where, JSON path, what).")

    @Argument(help: "The plan file.")
    var file: String

    @OptionGroup var context: PlanContextOptions

    func run() throws {
        let (plan, _) = try PlanFile.load(file, context: try context.context())
        let steps = PlanExecutor(plan: plan).steps.count
        print("\(file): ok (\(plan.name), \(steps) step\(steps == 1 ? "" : "s") to run)")
    }
}

/// `hrbridge plan show FILE`.
struct PlanShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Preview a plan: blocks, steps, goals, alerts and the estimated total time.")

    @Argument(help: "The plan file.")
    var file: String

    @OptionGroup var context: PlanContextOptions

    func run() throws {
        let (plan, _) = try PlanFile.load(file, context: try context.context())
        print(PlanPreview.text(plan))
    }
}

/// `hrbridge plan run FILE`: `workout run --plan FILE`.
struct PlanRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract:
            "Run a plan live: `hrbridge workout run --plan FILE` (takes its options: --adapter, --speed, --json…).",
        discussion: """
            Steps advance when their goal is met (time excludes pauses; distance and energy come from
            the workout's statistics; open steps on the key n, or after --open-step-time). Each step is
            recorded as a segment, each block iteration as a lap. The run ends when the plan completes
            (or at --duration, or on q). When the plan is on the schedule, its entry is marked complete.
            """)

    @Argument(help: "The plan file.")
    var file: String

    @Argument(parsing: .captureForPassthrough, help: "Options of `workout run`.")
    var arguments: [String] = []

    func run() async throws {
        let command = try WorkoutRunCommand.parse(
            handedOn: ["--plan", file] + arguments, by: "plan run FILE", abstract: Self.configuration.abstract)
        try await command.run()
    }
}

/// `hrbridge plan schedule FILE --at DATE`.
struct PlanScheduleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Put a plan on the schedule for a date (at most 15 upcoming entries, as WorkoutKit).",
        discussion: "Exit status: 0 scheduled; 65 invalid plan; 66 unreadable file; 73 store error; 75 schedule full.")

    @Argument(help: "The plan file.")
    var file: String

    @Option(help: "When: 2026-11-23, 2026-11-23T07:30 (local time) or a full ISO 8601 date.")
    var at: String

    @Option(help: "The store file (default: $XDG_DATA_HOME/hrbridge/store.sqlite).")
    var store: String?

    @OptionGroup var context: PlanContextOptions

    func validate() throws {
        guard let date = LocalDate.parse(at) else {
            throw ValidationError("--at '\(at)' is not a date such as 2026-11-23 or 2026-11-23T07:30")
        }
        if let problem = LocalDate.schedulingProblem(date, now: Date()) {
            throw ValidationError("--at '\(at)': \(problem)")
        }
    }

    func run() async throws {
        let (plan, data) = try PlanFile.load(file, context: try context.context())
        let date = LocalDate.parse(at)!
        do {
            let store = try WorkoutStore(path: store ?? WorkoutStore.defaultPath)
            let entry = try await store.schedule(name: plan.name, plan: data, at: date)
            print("scheduled \(plan.name) for \(ISO8601.format(entry.date)) (\(entry.id.uuidString))")
        } catch StoreError.scheduleFull(let limit) {
            StandardError.write(
                "hrbridge: the schedule already holds \(limit) upcoming plans; run or wait for one first")
            throw ExitCode(75)
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        }
    }
}

/// `hrbridge plan list`.
struct PlanListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "The schedule from 7 days back on, every upcoming entry: date, plan, status and id.")

    @Option(help: "The store file (default: $XDG_DATA_HOME/hrbridge/store.sqlite).")
    var store: String?

    @Flag(help: "One JSON object per entry.")
    var json = false

    func run() async throws {
        let entries: [ScheduledPlan]
        do {
            entries = try await WorkoutStore(path: store ?? WorkoutStore.defaultPath).scheduledPlans(since: Date())
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        }
        let now = Date()
        for entry in entries {
            let status = entry.completedAt != nil ? "done" : entry.date < now ? "missed" : "upcoming"
            if json {
                print(
                    try JSONText.line(
                        ScheduledLine(
                            id: entry.id.uuidString, name: entry.name, date: ISO8601.format(entry.date), status: status,
                            completedAt: entry.completedAt.map(ISO8601.format), workout: entry.workoutID?.uuidString)))
            } else {
                var line =
                    "\(ISO8601.format(entry.date))  \(status.padding(toLength: 8, withPad: " ", startingAt: 0))  \(entry.id.uuidString)  \(entry.name)"
                if let workout = entry.workoutID { line += "  workout \(workout.uuidString)" }
                print(line)
            }
        }
        if entries.isEmpty && !json { print("Nothing scheduled: nothing upcoming, nothing in the last 7 days.") }
    }
}

/// `hrbridge plan unschedule ID`.
struct PlanUnscheduleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unschedule", abstract: "Remove a schedule entry (its id is in `plan list`).")

    @Argument(help: "The entry's id.")
    var id: String

    @Option(help: "The store file (default: $XDG_DATA_HOME/hrbridge/store.sqlite).")
    var store: String?

    func validate() throws {
        if UUID(uuidString: id) == nil { throw ValidationError("'\(id)' is not a schedule entry's id") }
    }

    func run() async throws {
        let removed: Bool
        do {
            removed = try await WorkoutStore(path: store ?? WorkoutStore.defaultPath).unschedule(UUID(uuidString: id)!)
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        }
        guard removed else {
            StandardError.write("hrbridge: no schedule entry \(id)")
            throw ExitCode(66)
        }
        print("unscheduled \(id.uppercased())")
    }
}

/// Dates as people type them: a day or a local time, or full ISO 8601.
enum LocalDate {
    static func parse(_ text: String) -> Date? {
        if let date = ISO8601.parse(text) { return date }
        let parts = text.split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)
        // Every part a number: `2026--12--01` is no date.
        let dayParts = parts.first?.split(separator: "-", omittingEmptySubsequences: false) ?? []
        let day = dayParts.compactMap { Int($0) }
        guard day.count == 3, dayParts.count == 3, (1000...9999).contains(day[0]) else { return nil }
        var components = DateComponents(year: day[0], month: day[1], day: day[2])
        if parts.count == 2 {
            let timeParts = parts[1].split(separator: ":", omittingEmptySubsequences: false)
            let time = timeParts.compactMap { Int($0) }
            guard time.count == timeParts.count, time.count == 2 || time.count == 3 else { return nil }
            components.hour = time[0]
            components.minute = time[1]
            components.second = time.count == 3 ? time[2] : 0
        }
        let calendar = Calendar.current
        guard components.isValidDate(in: calendar) else { return nil }
        return calendar.date(from: components)
    }

    /// Why a plan cannot be scheduled then: before today (it would only ever be missed), or more
    /// than a year ahead. Nil when it can.
    static func schedulingProblem(_ date: Date, now: Date, calendar: Calendar = .current) -> String? {
        if date < calendar.startOfDay(for: now) { return "that day is past" }
        if date > now.addingTimeInterval(366 * 86_400) { return "more than a year ahead" }
        return nil
    }
}

/// A line of `plan scheduled --json`: `status` is `upcoming`, `done` or `missed`.
struct ScheduledLine: Codable {
    var id: String
    var name: String
    var date: String
    var status: String
    @Nullable var completedAt: String?
    @Nullable var workout: String?
}
