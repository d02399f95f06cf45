import ArgumentParser
import Foundation
import JSONSupport
import Samples
import Sensors
import Wire
import WorkoutExport
import WorkoutStore
import Workouts

#if canImport(Glibc)
    import Glibc
#endif

/// Options shared by the store commands.
struct StoreOptions: ParsableArguments {
    @Option(help: "The store file (default: $XDG_DATA_HOME/hrbridge/store.sqlite).")
    var store: String?

    /// The existing store: never created here (a mistyped --store would leave an empty one and
    /// list nothing); opened read-only when the user may not write it (a copy on read-only media).
    func open() throws -> WorkoutStore {
        let path = store ?? WorkoutStore.defaultPath
        guard FileManager.default.fileExists(atPath: path) else {
            StandardError.write(
                "hrbridge: no store at \(path): nothing was recorded there (--store PATH names another)")
            throw ExitCode(66)
        }
        let directory = (path as NSString).deletingLastPathComponent
        let writable = access(path, W_OK) == 0 && access(directory.isEmpty ? "." : directory, W_OK) == 0
        do {
            return try WorkoutStore(path: path, guest: !writable)
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        }
    }
}

/// `hrbridge workouts …`: the stored workouts.
struct WorkoutsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workouts",
        abstract: "List, show, export and delete stored workouts, and follow their samples' changes.",
        subcommands: [
            WorkoutsListCommand.self, WorkoutsShowCommand.self, WorkoutsDeleteCommand.self, WorkoutsExportCommand.self,
            WorkoutsChangesCommand.self,
        ])
}

struct WorkoutsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "Stored workouts, newest first.")

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "JSON lines.")
    var json = false

    func run() async throws {
        let store = try storeOptions.open()
        for workout in try await store.workouts() {
            let heartRate = workout.summary?.statistics[.heartRate]
            if json {
                print(
                    try JSONText.line(
                        ListLine(
                            id: workout.id.uuidString, activityType: workout.configuration.activityType.rawValue,
                            start: ISO8601.format(workout.start), end: workout.end.map(ISO8601.format),
                            elapsedTime: workout.elapsedTime, active: workout.isActive,
                            averageHeartRate: heartRate?.average)))
            } else {
                print(
                    "\(workout.id.uuidString)  \(ISO8601.format(workout.start))  "
                        + "\(workout.configuration.activityType.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0))  "
                        + "\(workout.elapsedTime.map(Format.clock) ?? "active")  avg HR \(Format.number(heartRate?.average))"
                )
            }
        }
    }
}

struct WorkoutsShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "One workout: statistics, zones, events, activities and a heart-rate chart.")

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: "The workout's identifier (see `hrbridge workouts list`).")
    var id: String

    @Flag(help: "The summary as JSON (the same shape as `workout run --json`'s last line).")
    var json = false

    func run() async throws {
        guard let uuid = UUID(uuidString: id) else { throw ValidationError("'\(id)' is not a workout identifier") }
        let store = try storeOptions.open()
        let stored: StoredWorkout
        do {
            stored = try await store.workout(uuid)
        } catch {
            guard case .unknownWorkout = error else { throw error }
            StandardError.write("hrbridge: no workout \(uuid.uuidString) in \(store.location)")
            throw ExitCode(66)
        }
        guard let workout = stored.summary else {
            StandardError.write(
                "hrbridge: workout \(id) is still active; `hrbridge workout run --recover` continues it")
            throw ExitCode(66)
        }
        if json {
            print(try JSONText.line(WorkoutJSON.Summary(workout)))
            return
        }
        print(WorkoutSummary.text(workout, counters: nil, tracker: nil))
        let heartRates = try await store.samples(type: .heartRate, workout: uuid)
        if !heartRates.isEmpty {
            print("")
            print("Heart rate over time")
            print(
                TerminalChart.render(heartRates.map { ($0.start.timeIntervalSince(workout.start), $0.canonicalValue) }))
            print(Self.paths(of: heartRates))
        }
        let signals = try await store.waveformSummaries(of: uuid)
        if !signals.isEmpty {
            print("")
            print("Raw signals (export with --format edf, or csv --signal ecg|acc)")
            for signal in signals { print("  " + Self.line(signal)) }
        }
    }

    /// `Polar H10 (A0:…) ecg: 130 Hz, 936000 samples over 02:00:00, 1 run`.
    static func line(_ signal: WaveformSummary) -> String {
        let span =
            signal.last.timeIntervalSince(signal.first) + Double(signal.samples) / Double(max(signal.frames, 1))
            / Double(max(signal.sampleRate, 1))
        let seconds = Int(span.rounded())
        let clock = String(format: "%02ld:%02ld:%02ld", seconds / 3600, seconds / 60 % 60, seconds % 60)
        // A Bluetooth name is radio text: no control characters reach the terminal.
        let name =
            signal.sensor.name.map {
                String($0.unicodeScalars.filter { $0.properties.generalCategory != .control }.prefix(64)) + " "
            } ?? ""
        return
            "\(name)(\(signal.sensor.address)) \(signal.kind.rawValue): \(signal.sampleRate) Hz, \(signal.samples) samples "
            + "over \(clock), \(signal.runs) run\(signal.runs == 1 ? "" : "s")"
    }

    /// How the heart rates came: a broadcast is not an identity (anyone in range can send one).
    static func paths(of heartRates: [QuantitySample]) -> String {
        let linked = heartRates.count { $0.metadata.via == .connection }
        let broadcast = heartRates.count { $0.metadata.via == .advertisement }
        var parts = ["\(linked) through a link"]
        if broadcast > 0 { parts.append("\(broadcast) heard as a broadcast (anyone in range could have sent those)") }
        let unknown = heartRates.count - linked - broadcast
        if unknown > 0 { parts.append("\(unknown) recorded before hrbridge kept how") }
        return "Heart rates: " + parts.joined(separator: ", ")
    }
}

struct WorkoutsDeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a workout with its samples.")

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: "The workout's identifier.")
    var id: String

    func run() async throws {
        guard let uuid = UUID(uuidString: id) else { throw ValidationError("'\(id)' is not a workout identifier") }
        let store = try storeOptions.open()
        do {
            // One being recorded (here, by the daemon or another run) or interrupted is not
            // deleted from under its recorder or its recovery: its samples would go nowhere.
            guard try await !store.workout(uuid).isActive else {
                StandardError.write(
                    "hrbridge: workout \(uuid.uuidString) is still being recorded, or was interrupted: stop it, or let `workout run --recover` (or the daemon) finish it, then delete it"
                )
                throw ExitCode(66)
            }
            try await store.deleteWorkout(uuid)
            print("deleted \(uuid.uuidString)")
        } catch let error as StoreError {
            guard case .unknownWorkout = error else { throw error }
            StandardError.write("hrbridge: no workout \(uuid.uuidString) in \(store.location)")
            throw ExitCode(66)
        }
    }
}

/// `hrbridge workouts export`: FIT, TCX or CSV; raw signals as EDF+ or CSV.
struct WorkoutsExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a workout as FIT, TCX or CSV, its raw ECG and acceleration as EDF+ or CSV.",
        discussion: """
            fit: a FIT activity file (Garmin Connect, Strava, intervals.icu, GoldenCheetah) with records,
            RR intervals (hrv), timer events, laps, a session per activity. tcx: TrainingCenterDatabase v2.
            csv: one row per sample (time,type,value,unit,source,counted,via), or one row per second with --wide.
            Writes to -o FILE, else to workout-ID.EXT in the current directory. Exit 65 when the workout
            has no samples, 66 when it does not exist or is still active.

            Raw signals recorded with the workout (a Polar H10's ECG and acceleration):
            edf: EDF+ files, one per strap, signal and run without a gap, named -o PREFIX (default
            workout-ID) + -ADDRESS-ecg.edf, -acc.edf, -ecg-2.edf after a gap; the workout's start, events
            and end are annotations. --signal ecg or acc limits them to one signal.
            csv with --signal ecg or acc: one row per sample (time,sensor,run,ecg_uV or x_mG,y_mG,z_mG),
            time in Unix seconds from the strap's clock. Exit 65 when the workout holds no raw signal.
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: "The workout's identifier.")
    var id: String

    @Option(help: "fit, tcx, csv or edf (raw signals).")
    var format: String = "fit"

    @Option(name: .shortAndLong, help: "The output file (- for standard output).")
    var output: String?

    @Flag(help: "CSV: one row per second instead of one per sample.")
    var wide = false

    @Option(help: "A raw signal, ecg or acc: with csv, its samples; with edf, only its files.")
    var signal: String?

    func validate() throws {
        guard UUID(uuidString: id) != nil else { throw ValidationError("'\(id)' is not a workout identifier") }
        guard format == "edf" || ExportFormat(rawValue: format) != nil else {
            throw ValidationError("--format is fit, tcx, csv or edf")
        }
        if let signal {
            guard WaveformKind(rawValue: signal) != nil else { throw ValidationError("--signal is ecg or acc") }
            guard format == "csv" || format == "edf" else { throw ValidationError("--signal goes with csv or edf") }
            guard !wide else { throw ValidationError("--wide is for samples, not --signal") }
        }
        if wide && format != "csv" { throw ValidationError("--wide goes with --format csv") }
    }

    func run() async throws {
        let store = try storeOptions.open()
        let workout = UUID(uuidString: id)!
        let kind = signal.flatMap(WaveformKind.init(rawValue:))
        if format == "edf" {
            let report = try await WaveformFileExport.edf(
                workout: workout, prefix: output ?? "workout-\(workout.uuidString)", kinds: kind.map { [$0] },
                store: store)
            for line in report.lines { StandardError.write(line) }
            if !report.failures.isEmpty { throw ExitCode(73) }
            return
        }
        if let kind {
            let path = try await WaveformFileExport.csv(workout: workout, kind: kind, output: output, store: store)
            if path != "-" { StandardError.write("wrote \(path)") }
            return
        }
        let path = try await WorkoutFileExport.write(
            workout: workout, format: ExportFormat(rawValue: format)!, wide: wide, output: output, store: store)
        if path != "-" { StandardError.write("wrote \(path)") }
    }
}

/// Raw signals out of the store: the exit statuses `workouts export` uses for every format.
enum WaveformFileExport {
    static func edf(workout id: UUID, prefix: String, kinds: Set<WaveformKind>?, store: WorkoutStore)
        async throws -> EDFWaveformFiles.Report
    {
        try await exiting(workout: id) {
            try await WorkoutWaveformFile.edf(workout: id, prefix: prefix, kinds: kinds, store: store)
        }
    }

    /// Writes one signal's CSV to `output` (- for standard output; default workout-ID-KIND.csv) and
    /// returns its path.
    static func csv(workout id: UUID, kind: WaveformKind, output: String?, store: WorkoutStore) async throws
        -> String
    {
        let path = output ?? "workout-\(id.uuidString)-\(kind.rawValue).csv"
        if path == "-" {
            _ = try await exiting(workout: id) {
                try await WorkoutWaveformFile.csv(workout: id, kind: kind, store: store) { text in
                    try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
                }
            }
            return path
        }
        // Written beside the file and renamed over it once whole: a failed export (no such
        // workout, no signal, a full disk) leaves a file already there as it was.
        let partial = path + ".partial-\(UUID().uuidString.prefix(8))"
        guard FileManager.default.createFile(atPath: partial, contents: nil),
            let handle = FileHandle(forWritingAtPath: partial)
        else {
            StandardError.write("hrbridge: cannot write \(path)")
            throw ExitCode(73)
        }
        do {
            defer { try? handle.close() }
            _ = try await exiting(workout: id) {
                try await WorkoutWaveformFile.csv(workout: id, kind: kind, store: store) { text in
                    try handle.write(contentsOf: Data(text.utf8))
                }
            }
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
        guard rename(partial, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: partial)
            StandardError.write("hrbridge: cannot write \(path): \(reason)")
            throw ExitCode(73)
        }
        return path
    }

    /// Runs an export, turning its errors into one line and the exit status: 65 nothing to export,
    /// 66 no such workout or still active, 73 the store or the file failed.
    private static func exiting<T>(workout id: UUID, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ExportError where error != .workoutNotFinished {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(65)
        } catch let error as ExportError {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(66)
        } catch let error as StoreError where error != .unknownWorkout(id) {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        } catch let error as StoreError {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(66)
        } catch let error as ExitCode {
            throw error
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        }
    }
}

/// Shared by `workouts export` and `workout run --export`.
enum WorkoutFileExport {
    /// Writes the file and returns its path; prints one line and exits 65/66 on failure.
    static func write(workout id: UUID, format: ExportFormat, wide: Bool, output: String?, store: WorkoutStore)
        async throws
        -> String
    {
        let bytes: [UInt8]
        do {
            bytes = try await WorkoutFile.bytes(workout: id, format: format, wide: wide, store: store)
        } catch let error as ExportError where error != .workoutNotFinished {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(65)
        } catch let error as StoreError where error != .unknownWorkout(id) {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        } catch {
            // Not found, or still being recorded.
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(66)
        }
        let path = output ?? "workout-\(id.uuidString).\(format.rawValue)"
        if path == "-" {
            FileHandle.standardOutput.write(Data(bytes))
        } else {
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: path))
            } catch {
                StandardError.write("hrbridge: cannot write \(path): \(error.localizedDescription)")
                throw ExitCode(73)
            }
        }
        return path
    }
}

/// `hrbridge samples`: samples or bucketed statistics from the store.
struct SamplesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "samples",
        abstract: "Query stored samples, or statistics in fixed buckets.",
        discussion: """
            --type is a quantity type in kebab case: \(QuantityType.allCases.map(\.commandLineName).joined(separator: ", ")).
            --from/--to are dates: 2026-11-23, 2026-11-23T07:30 (local time) or ISO 8601 (default:
            everything). --bucket minute|hour|day|week gives statistics per bucket (count, average, min,
            max for readings; sum for amounts) anchored at --from, else at the first sample's hour
            (minute, hour) or local midnight (day, week). --limit caps the samples or the buckets.
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "The quantity type, e.g. heart-rate.")
    var type: String

    @Option(help: "From: 2026-11-23, 2026-11-23T07:30 (local time) or ISO 8601.")
    var from: String?

    @Option(help: "To (exclusive), as --from.")
    var to: String?

    @Option(help: "Bucket width: minute, hour, day or week.")
    var bucket: String?

    @Option(help: "At most this many samples (or buckets).")
    var limit: Int?

    @Flag(help: "JSON lines.")
    var json = false

    func validate() throws {
        guard QuantityType(commandLineName: type) != nil else { throw ValidationError("unknown type '\(type)'") }
        if let from, LocalDate.parse(from) == nil {
            throw ValidationError("--from '\(from)' is not a date such as 2026-11-23, 2026-11-23T07:30 or ISO 8601")
        }
        if let to, LocalDate.parse(to) == nil {
            throw ValidationError("--to '\(to)' is not a date such as 2026-11-23, 2026-11-23T07:30 or ISO 8601")
        }
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
        if let bucket, StatisticsInterval(rawValue: bucket) == nil {
            throw ValidationError("--bucket is minute, hour, day or week")
        }
    }

    /// Where buckets start when --from is not given: the first sample's hour for minutes and
    /// hours, its local midnight for days and weeks (a day is a calendar day, not 24 h from 20:00).
    static func anchor(before first: Date, _ interval: StatisticsInterval, calendar: Calendar = .current) -> Date {
        switch interval {
        case .day, .week: calendar.startOfDay(for: first)
        default:
            Date(timeIntervalSinceReferenceDate: (first.timeIntervalSinceReferenceDate / 3600).rounded(.down) * 3600)
        }
    }

    func run() async throws {
        let store = try storeOptions.open()
        let quantityType = QuantityType(commandLineName: type)!
        let start = from.flatMap(LocalDate.parse) ?? .distantPast
        let end = to.flatMap(LocalDate.parse) ?? .distantFuture
        if let bucket, let interval = StatisticsInterval(rawValue: bucket) {
            let first =
                await start == .distantPast
                ? (try store.samples(type: quantityType, limit: 1).first?.start ?? Date()) : start
            let anchor = start == .distantPast ? Self.anchor(before: first, interval) : start
            let buckets = try await store.statisticsCollection(
                type: quantityType, from: anchor, to: end == .distantFuture ? Date.distantFuture : end,
                anchor: anchor, interval: interval)
            for bucket in buckets.prefix(limit ?? .max) {
                if json {
                    print(
                        try JSONText.line(
                            BucketLine(
                                start: ISO8601.format(bucket.start), end: ISO8601.format(bucket.end),
                                count: bucket.count,
                                average: bucket.average, min: bucket.minimum, max: bucket.maximum, sum: bucket.sum)))
                } else {
                    print(
                        "\(ISO8601.format(bucket.start))  n=\(bucket.count)  "
                            + (bucket.sum.map { "sum \(Format.number($0))" }
                                ?? "avg \(Format.number(bucket.average)) min \(Format.number(bucket.minimum)) max \(Format.number(bucket.maximum))")
                    )
                }
            }
            return
        }
        for sample in try await store.samples(type: quantityType, from: start, to: end, limit: limit) {
            if json {
                print(try JSONText.line(SampleJSON(sample)))
            } else {
                print(
                    "\(ISO8601.format(sample.start))  \(Format.number(sample.quantity.value)) \(sample.quantity.unit.symbol)  \(sample.source.address)"
                )
            }
        }
    }
}

extension QuantityType {
    /// `heart-rate` for `heartRate`.
    var commandLineName: String {
        rawValue.reduce(into: "") { result, character in
            if character.isUppercase { result += "-" + character.lowercased() } else { result.append(character) }
        }
    }

    init?(commandLineName: String) {
        guard
            let match = Self.allCases.first(where: {
                $0.commandLineName == commandLineName || $0.rawValue == commandLineName
            })
        else { return nil }
        self = match
    }
}

/// A line of `workouts list --json`.
struct ListLine: Codable {
    var id: String
    var activityType: String
    var start: String
    @Nullable var end: String?
    @Nullable var elapsedTime: Double?
    var active: Bool
    @Nullable var averageHeartRate: Double?
}

/// A line of `workouts samples --interval … --json`: one bucket's statistics.
struct BucketLine: Codable {
    var start: String
    var end: String
    var count: Int
    @Nullable var average: Double?
    @Nullable var min: Double?
    @Nullable var max: Double?
    @Nullable var sum: Double?
}
