import ArgumentParser
import Foundation
import GATT
import Logging
import Samples
import SensorSimulator
import Sensors
import Synchronization
import Wire
import WorkoutExport
import WorkoutPlans
import WorkoutRecording
import WorkoutStore
import Workouts

/// `hrbridge workout run`: a workout on the simulator (or BlueZ), with a live view and a summary.
struct WorkoutRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a workout: live view on a terminal, JSON lines with --json, a summary at the end.",
        discussion: """
            The mock adapter plays a scenario (the built-in one unless --scenario is given) of virtual
            straps whose raw frames go through the same decoders as real ones. On a terminal the view
            updates in place; keys: p pause, r resume, l lap, n next activity, q stop.

            --json prints one JSON object per line: {"kind":"sample",…}, {"kind":"event",…},
            {"kind":"zone",…}, {"kind":"sensor",…}, then a final summary object with the keys
            elapsedTime, statistics, zones, events, activities, hrv and activeEnergy.

            The simulator runs on its own time: --speed only paces it (60 plays a minute per second,
            max as fast as the machine goes), so a scenario and --seed give the same workout at any
            speed; the workout is dated when the run starts, to the second.

            --adapter bluez uses real straps through BlueZ (real time; --speed is ignored): the
            --sensor addresses, else every paired or trusted strap with the Heart Rate service, else
            the first one found (within 30 s); --bluetooth-adapter picks hciN.

            Exit status: 0 done (also when stopped with Ctrl-C or SIGTERM, at any moment: while
            recording, the workout is saved); 64 bad options; 65 bad scenario file (one line per problem, with
            its JSON path); 69 adapter unavailable or no strap found; 73 store cannot be opened; 75
            another process records into the store.
            """
    )

    @Option(help: "Activity type: \(WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", ")).")
    var activity: String = "running"

    @Option(help: "indoor or outdoor.")
    var location: String = "indoor"

    @Option(help: "Sensor adapter: mock (the simulator) or bluez.")
    var adapter: String = "mock"

    @Option(
        name: .customLong("bluetooth-adapter"),
        help: "With --adapter bluez: a Bluetooth adapter to use, e.g. hci1; repeatable (default: every adapter).")
    var bluetoothAdapter: [String] = []

    @Option(name: .customLong("sensor"), help: "Use only this sensor address (repeatable); default: every strap found.")
    var sensors: [String] = []

    @Option(help: "Scenario file for the mock adapter (see `hrbridge workout scenario`).")
    var scenario: String?

    @Option(help: "Seed for the simulator (default: the scenario's; the built-in one's is 2026).")
    var seed: UInt64?

    @Option(
        help: ArgumentHelp(
            "Simulated seconds per real second: 60 plays a minute per second, max as fast as possible.",
            discussion: "It changes how long the run takes, never what is recorded."))
    var speed: SimulationPace = .speed(1)

    @Option(help: "Stop after this much workout time, e.g. 30m, 90s (default: the scenario's length).")
    var duration: String?

    @Option(help: "Heart-rate zone boundaries in bpm, ascending, e.g. 120,140,160,175 (3–9 zones).")
    var zones: String?

    @Option(help: "Athlete identifier (one active session per athlete).")
    var athlete: String = UserProfile.anonymousID

    @Option(help: "Athlete's age in years (zones, energy).")
    var age: Int?

    @Option(help: "Athlete's sex: male or female (energy).")
    var sex: String?

    @Option(help: "Athlete's weight in kg (energy).")
    var weight: Double?

    @Option(name: .customLong("resting-hr"), help: "Resting heart rate (heart-rate-reserve zones).")
    var restingHeartRate: Double?

    @Option(name: .customLong("max-hr"), help: "Maximum heart rate (default 208 − 0.7 × age).")
    var maximumHeartRate: Double?

    @Option(help: "Functional threshold power in W (power zones, for a plan's power-zone alerts).")
    var ftp: Double?

    @Flag(help: "JSON lines instead of the live view.")
    var json = false

    @Option(help: "The store file (default: $XDG_DATA_HOME/hrbridge/store.sqlite).")
    var store: String?

    @Flag(help: "A guest workout: nothing is written to the store.")
    var guest = false

    @Flag(help: "Continue the athlete's unfinished workout (after a crash) instead of asking.")
    var recover = false

    @Option(help: "At the end, export the workout: fit, tcx or csv (written to workout-ID.EXT, or --export-file).")
    var export: String?

    @Option(help: "The file --export writes.")
    var exportFile: String?

    @Option(help: "Run this structured workout plan (see `hrbridge plan`); its activity and location win.")
    var plan: String?

    @Option(
        name: .customLong("open-step-time"),
        help: "With --plan: end open steps after this long, e.g. 2m (default: on the key n only).")
    var openStepTime: String?

    /// Raw signals recorded with the workout, stopped at its end.
    @OptionGroup var rawSignals: RawSignalOptions

    @Flag(help: "Log sensor problems to stderr.")
    var verbose = false

    func validate() throws {
        try AddressArguments.check(sensors, "--sensor")
        if !rawSignals.requests.isEmpty && guest {
            throw ValidationError("--ecg and --acc record into the store: not with --guest")
        }
        guard WorkoutActivityType(rawValue: activity) != nil else {
            throw ValidationError("unknown activity '\(activity)'")
        }
        guard WorkoutLocation(rawValue: location) != nil else { throw ValidationError("location is indoor or outdoor") }
        guard adapter == "mock" || adapter == "bluez" else { throw ValidationError("adapter is mock or bluez") }
        if let duration, ScenarioParser.duration(duration).map({ $0 > 0 }) != true {
            throw ValidationError("--duration '\(duration)' is not a duration such as 30m or 90s")
        }
        if let sex, BiologicalSex(rawValue: sex) == nil { throw ValidationError("--sex is male or female") }
        if let export, ExportFormat(rawValue: export) == nil { throw ValidationError("--export is fit, tcx or csv") }
        if export != nil && guest { throw ValidationError("--export needs a stored workout; a guest's is not stored") }
        // Said rather than ignored: an option that would change nothing is a mistake the user should hear of.
        if exportFile != nil && export == nil { throw ValidationError("--export-file goes with --export FORMAT") }
        if !bluetoothAdapter.isEmpty && adapter != "bluez" {
            throw ValidationError("--bluetooth-adapter goes with --adapter bluez")
        }
        if let zones { _ = try parseZones(zones) }
        if let openStepTime, ScenarioParser.duration(openStepTime).map({ $0 > 0 }) != true {
            throw ValidationError("--open-step-time '\(openStepTime)' is not a duration such as 2m")
        }
        if openStepTime != nil && plan == nil { throw ValidationError("--open-step-time needs --plan") }
        if plan != nil && recover { throw ValidationError("--plan starts a new workout; --recover continues one") }
        // The bounds the configuration's [[athletes]] has: a typo is said, not stored as zones of 6e307.
        // A workout recorded before ids had these bounds is still recovered under its id.
        let profile = UserProfile(
            id: recover ? UserProfile.anonymousID : athlete, age: age, weightKilograms: weight,
            restingHeartRate: restingHeartRate, maximumHeartRate: maximumHeartRate, functionalThresholdPower: ftp)
        if let problem = profile.problems.first { throw ValidationError(problem) }
    }

    private func openStore() throws -> WorkoutStore? {
        // A guest reads an existing store (never writes it); without one there is nothing to read.
        if guest { return try? WorkoutStore(path: store ?? WorkoutStore.defaultPath, guest: true) }
        do {
            return try WorkoutStore(path: store ?? WorkoutStore.defaultPath)
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        }
    }

    /// Where a simulated run's timeline starts: this second, or after the samples an earlier run
    /// left ahead of it (``WorkoutStore/endOfSamples(after:)``). A virtual strap is in one workout
    /// at a time. The store is only read here, and only when it exists: nothing is created before
    /// the workout begins.
    static func simulationStart(now: Date, storePath: String) async -> Date {
        let start = Date(timeIntervalSinceReferenceDate: now.timeIntervalSinceReferenceDate.rounded(.down))
        guard FileManager.default.fileExists(atPath: storePath),
            let store = try? WorkoutStore(path: storePath, guest: true)
        else { return start }
        return await store.endOfSamples(after: start) ?? start
    }

    /// Ends an interrupted workout at its last stored sample and saves it.
    private func closeUnfinished(_ collector: WorkoutCollector, store: WorkoutStore) async throws {
        var collector = collector
        let last =
            QuantityType.allCases.compactMap { collector.statistics(for: $0)?.endDate }.max() ?? collector.startDate
            ?? Date()
        try collector.end(at: last)
        try await store.finish(try collector.finish())
    }

    private func parseZones(_ text: String) throws -> ZoneConfiguration {
        try PlanContextOptions.parse(text, type: .heartRate, option: "--zones")
    }

    func run() async throws {
        // A reader that goes away (`--json | head`) is an error on the write, which stops the
        // workout and saves it, not a signal that kills the process mid-workout. Only here: other
        // commands end on SIGPIPE as a filter should.
        signal(SIGPIPE, SIG_IGN)
        var logger = Logger(label: "hrbridge")
        logger.logLevel = verbose ? .info : .critical
        var scenario = Scenario.default
        if let path = self.scenario {
            do {
                scenario = try ScenarioParser.load(path: path)
            } catch {
                StandardError.write(error.description)
                throw ExitCode(65)
            }
        }
        let profile = UserProfile(
            id: athlete, age: age, sex: sex.flatMap(BiologicalSex.init(rawValue:)), weightKilograms: weight,
            restingHeartRate: restingHeartRate, maximumHeartRate: maximumHeartRate, functionalThresholdPower: ftp)
        var planFile: (plan: WorkoutPlan, data: Data)?
        if let path = plan {
            var context = PlanContext()
            context.zones[.heartRate] = try zones.map(parseZones) ?? profile.preferredZoneConfiguration(for: .heartRate)
            context.zones[.cyclingPower] = profile.preferredZoneConfiguration(for: .cyclingPower)
            let noZones = context.zones[.heartRate] == nil
            planFile = try PlanFile.load(path, context: context) { problems in
                // Only when a zone alert is what failed, and zones are what is missing.
                let zoneProblem = problems.contains {
                    if case .zoneOutOfRange(_, 0) = $0.kind { $0.path.hasSuffix(".heartRateZone") } else { false }
                }
                let powerZoneProblem = problems.contains {
                    if case .zoneOutOfRange(_, 0) = $0.kind { $0.path.hasSuffix(".powerZone") } else { false }
                }
                if noZones && zoneProblem {
                    return "hrbridge: heart-rate zone alerts need zones: give --zones, or --age or --max-hr"
                }
                return powerZoneProblem ? "hrbridge: power zone alerts need power zones: give --ftp" : nil
            }
        }
        let chosenLocation = WorkoutLocation(rawValue: location)!
        let configuration = WorkoutConfiguration(
            activityType: planFile?.plan.activity ?? WorkoutActivityType(rawValue: activity)!,
            location: planFile.map { $0.plan.location == .unknown ? chosenLocation : $0.plan.location }
                ?? chosenLocation)
        let usesBlueZ = adapter == "bluez"
        let defaultLength = usesBlueZ ? 30 * 60 : max(scenario.duration, 60)
        let openStepLength = openStepTime.flatMap(ScenarioParser.duration)
        // A plan ends the workout when it completes; this is only the backstop.
        let planLength = planFile.map { file in
            let estimate = PlanEstimate(file.plan)
            return 2 * (estimate.duration + Double(estimate.openSteps) * (openStepLength ?? 300)) + 600
        }
        let workoutLength = duration.flatMap(ScenarioParser.duration) ?? planLength ?? defaultLength
        // The simulator's timeline is the run's clock: start, end, elapsed time, zones and every
        // sample date are simulated time (from this second on, or after what an earlier run left
        // ahead of the wall clock), so no wall-clock timing reaches the workout. Real straps run
        // in real time: --speed applies to the simulator only.
        let simulator =
            usesBlueZ
            ? nil
            : MockSensorAdapter(
                scenario: scenario, seed: seed,
                steppingFrom: await Self.simulationStart(now: Date.now, storePath: store ?? WorkoutStore.defaultPath),
                logger: logger)
        let clock: any WallClock = simulator?.timeline ?? SystemWallClock()
        // From the first wait on: an interrupt while waiting for bluetoothd, an adapter, a strap
        // or an answer ends the command cleanly (exit 0); once recording, it stops the workout.
        let interrupt = InterruptWatch { _ in
            StandardError.write("hrbridge: interrupted before the workout began: nothing recorded")
            Glibc.exit(0)
        }
        let sensorsSource: WorkoutSensors
        if let simulator {
            sensorsSource = try WorkoutSensors.mock(simulator, addresses: sensors)
        } else {
            let settings = BluetoothSettings(adapter: bluetoothAdapter, verbose: verbose)
            sensorsSource = try await WorkoutSensors.bluez(settings: settings, addresses: sensors, clock: clock)
        }
        let output = JSONLineWriter(enabled: json)
        let storage = try openStore()
        // One process records into (and recovers from) a store at a time: a daemon on the same
        // store waits (exit 75, retried by systemd) instead of continuing this workout too.
        var recordingLock: RecordingLock?
        if !guest, let storage {
            do {
                recordingLock = try RecordingLock(path: storage.lockPath)
            } catch {
                StandardError.write("hrbridge: \(error)")
                throw ExitCode(75)
            }
        }
        defer { withExtendedLifetime(recordingLock) {} }
        var unfinished: [ActiveSessionRecord] = []
        if !guest, let storage {
            for problem in try await storage.unreadableJournalRows() {
                StandardError.write("hrbridge: cannot recover from the journal: \(problem)")
            }
            unfinished = try await storage.activeSessions().filter {
                ($0.profile?.id ?? UserProfile.anonymousID) == athlete
            }
        }
        var recovered: ActiveSessionRecord?
        if let record = unfinished.first, let storage {
            if recover
                || Prompt.yes(
                    "An unfinished \(record.configuration.activityType.rawValue) workout from \(ISO8601.format(record.start)) was interrupted. Continue it? [Y/n] ",
                    interactive: !json)
            {
                recovered = record
            } else {
                // Never lose it: close it at its last stored sample.
                let collector = try await WorkoutRecovery.rebuild(record, store: storage, logger: logger)
                try await closeUnfinished(collector, store: storage)
                StandardError.write(
                    "hrbridge: the unfinished workout \(record.workoutID.uuidString) was saved as it stood; --recover continues one instead"
                )
            }
        } else if recover {
            StandardError.write("hrbridge: no unfinished workout for athlete '\(athlete)' to recover")
            throw ExitCode(66)
        }
        let writableStorage = storage.flatMap { $0.isGuest ? nil : $0 }
        let chosen = sensorsSource.sensors
        var setup = WorkoutRecorder.Setup(
            configuration: configuration, profile: profile, sensors: chosen, zones: try zones.map(parseZones),
            plan: planFile?.plan, planFile: planFile?.data, store: writableStorage, recovering: recovered)
        setup.logsRefusedFrames = true
        setup.waveforms = rawSignals.requests
        let recorder: WorkoutRecorder
        do {
            recorder = try await WorkoutRecorder(
                setup, adapter: sensorsSource.adapter, clock: clock, registry: WorkoutSessionRegistry(),
                sampleSink: json ? { @Sendable samples in output.samples(samples) } : nil, logger: logger)
        } catch let error as PlanError {
            for problem in error.problems { StandardError.write("\(plan ?? "plan"): \(problem)") }
            throw ExitCode(65)
        }
        let tracker = SensorTracker()
        await recorder.attach(
            onUpdate: { update in output.builderUpdate(update) },
            onSensorEvent: { event in
                tracker.record(event)
                output.sensorEvent(event, at: clock.now())
            })
        let builder = recorder.builder
        let session = recorder.session
        interrupt.ready()
        for sensor in chosen {
            do {
                try await sensorsSource.adapter.connect(sensor)
            } catch {
                // The adapter keeps trying; the workout records whatever arrives.
                StandardError.write("hrbridge: \(sensor.address): \(error); retrying in the background")
            }
        }
        var ticker =
            simulator.map { WorkoutTicker.simulated($0, pace: speed, recorder: recorder) }
            ?? .realTime(clock)
        await ticker.settle()
        let start = clock.now()
        var firstPlanEvents: [PlanEvent] = []
        if let recovered {
            StandardError.write("hrbridge: continuing the workout \(recovered.workoutID.uuidString)")
        } else {
            firstPlanEvents = try await recorder.begin(at: start)
        }

        let keyboard = json ? nil : KeyboardInput()
        let view =
            json ? nil : LiveView(sensors: chosen, configuration: configuration, speed: usesBlueZ ? .speed(1) : speed)
        var planDisplay = PlanDisplay(stepStart: start)
        planDisplay.note(firstPlanEvents, output: output)
        let end = start.addingTimeInterval(workoutLength)
        // Ctrl-C (SIGINT) or SIGTERM is a stop, as `q` is: the workout ends where it stands and is
        // saved; only SIGKILL or a crash leaves it to recovery.
        let stopRequested = Mutex(false)
        let interruptWatcher = Task {
            for await _ in interrupt.signals {
                stopRequested.withLock { $0 = true }
                return
            }
        }
        defer { interruptWatcher.cancel() }
        let runsPlan = recorder.runsPlan
        loop: while true {
            let now = clock.now()
            if now >= end || stopRequested.withLock({ $0 }) || output.isClosed { break }
            if runsPlan {
                planDisplay.note(await recorder.tickPlan(at: now), output: output)
                if let openStepLength, await recorder.planStatus(at: now)?.current?.step.goal == .open,
                    now.timeIntervalSince(planDisplay.stepStart) >= openStepLength
                {
                    planDisplay.note(await recorder.nextStep(at: now), output: output)
                }
                if await recorder.planIsComplete { break }
            }
            if let view {
                var planLine: String?
                if let status = await recorder.planStatus(at: now) { planLine = PlanDisplay.line(status) }
                await view.render(
                    builder: builder, tracker: tracker, state: await session.state, at: now, planLine: planLine)
            }
            if let key = keyboard?.poll() {
                switch key {
                case "p": try? await recorder.pause(at: now)
                case "r": try? await recorder.resume(at: now)
                case "l": try? await recorder.lap(at: now)
                case "n" where runsPlan: planDisplay.note(await recorder.nextStep(at: now), output: output)
                case "n": try? await recorder.newActivity(configuration, at: now)
                case "q": break loop
                default: break
                }
            }
            // A plan is judged at every tick (at least every workout second), so steps end on time.
            try await ticker.next(before: end)
        }
        keyboard?.restore()
        let workout: Workout
        do {
            // Every frame up to the stop is delivered and taken before the workout ends.
            workout = try await recorder.finish(
                at: min(clock.now(), end), settle: .drain(deliver: { stop in await sensorsSource.finish(stop) }))
        } catch let error as StoreError {
            // Nothing is dropped: what waits goes to the spill file, the workout stays in the journal.
            try? await recorder.spillWaiting()
            StandardError.write(
                "hrbridge: the workout is not saved: \(error); its samples wait in \(recorder.streamer?.spillPath ?? "the store"). "
                    + "Free space, then `hrbridge workout run --recover` stores them and continues it (q ends it).")
            throw ExitCode(73)
        }
        let saved = writableStorage != nil
        if let entry = await recorder.completedSchedule {
            StandardError.write("hrbridge: marked the scheduled '\(entry.name)' of \(ISO8601.format(entry.date)) done")
        }
        if let export, let format = ExportFormat(rawValue: export), let writableStorage {
            let path = try await WorkoutFileExport.write(
                workout: workout.id, format: format, wide: false, output: exportFile, store: writableStorage)
            StandardError.write("hrbridge: exported \(path)")
        }
        // Both streams have finished: wait for them so the summary comes last.
        await recorder.streamsEnded()
        // Everything is stored: the file alone holds it from here, whatever task still holds the store.
        await writableStorage?.close()
        let counters = await recorder.dataSource.counters
        if json {
            if !saved { StandardError.write("hrbridge: not saved (\(guest ? "guest workout" : "no store"))") }
            output.summary(workout)
        } else {
            view?.finish()
            print(WorkoutSummary.text(workout, counters: counters, tracker: tracker))
            if !saved { print("Not saved: \(guest ? "a guest's workout is never written" : "no store").") }
        }
    }
}
