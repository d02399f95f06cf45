import ArgumentParser
import Bridge
import Foundation
import GATT
import Logging
import Samples
import SensorSimulator
import Sensors
import Synchronization
import WorkoutExport
import WorkoutPlans
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

            --adapter bluez uses real straps through BlueZ (real time; --speed is ignored): the
            --sensor addresses, else every known strap with the Heart Rate service, else the first
            one found; --bluetooth-adapter picks hciN.

            Exit status: 0 done; 64 bad options; 65 bad scenario file (one line per problem, with
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

    @Option(name: .customLong("bluetooth-adapter"), help: "With --adapter bluez: the Bluetooth adapter, e.g. hci1.")
    var bluetoothAdapter: String?

    @Option(name: .customLong("sensor"), help: "Use only this sensor address (repeatable); default: every strap found.")
    var sensors: [String] = []

    @Option(help: "Scenario file for the mock adapter (see `hrbridge workout scenario`).")
    var scenario: String?

    @Option(help: "Seed for the simulator (default: the scenario's).")
    var seed: UInt64?

    @Option(help: "Time acceleration: 60 plays a minute per second.")
    var speed: Double = 1

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

    @Flag(help: "Log sensor problems to stderr.")
    var verbose = false

    func validate() throws {
        guard WorkoutActivityType(rawValue: activity) != nil else {
            throw ValidationError("unknown activity '\(activity)'")
        }
        guard WorkoutLocation(rawValue: location) != nil else { throw ValidationError("location is indoor or outdoor") }
        guard adapter == "mock" || adapter == "bluez" else { throw ValidationError("adapter is mock or bluez") }
        guard speed > 0, speed <= 100_000 else { throw ValidationError("--speed must be above 0 and at most 100000") }
        if let duration, ScenarioParser.duration(duration).map({ $0 > 0 }) != true {
            throw ValidationError("--duration '\(duration)' is not a duration such as 30m or 90s")
        }
        if let sex, BiologicalSex(rawValue: sex) == nil { throw ValidationError("--sex is male or female") }
        if let export, ExportFormat(rawValue: export) == nil { throw ValidationError("--export is fit, tcx or csv") }
        if export != nil && guest { throw ValidationError("--export needs a stored workout; a guest's is not stored") }
        if let zones { _ = try parseZones(zones) }
        if let openStepTime, ScenarioParser.duration(openStepTime).map({ $0 > 0 }) != true {
            throw ValidationError("--open-step-time '\(openStepTime)' is not a duration such as 2m")
        }
        if openStepTime != nil && plan == nil { throw ValidationError("--open-step-time needs --plan") }
        if plan != nil && recover { throw ValidationError("--plan starts a new workout; --recover continues one") }
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

    /// Ends an interrupted workout at its last stored sample and saves it.
    private func closeUnfinished(_ collector: WorkoutCollector, store: WorkoutStore) throws {
        var collector = collector
        let last =
            QuantityType.allCases.compactMap { collector.statistics(for: $0)?.endDate }.max() ?? collector.startDate
            ?? Date()
        try collector.end(at: last)
        try store.finish(try collector.finish())
    }

    private func parseZones(_ text: String) throws -> ZoneConfiguration {
        try PlanContextOptions.parse(text, type: .heartRate, option: "--zones")
    }

    func run() async throws {
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
            restingHeartRate: restingHeartRate, maximumHeartRate: maximumHeartRate)
        var planFile: (plan: WorkoutPlan, data: Data)?
        if let path = plan {
            var context = PlanContext()
            context.zones[.heartRate] = try zones.map(parseZones) ?? profile.preferredZoneConfiguration(for: .heartRate)
            do {
                planFile = try PlanFile.load(path, context: context)
            } catch {
                if context.zones[.heartRate] == nil {
                    StandardError.write(
                        "hrbridge: heart-rate zone alerts need zones: give --zones, or --age or --max-hr")
                }
                throw error
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
        // Real straps run in real time: --speed applies to the simulator only.
        let clock = AcceleratedWallClock(speed: usesBlueZ ? 1 : speed)
        let sensorsSource: WorkoutSensors
        if usesBlueZ {
            let settings = BluetoothSettings(adapter: bluetoothAdapter, verbose: verbose)
            sensorsSource = try await WorkoutSensors.bluez(settings: settings, addresses: sensors, clock: clock)
        } else {
            let mock = MockSensorAdapter(scenario: scenario, seed: seed, clock: clock, logger: logger)
            sensorsSource = try WorkoutSensors.mock(mock, addresses: sensors)
        }
        let output = JSONLineWriter(enabled: json)
        var sampleSink: (@Sendable ([QuantitySample]) -> Void)?
        let storage = try openStore()
        // One process records into (and recovers from) a store at a time: a daemon on the same
        // store waits (exit 75, retried by systemd) instead of continuing this workout too.
        var recordingLock: RecordingLock?
        if !guest, let storage {
            do {
                recordingLock = try RecordingLock(store: storage.path)
            } catch {
                StandardError.write("hrbridge: \(error)")
                throw ExitCode(75)
            }
        }
        defer { withExtendedLifetime(recordingLock) {} }
        var unfinished: [ActiveSessionRecord] = []
        if !guest, let storage {
            for problem in try storage.unreadableJournalRows() {
                StandardError.write("hrbridge: cannot recover from the journal: \(problem)")
            }
            unfinished = try storage.activeSessions().filter { ($0.profile?.id ?? UserProfile.anonymousID) == athlete }
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
                let collector = try WorkoutRecovery.rebuild(record, store: storage, logger: logger)
                try closeUnfinished(collector, store: storage)
                StandardError.write(
                    "hrbridge: the unfinished workout \(record.workoutID.uuidString) was saved as it stood; --recover continues one instead"
                )
            }
        } else if recover {
            StandardError.write("hrbridge: no unfinished workout for athlete '\(athlete)' to recover")
            throw ExitCode(66)
        }
        let writableStorage = storage.flatMap { $0.isGuest ? nil : $0 }
        let streamer = writableStorage.map { storage in
            SampleStreamer(store: storage, workout: recovered?.workoutID ?? UUID(), logger: logger)
        }
        var sinks: [@Sendable ([QuantitySample]) -> Void] = []
        if json { sinks.append { @Sendable samples in output.samples(samples) } }
        if let streamer { sinks.append { @Sendable samples in streamer.submit(samples) } }
        let allSinks = sinks
        sampleSink = allSinks.isEmpty ? nil : { @Sendable samples in for sink in allSinks { sink(samples) } }
        let session: WorkoutSession
        if let recovered, let storage {
            let collector = try WorkoutRecovery.rebuild(recovered, store: storage, logger: logger)
            let builder = LiveWorkoutBuilder(recovering: collector, clock: clock, sampleSink: sampleSink)
            session = try WorkoutSession(
                recovering: builder, configuration: recovered.configuration, profile: recovered.profile,
                state: recovered.state, clock: clock, registry: WorkoutSessionRegistry())
        } else {
            session = WorkoutSession(
                configuration: configuration, profile: profile, clock: clock, registry: WorkoutSessionRegistry(),
                sampleSink: sampleSink, id: streamer?.workoutID)
        }
        let builder = session.associatedWorkoutBuilder()
        if let zones, recovered == nil {
            let custom = try parseZones(zones)
            try await builder.setCustomZoneConfiguration(custom, for: .heartRate)
        }
        var runner: PlanRunner?
        if let planFile, let path = plan {
            // Zone alerts are judged against the zones in force now (custom or the profile's).
            var zonesInForce: [QuantityType: ZoneConfiguration] = [:]
            if let heartRateZones = await builder.zoneConfiguration(for: .heartRate) {
                zonesInForce[.heartRate] = heartRateZones
            }
            let problems = PlanValidator.problems(in: planFile.plan, context: PlanContext(zones: zonesInForce))
            guard problems.isEmpty else {
                for problem in problems { StandardError.write("\(path): \(problem)") }
                throw ExitCode(65)
            }
            runner = PlanRunner(plan: planFile.plan, session: session, zones: zonesInForce)
        }
        let dataSource = LiveDataSource(
            adapters: [sensorsSource.adapter], configuration: configuration, clock: clock, logger: logger)
        await dataSource.attach(to: builder)

        let tracker = SensorTracker()
        let sensorEvents = dataSource.sensorEvents()
        let trackerTask = Task {
            for await event in sensorEvents {
                tracker.record(event)
                output.sensorEvent(event, at: clock.now())
                if case .deviceInformation(let sensor, let information) = event {
                    try? writableStorage?.updateSource(
                        sensor, model: information.modelNumber, firmware: information.firmwareRevision)
                }
            }
        }
        let updates = builder.updates()
        let workoutID = builder.workoutID
        let updatesTask = Task {
            for await update in updates {
                output.builderUpdate(update)
                // Events and activities go to the store as they happen, for crash recovery.
                switch update {
                case .event(let event): try? writableStorage?.append(event: event, workout: workoutID)
                case .activityBegan(let activity), .activityEnded(let activity):
                    try? writableStorage?.upsert(activity: activity, workout: workoutID)
                default: break
                }
            }
        }

        let chosen = sensorsSource.sensors
        // The first chosen strap is primary: zones, HRV and energy follow it; the rest are kept per source.
        let primary = SampleSource(adapter: chosen[0].adapter, address: chosen[0].address, name: chosen[0].name)
        for type in [QuantityType.heartRate, .heartbeatSeries, .activeEnergyBurned] {
            await builder.setPrimarySource(primary, for: type)
        }
        if recovered == nil { try await session.prepare() }
        for sensor in chosen {
            do {
                try await sensorsSource.adapter.connect(sensor)
            } catch {
                // The adapter keeps trying; the workout records whatever arrives.
                StandardError.write("hrbridge: \(sensor.address): \(error); retrying in the background")
            }
        }
        let start = clock.now()
        if let recovered {
            StandardError.write("hrbridge: continuing the workout \(recovered.workoutID.uuidString)")
        } else {
            try await session.startActivity(at: start)
            try await session.beginNewActivity(configuration: configuration, at: start)
            let zonesSet = await builder.zoneConfiguration(for: .heartRate).map { [$0] } ?? []
            try writableStorage?.beginWorkout(
                ActiveSessionRecord(
                    workoutID: workoutID, configuration: configuration, profile: profile, start: start, state: .running,
                    customZones: zones == nil ? [] : zonesSet,
                    primarySources: Dictionary(
                        uniqueKeysWithValues: await builder.primarySources.map { ($0.key.rawValue, $0.value) })))
            if let activity = await builder.currentActivity {
                try writableStorage?.upsert(activity: activity, workout: workoutID)
            }
        }
        let journal = { @Sendable (state: WorkoutSessionState) async in
            guard let storage, var record = try? storage.activeSessions().first(where: { $0.workoutID == workoutID })
            else { return }
            record.state = state
            try? storage.updateJournal(record)
        }

        let keyboard = json ? nil : KeyboardInput()
        let view = json ? nil : LiveView(sensors: chosen, configuration: configuration, speed: speed)
        var planDisplay = PlanDisplay(stepStart: start)
        if let runner { planDisplay.note(await runner.start(at: start), output: output) }
        let end = start.addingTimeInterval(workoutLength)
        var lapStart = start
        // Ctrl-C (SIGINT) or SIGTERM is a stop, as `q` is: the workout ends where it stands and is
        // saved; only SIGKILL or a crash leaves it to recovery.
        let stopRequested = Mutex(false)
        let interrupts = Interrupt.signals()
        let interruptWatcher = Task {
            for await _ in interrupts {
                stopRequested.withLock { $0 = true }
                return
            }
        }
        defer { interruptWatcher.cancel() }
        loop: while true {
            let now = clock.now()
            if now >= end || stopRequested.withLock({ $0 }) { break }
            if let runner {
                planDisplay.note(await runner.tick(at: now), output: output)
                if let openStepLength, await runner.status(at: now).current?.step.goal == .open,
                    now.timeIntervalSince(planDisplay.stepStart) >= openStepLength
                {
                    planDisplay.note(await runner.next(at: now), output: output)
                }
                if await runner.isComplete { break }
            }
            if let view {
                var planLine: String?
                if let runner { planLine = PlanDisplay.line(await runner.status(at: now)) }
                await view.render(
                    builder: builder, tracker: tracker, state: await session.state, at: now, planLine: planLine)
            }
            if let key = keyboard?.poll() {
                switch key {
                case "p":
                    try? await session.pause(at: now)
                    await journal(await session.state)
                case "r":
                    try? await session.resume(at: now)
                    await journal(await session.state)
                case "l":
                    try? await session.addEvent(
                        WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: lapStart, end: now)))
                    lapStart = now
                case "n" where runner != nil:
                    planDisplay.note(await runner!.next(at: now), output: output)
                case "n":
                    try? await session.endCurrentActivity(at: now)
                    try? await session.beginNewActivity(configuration: configuration, at: now)
                case "q": break loop
                default: break
                }
            }
            // A plan is judged every workout second, so steps end on time at any --speed.
            let step = runner == nil ? max(speed / 10, 0.05) : min(max(speed / 10, 0.05), 1)
            try await clock.sleep(until: min(end, now.addingTimeInterval(step)))
        }
        // A completed plan ends the workout at its last step's end, not at the tick that noticed it.
        let stop = min(await runner?.completionDate ?? clock.now(), clock.now(), end)
        keyboard?.restore()
        // Deliver every frame up to the stop, however far the consumers lag at high --speed.
        await sensorsSource.finish(stop)
        await dataSource.drain()
        try await session.end(at: stop)
        let workout = try await builder.finishWorkout()
        do {
            try streamer?.finish()
            try writableStorage?.finish(workout)
        } catch {
            // Nothing is dropped: what waits goes to the spill file, the workout stays in the journal.
            try? streamer?.spillWaiting()
            StandardError.write(
                "hrbridge: the workout is not saved: \(error); its samples wait in \(streamer?.spillPath ?? "the store"). "
                    + "Free space, then `hrbridge workout run --recover` stores them and continues it (q ends it).")
            throw ExitCode(73)
        }
        let saved = writableStorage != nil
        if let planFile, let writableStorage, await runner?.isComplete == true,
            let entry = try? writableStorage.completeScheduledPlan(plan: planFile.data, workout: workout.id, at: stop)
        {
            StandardError.write("hrbridge: marked the scheduled '\(entry.name)' of \(ISO8601.format(entry.date)) done")
        }
        if let export, let format = ExportFormat(rawValue: export), let writableStorage {
            let path = try WorkoutFileExport.write(
                workout: workout.id, format: format, wide: false, output: exportFile, store: writableStorage)
            StandardError.write("hrbridge: exported \(path)")
        }
        // Both streams have finished: wait for them so the summary comes last.
        await updatesTask.value
        await trackerTask.value
        let counters = await dataSource.counters
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
