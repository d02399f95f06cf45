public import Foundation
public import Logging
public import Samples
public import Sensors
import Synchronization
public import WorkoutPlans
public import WorkoutStore
public import Workouts

/// One workout being recorded, the same way for `hrbridge workout run` and the daemon's sessions:
/// the session and its builder, a data source on the chosen sensors, the store's sample streamer,
/// the recovery journal, events and activities stored as they happen, a structured workout's
/// runner, and the finish that saves it all (and can be retried while the store refuses).
///
/// The CLI and the daemon are views over it: they choose what to show and when to tick; what is
/// recorded, and how, is decided here.
public actor WorkoutRecorder {
    /// What to record.
    public struct Setup: Sendable {
        public var configuration: WorkoutConfiguration
        public var profile: UserProfile
        /// The sensors, primary first: zones, HRV and energy follow the primary.
        public var sensors: [SensorIdentity]
        /// Custom heart-rate zones (else the profile's).
        public var zones: ZoneConfiguration?
        /// A structured workout to run; validated against the zones in force.
        public var plan: WorkoutPlan?
        /// The plan file as scheduled, so finishing the plan marks the schedule entry done.
        public var planFile: Data?
        /// Where it is stored; nil for a guest's workout or without a store.
        public var store: WorkoutStore?
        /// A workout a crash interrupted, to continue.
        public var recovering: ActiveSessionRecord?
        /// The workout's identifier (a new one when nil).
        public var id: UUID?
        /// Take samples only from `sensors` (the daemon shares one adapter between sessions).
        public var onlyTheseSensors = false
        /// Log refused frames here (false: the caller does, as the daemon's sensor manager).
        public var logsRefusedFrames = true
        /// Raw signals to start on the sensors that offer them (a Polar H10's ECG and
        /// acceleration), and stop when the workout finishes, for the strap's battery. Whatever
        /// raw signals the recorded sensors stream, started here or by someone else (the
        /// daemon's `[[sensors]] waveforms`), are stored with the workout.
        public var waveforms: [WaveformRequest] = []

        public init(
            configuration: WorkoutConfiguration, profile: UserProfile, sensors: [SensorIdentity],
            zones: ZoneConfiguration? = nil, plan: WorkoutPlan? = nil, planFile: Data? = nil,
            store: WorkoutStore? = nil, recovering: ActiveSessionRecord? = nil, id: UUID? = nil
        ) {
            self.configuration = configuration
            self.profile = profile
            self.sensors = sensors
            self.zones = zones
            self.plan = plan
            self.planFile = planFile
            self.store = store
            self.recovering = recovering
            self.id = id
        }
    }

    public nonisolated let id: UUID
    public nonisolated let configuration: WorkoutConfiguration
    public nonisolated let profile: UserProfile
    public nonisolated let sensors: [SensorIdentity]
    public nonisolated let session: WorkoutSession
    public nonisolated let builder: LiveWorkoutBuilder
    public nonisolated let dataSource: LiveDataSource
    /// What the store has not taken yet; nil without a store.
    public nonisolated let streamer: SampleStreamer?
    /// When recording began (a recovered workout's original start); set by ``begin(at:)``.
    public private(set) var started: Date
    private let store: WorkoutStore?
    private let planFile: Data?
    private let clock: any WallClock
    private let logger: Logger
    private let runner: PlanRunner?
    private var lapStart: Date
    private let adapter: any SensorAdapter
    /// Raw signals to start (``Setup/waveforms``), and those started, to stop at the finish.
    private let waveformRequests: [WaveformRequest]
    private var startedWaveforms: [SensorIdentity: Set<WaveformKind>] = [:]
    /// Frames from this time on are stored (the workout's start); none before it begins.
    private nonisolated let waveformGate: WaveformGate
    /// The handlers ``attach(onUpdate:onSensorEvent:)`` starts: they end with their streams
    /// (``streamsEnded()``) or are cancelled and awaited (``stopStreams()``).
    private var streamTasks: [Task<Void, Never>] = []
    /// The ended workout while the store refuses it; the next ``finish(at:settle:)`` saves it.
    private var unsaved: Workout?
    /// The finished workout, once saved.
    public private(set) var finished: Workout?
    /// Samples reached the store behind the live builder's back (a gateway's backfill).
    private var hasLateSamples = false
    /// A workout continued after a crash: finished from the store, whose α1 windows may include
    /// one computed from beats the crash lost.
    private let isRecovered: Bool
    /// The DFA α1 series goes to the store as it comes, not into the builder's memory.
    private var alpha1InStore = false
    /// DFA α1 windows the store refused so far; sent again with the next window and at the finish.
    private var unstoredWindows: [HRVWindow] = []
    /// Events and activities the store refused so far, in order: crash recovery and a rebuild
    /// from the store read them there, so they are written again before the next one and before
    /// the finish, never dropped.
    private var unstoredChanges: [(number: Int, change: JournaledChange)] = []
    /// Whether the workout's row is in the store: its first activity begins (``begin(at:)``)
    /// before the row is written, and a change written first would only be refused (its foreign
    /// key), logged as the store refusing it, so changes wait for the row.
    private var workoutInStore: Bool
    /// Numbers the changes, so a write finished by one caller is not taken off for another.
    private var changesNumbered = 0
    /// The finish under way, which a second caller waits for.
    private var finishing: Task<Workout, any Error>?
    /// The handler of the builder's updates: it ends when the builder finishes.
    private var updateTask: Task<Void, Never>?
    /// The ended workout, saved or not (nil while recording).
    public var ended: Workout? { finished ?? unsaved }
    /// The schedule entry a completed plan marked done.
    public private(set) var completedSchedule: ScheduledPlan?

    /// Builds the recorder: the streamer, the session (new, or continuing `setup.recovering`),
    /// custom zones and the plan's runner. Throws a `PlanError` for a plan the zones in force
    /// cannot judge, and the store's or the session's errors.
    public init(
        _ setup: Setup, adapter: any SensorAdapter, clock: any WallClock,
        registry: WorkoutSessionRegistry = .shared, sampleSink: (@Sendable ([QuantitySample]) -> Void)? = nil,
        logger: Logger
    ) async throws {
        let id = setup.recovering?.workoutID ?? setup.id ?? UUID()
        let streamer = setup.store.map { SampleStreamer(store: $0, workout: id, logger: logger) }
        let gate = WaveformGate()
        var waveformSink: (@Sendable (SensorWaveform) -> Void)?
        if let streamer {
            waveformSink = { @Sendable (frame: SensorWaveform) -> Void in
                if gate.admits(frame) { streamer.submit(waveforms: [frame]) }
            }
        }
        let sink: (@Sendable ([QuantitySample]) -> Void)?
        switch (streamer, sampleSink) {
        case (nil, nil): sink = nil
        case (let streamer?, nil): sink = { streamer.submit($0) }
        case (nil, let other?): sink = other
        case (let streamer?, let other?):
            sink = { samples in
                streamer.submit(samples)
                other(samples)
            }
        }
        let session: WorkoutSession
        var lapStart: Date?
        if let record = setup.recovering, let store = setup.store {
            let collector = try await WorkoutRecovery.rebuild(record, store: store, logger: logger)
            // The next lap starts where the last stored one ended: from the start, it would
            // overlap them and be refused.
            lapStart = collector.events.filter { $0.kind == .lap }.map(\.dateInterval.end).max()
            let builder = LiveWorkoutBuilder(recovering: collector, clock: clock, sampleSink: sink)
            session = try WorkoutSession(
                recovering: builder, configuration: record.configuration, profile: record.profile,
                state: record.state, clock: clock, registry: registry)
            self.configuration = record.configuration
            self.profile = record.profile ?? UserProfile(id: UserProfile.anonymousID)
            self.started = record.start
        } else {
            session = WorkoutSession(
                configuration: setup.configuration, profile: setup.profile, clock: clock, registry: registry,
                sampleSink: sink, id: id)
            self.configuration = setup.configuration
            self.profile = setup.profile
            self.started = clock.now()
        }
        let builder = session.associatedWorkoutBuilder()
        if let zones = setup.zones, setup.recovering == nil {
            try await builder.setCustomZoneConfiguration(zones, for: .heartRate)
        }
        if let plan = setup.plan {
            // Zone alerts are judged against the zones in force now (custom or the profile's).
            var zonesInForce: [QuantityType: ZoneConfiguration] = [:]
            for type in [QuantityType.heartRate, .cyclingPower] {
                if let zones = await builder.zoneConfiguration(for: type) { zonesInForce[type] = zones }
            }
            let problems = PlanValidator.problems(in: plan, context: PlanContext(zones: zonesInForce))
            guard problems.isEmpty else { throw PlanError(problems: problems) }
            runner = PlanRunner(plan: plan, session: session, zones: zonesInForce, logger: logger)
        } else {
            runner = nil
        }
        self.id = id
        self.sensors = setup.sensors
        self.session = session
        self.builder = builder
        self.streamer = streamer
        self.store = setup.store
        self.isRecovered = setup.recovering != nil && setup.store != nil
        self.workoutInStore = isRecovered
        self.planFile = setup.planFile
        self.clock = clock
        self.logger = logger
        self.lapStart = lapStart ?? started
        self.adapter = adapter
        self.waveformRequests = setup.waveforms
        self.waveformGate = gate
        if setup.recovering != nil { gate.open(at: started) }
        let addresses = Set(setup.sensors.map(\.address))
        self.dataSource = LiveDataSource(
            builder: builder, adapters: [adapter], configuration: configuration, clock: clock,
            addresses: setup.onlyTheseSensors ? addresses : nil, logsRefusedFrames: setup.logsRefusedFrames,
            waveformSink: waveformSink, logger: logger)
        if setup.onlyTheseSensors {
            for type in await dataSource.typesToCollect.union([.heartRate, .heartbeatSeries, .activeEnergyBurned]) {
                await dataSource.enableCollection(for: type) { addresses.contains($0.address) }
            }
        }
    }

    /// Starts taking samples: builder updates are stored (events, activities) and passed to
    /// `onUpdate` (every kind but `.collected`, which comes with each batch of samples); with
    /// `onSensorEvent`, sensor events are too (device information is stored).
    public func attach(
        onUpdate: (@Sendable (BuilderUpdate) -> Void)? = nil, onSensorEvent: (@Sendable (SensorEvent) -> Void)? = nil
    ) async {
        // Not `.collected`: a wake-up per batch of samples that no handler here uses.
        let updates = builder.updates(includingCollected: false)
        if store != nil, !alpha1InStore {
            // A long workout's α1 series waits in the store; a recovered one's windows go there first.
            alpha1InStore = true
            await keep(await builder.handOverAlpha1Windows())
        }
        let task = Task {
            for await update in updates {
                // Events, activities and α1 windows go to the store as they happen, for crash recovery.
                switch update {
                case .event(let event): await self.keep(.event(event))
                case .activityBegan(let activity), .activityEnded(let activity): await self.keep(.activity(activity))
                case .heartRateVariability(let window): await keep([window])
                default: break
                }
                onUpdate?(update)
            }
        }
        updateTask = task
        streamTasks.append(task)
        if let onSensorEvent {
            let events = dataSource.sensorEvents()
            streamTasks.append(
                Task {
                    for await event in events {
                        if case .deviceInformation(let sensor, let information) = event {
                            try? await store?.updateSource(
                                sensor, model: information.modelNumber, firmware: information.firmwareRevision)
                        }
                        onSensorEvent(event)
                    }
                })
        }
        if !waveformRequests.isEmpty {
            // A strap that links (again) says which raw signals it offers: the wanted ones start.
            let events = dataSource.sensorEvents()
            streamTasks.append(
                Task { [weak self] in
                    for await event in events {
                        guard case .waveformsAvailable(let sensor, let offered) = event, let self else { continue }
                        await self.startWaveforms(on: sensor, offered: offered)
                    }
                })
        }
        await dataSource.attach()
        if let primary = sensors.first {
            let source = SampleSource(adapter: primary.adapter, address: primary.address, name: primary.name)
            for type in [QuantityType.heartRate, .heartbeatSeries, .activeEnergyBurned] {
                await builder.setPrimarySource(source, for: type)
            }
        }
    }

    /// Starts the wanted raw signals `offered` on `sensor` (one of the recorded sensors), once.
    private func startWaveforms(on sensor: SensorIdentity, offered: Set<WaveformKind>) async {
        // By address: a strap is the same strap through whichever adapter hears it.
        guard finished == nil, unsaved == nil,
            sensors.isEmpty || sensors.contains(where: { $0.address == sensor.address })
        else { return }
        for request in waveformRequests where offered.contains(request.kind) {
            guard startedWaveforms[sensor]?.contains(request.kind) != true else { continue }
            do {
                try await adapter.startWaveform(request, for: sensor)
                startedWaveforms[sensor, default: []].insert(request.kind)
            } catch {
                logger.warning(
                    "raw signal not started", metadata: ["sensor": "\(sensor)", "error": "\(error)"])
            }
        }
    }

    /// Stops the raw signals this recorder started (the strap's battery).
    private func stopWaveforms() async {
        let started = startedWaveforms
        startedWaveforms = [:]
        for (sensor, kinds) in started {
            for kind in kinds.sorted() { try? await adapter.stopWaveform(kind, for: sensor) }
        }
    }

    /// Returns once the handlers ``attach(onUpdate:onSensorEvent:)`` installed have handled every
    /// builder update and sensor event so far: a stepped simulation waits for this after each
    /// second, so what they record and print is the same at any pace.
    public nonisolated func waitUntilHandlersCaughtUp() async {
        await builder.waitUntilUpdatesConsumed()
        await dataSource.waitUntilSensorEventsConsumed()
    }

    /// Begins recording a new workout at `date` and writes the recovery journal; returns the
    /// plan's first events. A recovered workout is already under way: nothing to begin.
    public func begin(at date: Date) async throws -> [PlanEvent] {
        started = date
        lapStart = date
        waveformGate.open(at: date)
        try await session.prepare()
        try await session.startActivity(at: started)
        try await session.beginNewActivity(configuration: configuration, at: started)
        let zones = await builder.zoneConfiguration(for: .heartRate)
        try await store?.beginWorkout(
            ActiveSessionRecord(
                workoutID: id, configuration: configuration, profile: profile, start: started, state: .running,
                customZones: zones.map { [$0] } ?? [],
                primarySources: Dictionary(
                    uniqueKeysWithValues: await builder.primarySources.map { ($0.key.rawValue, $0.value) }),
                sensors: sensors.map { SampleSource(adapter: $0.adapter, address: $0.address, name: $0.name) }))
        workoutInStore = true
        if let activity = await builder.currentActivity { try? await store?.upsert(activity: activity, workout: id) }
        // The activity's begin, and anything else that came while the row was being written.
        await storeWaitingChanges()
        await keep([HRVWindow]())
        return await runner?.start(at: started) ?? []
    }

    /// The state the journal keeps (running or paused), so a restart continues where it was.
    private func journal() async {
        guard let store, var record = try? await store.activeSessions().first(where: { $0.workoutID == id }) else {
            return
        }
        record.state = await session.state
        try? await store.updateJournal(record)
    }

    public func pause(at date: Date) async throws(WorkoutSessionError) {
        try await session.pause(at: date)
        await journal()
    }

    public func resume(at date: Date) async throws(WorkoutSessionError) {
        try await session.resume(at: date)
        await journal()
    }

    /// Marks a lap from the previous lap (or the start) to `date`.
    public func lap(at date: Date) async throws(WorkoutSessionError) {
        // A plan's lap may have ended since the last one taken here: laps never overlap.
        let lastLapEnd = await builder.snapshot.events.filter { $0.kind == .lap }.map(\.dateInterval.end).max()
        let start = min(max(lapStart, lastLapEnd ?? lapStart), date)
        try await session.addEvent(WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: start, end: date)))
        lapStart = date
    }

    /// Ends the current activity and begins another (a triathlon's next leg).
    public func newActivity(_ configuration: WorkoutConfiguration, at date: Date) async throws(WorkoutSessionError) {
        try await session.endCurrentActivity(at: date)
        try await session.beginNewActivity(configuration: configuration, at: date)
    }

    // MARK: The plan

    /// Whether a structured workout runs.
    public nonisolated var runsPlan: Bool { runner != nil }

    /// Judges the plan at `date` (call it at least every workout second): its events.
    public func tickPlan(at date: Date) async -> [PlanEvent] { await runner?.tick(at: date) ?? [] }

    /// The plan's "next": ends the current step (open goals end only this way).
    public func nextStep(at date: Date) async -> [PlanEvent] { await runner?.next(at: date) ?? [] }

    /// The plan's current step, progress and alert; nil without a plan.
    public func planStatus(at date: Date) async -> PlanStatus? { await runner?.status(at: date) }

    /// Whether the plan has completed.
    public var planIsComplete: Bool { get async { await runner?.isComplete ?? false } }

    /// When the plan's last step ended.
    public var planCompletionDate: Date? { get async { await runner?.completionDate } }

    // MARK: Finishing

    /// How the data source stops before the session ends.
    public enum Settle: Sendable {
        /// Stop taking samples at once (the daemon: the strap stays connected for others).
        case detach
        /// Let the adapter deliver every frame up to the end (`deliver` is told the end date) and
        /// end its stream, then take them all: nothing an adapter sent before the end is lost.
        case drain(deliver: @Sendable (Date) async -> Void)
    }

    /// Ends the workout at `date` (or at a completed plan's end, if earlier), finishes it and saves
    /// it. When the store refuses (a full disk) the workout has ended but is not saved: this throws
    /// the ``StoreError`` and a later call saves it.
    /// Two callers at once (a client's stop and a plan's end) share one finish: the second
    /// would end an ended session, or write the refused events a second time over the first.
    @discardableResult
    public func finish(at date: Date, settle: Settle = .detach) async throws -> Workout {
        if let finished { return finished }
        if let finishing { return try await finishing.value }
        let attempt = Task { try await self.finishOnce(at: date, settle: settle) }
        finishing = attempt
        defer { finishing = nil }
        return try await attempt.value
    }

    private func finishOnce(at date: Date, settle: Settle) async throws -> Workout {
        if let finished { return finished }
        let workout: Workout
        if let unsaved {
            workout = unsaved
        } else {
            // A completed plan ends the workout at its last step's end, not at the tick that noticed it.
            let stop = min(await runner?.completionDate ?? date, date)
            switch settle {
            case .detach: await dataSource.detach()
            case .drain(let deliver):
                await deliver(stop)
                await dataSource.drain()
            }
            try await session.end(at: stop)
            workout = try await builder.finishWorkout()
            unsaved = workout
            await stopWaveforms()
        }
        try await streamer?.finish()
        // Every event and activity is in the store before it is read back or the workout saved.
        await updateTask?.value
        try await storeUnstoredChanges()
        let fromStore = hasLateSamples || isRecovered
        var saved = fromStore ? try await recomputed(workout) : workout
        if alpha1InStore, !fromStore { saved = try await withStoredAlpha1Series(saved) }
        try await store?.finish(saved)
        unsaved = nil
        finished = saved
        if let planFile, let store, await runner?.isComplete == true {
            completedSchedule = try? await store.completeScheduledPlan(
                plan: planFile, workout: saved.id, at: await runner?.completionDate ?? saved.end)
        }
        return saved
    }

    /// Stores DFA α1 windows, with any the store refused before; keeps them while it refuses.
    private func keep(_ windows: [HRVWindow]) async {
        guard let store else { return }
        unstoredWindows += windows
        guard !unstoredWindows.isEmpty, workoutInStore else { return }
        do {
            try await store.upsert(alpha1Windows: unstoredWindows, workout: id)
            unstoredWindows = []
        } catch {
            logger.warning(
                "DFA α1 windows kept in memory while the store refuses them",
                metadata: ["workout": "\(id)", "windows": "\(unstoredWindows.count)", "error": "\(error)"])
        }
    }

    /// Stores an event or activity after any the store refused before; keeps them, in order,
    /// while it refuses and until the workout's row is written.
    private func keep(_ change: JournaledChange) async {
        guard store != nil else { return }
        changesNumbered += 1
        unstoredChanges.append((changesNumbered, change))
        await storeWaitingChanges()
    }

    /// Writes the changes waiting, once the workout's row is in the store; logs a refusal.
    private func storeWaitingChanges() async {
        guard workoutInStore, !unstoredChanges.isEmpty else { return }
        do {
            try await storeUnstoredChanges()
        } catch {
            logger.warning(
                "workout events kept in memory while the store refuses them",
                metadata: ["workout": "\(id)", "waiting": "\(unstoredChanges.count)", "error": "\(error)"])
        }
    }

    /// Writes the events and activities the store refused, oldest first. Two callers at once (two
    /// finishes) may write one twice, which stores it once (events and activities are keyed).
    private func storeUnstoredChanges() async throws(StoreError) {
        guard let store else { return }
        while let (number, change) = unstoredChanges.first {
            switch change {
            case .event(let event): try await store.append(event: event, workout: id)
            case .activity(let activity): try await store.upsert(activity: activity, workout: id)
            }
            unstoredChanges.removeAll { $0.number == number }
        }
    }

    /// `workout` with its DFA α1 series and thresholds from the store (the builder did not keep them).
    private func withStoredAlpha1Series(_ workout: Workout) async throws -> Workout {
        guard let store else { return workout }
        // The update handler ends with the builder: every window it saw is stored or pending.
        await updateTask?.value
        if !unstoredWindows.isEmpty {
            try await store.upsert(alpha1Windows: unstoredWindows, workout: id)
            unstoredWindows = []
        }
        let windows = try await store.alpha1Windows(of: id)
        var complete = workout
        complete.dfaAlpha1 = windows
        complete.hrvThresholds = windows.isEmpty ? nil : HRVThresholds.estimate(windows)
        return complete
    }

    /// Stores late samples with this workout (a gateway's backfill after a broker outage): the
    /// live builder has moved on, so the finished workout's figures are recomputed from the store.
    public func storeLate(_ samples: [QuantitySample]) {
        guard let streamer, !samples.isEmpty else { return }
        streamer.submit(samples)
        hasLateSamples = true
    }

    /// `live`'s figures recomputed from every stored sample (after late samples, or for a workout
    /// recovered after a crash), in order, with the journaled zones
    /// and primary sources, the stored events and activities (as crash recovery does): so the
    /// summary, `workouts show` and every export agree with the stored samples.
    private func recomputed(_ live: Workout) async throws -> Workout {
        guard let store, let record = try await store.activeSessions().first(where: { $0.workoutID == id }) else {
            return live
        }
        var collector = try await WorkoutRecovery.rebuild(record, store: store, logger: logger)
        try collector.add(metadata: live.metadata)
        try collector.end(at: live.end)
        let workout = try collector.finish()
        logger.info(
            "figures recomputed from the store",
            metadata: [
                "workout": "\(id)", "reason": "\(hasLateSamples ? "late samples stored" : "recovered after a crash")",
                "heartRateSamples":
                    "\(live.statistics[.heartRate]?.sampleCount ?? 0) → \(workout.statistics[.heartRate]?.sampleCount ?? 0)",
            ])
        return workout
    }

    /// Waits until the update and sensor streams have delivered everything (after ``finish(at:settle:)``).
    public func streamsEnded() async {
        for task in streamTasks { await task.value }
    }

    /// Stops following the update and sensor streams, and returns once their handlers have ended.
    public func stopStreams() async {
        let running = streamTasks
        streamTasks = []
        for task in running { task.cancel() }
        for task in running { await task.value }
    }

    /// Moves the samples waiting in memory to the spill file (the store refuses and the process
    /// is ending), so the next start stores them.
    public nonisolated func spillWaiting() async throws { try await streamer?.spillWaiting() }
}

/// From when a recorder keeps raw-signal frames: its workout's start (nothing before it begins).
final class WaveformGate: Sendable {
    private let since = Mutex<Date?>(nil)

    func open(at date: Date) { since.withLock { $0 = date } }

    /// Whether `frame` ends at or after the start.
    func admits(_ frame: SensorWaveform) -> Bool {
        guard let since = since.withLock({ $0 }) else { return false }
        return frame.time(ofSample: max(frame.sampleCount - 1, 0)) >= since
    }
}

/// An event or activity of the workout on its way to the store.
enum JournaledChange: Sendable {
    case event(WorkoutEvent)
    case activity(WorkoutActivity)
}
