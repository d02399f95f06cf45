public import Foundation
import Logging
import Samples
public import Sensors
import Synchronization
import WorkoutPlans
public import WorkoutStore
public import Workouts

/// One live session of the daemon: a workout session, its builder and a data source that takes
/// only this session's sensors; samples stream to the live hub and (unless a guest's) to the store,
/// with the recovery journal kept up to date.
public actor BridgeSession {
    /// The identifier.
    public nonisolated let id: UUID
    /// The athlete's profile.
    public nonisolated let profile: UserProfile
    public nonisolated let sensors: [SensorIdentity]
    /// Whether it is a guest session (never stored).
    public nonisolated let guest: Bool
    /// The daemon's configuration.
    public nonisolated let configuration: WorkoutConfiguration
    /// When recording began.
    public nonisolated let started: Date
    private let session: WorkoutSession
    private let builder: LiveWorkoutBuilder
    private let dataSource: LiveDataSource
    private let store: WorkoutStore?
    private let streamer: SampleStreamer?
    private let clock: any WallClock
    private let hub: LiveHub
    private let logger: Logger
    private var lapStart: Date
    private var updatesTask: Task<Void, Never>?
    private var stateTask: Task<Void, Never>?
    /// The finished workout, once stopped and saved.
    public private(set) var finished: Workout?
    /// The ended workout while the store refuses it; the next ``stop()`` saves it.
    private var unsaved: Workout?
    /// The structured workout being run, when there is one.
    private var runner: PlanRunner?
    private var planTask: Task<Void, Never>?
    private var whenPlanCompletes: (@Sendable (UUID) async -> Void)?

    struct Parts {
        var session: WorkoutSession
        var builder: LiveWorkoutBuilder
        var streamer: SampleStreamer?
        var started: Date
        var trigger: SnapshotTrigger
    }

    private let trigger: SnapshotTrigger

    init(
        id: UUID, profile: UserProfile, sensors: [SensorIdentity], guest: Bool, configuration: WorkoutConfiguration,
        parts: Parts, adapter: any SensorAdapter, store: WorkoutStore?, clock: any WallClock, hub: LiveHub,
        logger: Logger
    ) {
        self.id = id
        self.profile = profile
        self.sensors = sensors
        self.guest = guest
        self.configuration = configuration
        self.session = parts.session
        self.builder = parts.builder
        self.streamer = parts.streamer
        self.started = parts.started
        self.trigger = parts.trigger
        self.store = store
        self.clock = clock
        self.hub = hub
        self.logger = logger
        self.lapStart = parts.started
        self.dataSource = LiveDataSource(
            adapters: [adapter], configuration: configuration, clock: clock, logsRefusedFrames: false, logger: logger)
    }

    /// The sample sink of a session: the live hub and the store's streamer; samples also refresh
    /// the session's figures on the stream, at most once a second.
    static func sink(id: UUID, hub: LiveHub, streamer: SampleStreamer?, trigger: SnapshotTrigger)
        -> @Sendable ([QuantitySample]) -> Void
    {
        { samples in
            streamer?.submit(samples)
            for sample in samples {
                let address = sample.source.address
                hub.publish(
                    LiveMessage(
                        kind: "sample", session: id, sensor: address,
                        json: SampleJSON.line(sample, kind: "sample", session: id, sensor: address)))
            }
            trigger.poke()
        }
    }

    /// Wires the data source (only this session's sensors) and the update streams, then publishes the state.
    func attach() async {
        let addresses = Set(sensors.map(\.address))
        for type in await dataSource.typesToCollect.union([.heartRate, .heartbeatSeries, .activeEnergyBurned]) {
            await dataSource.enableCollection(for: type) { addresses.contains($0.address) }
        }
        await dataSource.attach(to: builder)
        if let primary = sensors.first {
            let source = SampleSource(adapter: primary.adapter, address: primary.address, name: primary.name)
            for type in [QuantityType.heartRate, .heartbeatSeries, .activeEnergyBurned] {
                await builder.setPrimarySource(source, for: type)
            }
        }
        let updates = builder.updates()
        let workoutID = id
        let store = store
        let hub = hub
        updatesTask = Task {
            for await update in updates {
                switch update {
                case .event(let event):
                    try? store?.append(event: event, workout: workoutID)
                    hub.publish(LiveMessage(kind: "event", session: workoutID, payload: WorkoutJSON.Event(event)))
                case .zone(let zone):
                    hub.publish(LiveMessage(kind: "zone", session: workoutID, payload: WorkoutJSON.ZoneChange(zone)))
                case .activityBegan(let activity), .activityEnded(let activity):
                    try? store?.upsert(activity: activity, workout: workoutID)
                case .heartRateVariability(let window):
                    hub.publish(LiveMessage(kind: "hrv", session: workoutID, payload: WorkoutJSON.HRVWindow(window)))
                case .collected:
                    break
                }
            }
        }
        trigger.attach(self)
        let events = session.events()
        stateTask = Task { [weak self] in
            for await _ in events { await self?.publishState() }
        }
    }

    /// Publishes the session's state to the live hub.
    func publishState() async {
        hub.publish(LiveMessage(kind: "session", session: id, payload: await snapshot()))
    }

    /// Runs `plan` once the session begins: its steps become segments, block iterations laps,
    /// alerts are judged every workout second, and `whenComplete` is called when the last step ends.
    func run(
        plan: WorkoutPlan, zones: [QuantityType: ZoneConfiguration],
        whenComplete: @escaping @Sendable (UUID) async -> Void
    ) {
        runner = PlanRunner(plan: plan, session: session, zones: zones)
        whenPlanCompletes = whenComplete
    }

    /// The plan's "next": ends the current step (open goals end only this way).
    public func nextStep() async throws(SessionError) {
        guard let runner else { throw .notAllowed("this session runs no plan") }
        publish(await runner.next(at: clock.now()))
        await publishState()
    }

    private func publish(_ events: [PlanEvent]) {
        for event in events { hub.publish(LiveMessage(kind: "plan", session: id, payload: PlanJSON.Event(event))) }
    }

    private func startPlan() async {
        guard let runner else { return }
        publish(await runner.start(at: started))
        let clock = clock
        let id = id
        planTask = Task { [weak self] in
            // Judged every workout second, so steps end on time whatever the clock's speed.
            while !Task.isCancelled {
                do {
                    try await clock.sleep(until: clock.now().addingTimeInterval(1))
                } catch {
                    return
                }
                guard let self else { return }
                let events = await runner.tick(at: clock.now())
                await self.publish(events)
                if !events.isEmpty { await self.publishState() }
                if await runner.isComplete {
                    await self.whenPlanCompletes?(id)
                    return
                }
            }
        }
    }

    /// Starts recording now and writes the recovery journal.
    func begin() async throws {
        try await session.prepare()
        try await session.startActivity(at: started)
        try await session.beginNewActivity(configuration: configuration, at: started)
        let zones = await builder.zoneConfiguration(for: .heartRate)
        try store?.beginWorkout(
            ActiveSessionRecord(
                workoutID: id, configuration: configuration, profile: profile, start: started, state: .running,
                customZones: zones.map { [$0] } ?? [],
                primarySources: Dictionary(
                    uniqueKeysWithValues: await builder.primarySources.map { ($0.key.rawValue, $0.value) })))
        if let activity = await builder.currentActivity { try? store?.upsert(activity: activity, workout: id) }
        await startPlan()
        await publishState()
    }

    /// The state the journal keeps (running or paused), so a restart continues where it was.
    private func journal() async {
        guard let store, var record = try? store.activeSessions().first(where: { $0.workoutID == id }) else { return }
        record.state = await session.state
        try? store.updateJournal(record)
    }

    /// Pauses recording.
    public func pause() async throws(WorkoutSessionError) {
        try await session.pause(at: clock.now())
        await journal()
        await publishState()
    }

    /// Resumes recording.
    public func resume() async throws(WorkoutSessionError) {
        try await session.resume(at: clock.now())
        await journal()
        await publishState()
    }

    /// Marks a lap from the previous lap (or the start) to now.
    public func lap() async throws(WorkoutSessionError) {
        let now = clock.now()
        try await session.addEvent(WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: lapStart, end: now)))
        lapStart = now
        await publishState()
    }

    /// Ends the current activity and begins another (a triathlon's next leg).
    public func newActivity(_ activity: WorkoutActivityType, location: WorkoutLocation?)
        async throws(WorkoutSessionError)
    {
        let now = clock.now()
        try await session.endCurrentActivity(at: now)
        try await session.beginNewActivity(
            configuration: WorkoutConfiguration(activityType: activity, location: location ?? configuration.location),
            at: now)
        await publishState()
    }

    /// Ends the session, finishes the workout and saves it (unless a guest's).
    ///
    /// When the store refuses (a full disk) the session has ended but its workout is not saved:
    /// this throws the ``StoreError`` and a later call (once space is freed) saves it.
    @discardableResult
    public func stop() async throws -> Workout {
        if let finished { return finished }
        let workout: Workout
        if let unsaved {
            workout = unsaved
        } else {
            planTask?.cancel()
            // A completed plan ends the workout at its last step's end, not at the tick that noticed it.
            let now = min(await runner?.completionDate ?? clock.now(), clock.now())
            await dataSource.detach()
            try await session.end(at: now)
            workout = try await builder.finishWorkout()
            unsaved = workout
        }
        try streamer?.finish()
        try store?.finish(workout)
        unsaved = nil
        finished = workout
        updatesTask?.cancel()
        stateTask?.cancel()
        trigger.detach()
        await publishState()
        return workout
    }

    /// The session as the API shows it.
    public func snapshot() async -> SessionJSON {
        let now = clock.now()
        let state = finished == nil ? await session.state : .ended
        var snapshot = SessionJSON(
            id: id, athlete: profile.id, guest: guest, state: state.rawValue,
            activity: configuration.activityType.rawValue, location: configuration.location.rawValue,
            sensors: sensors.map(\.address), start: started, elapsedTime: 0)
        if let storage = streamer?.health, !storage.isCaughtUp || storage.lastError != nil || storage.lost > 0 {
            snapshot.store = StoreHealthJSON(storage)
        }
        if let ended = finished ?? unsaved {
            snapshot.elapsedTime = ended.elapsedTime
            snapshot.summary = WorkoutJSON.Summary(ended)
            if finished == nil { snapshot.saved = false }
            return snapshot
        }
        snapshot.elapsedTime = await builder.elapsedTime(at: now)
        let statistics = await builder.allStatistics
        var zone: WorkoutJSON.Zone?
        if let current = statistics[.heartRate]?.mostRecent,
            let configuration = await builder.zoneConfiguration(for: .heartRate)
        {
            zone = WorkoutJSON.Zone(configuration.zones[configuration.position(of: current)])
        }
        snapshot.live = SessionJSON.Live(
            statistics: WorkoutJSON.Statistics.byType(statistics),
            zones: WorkoutJSON.heartRateZones(await builder.zoneGroups), zone: zone,
            rmssd: await builder.heartRateVariability.rmssd,
            alpha1: await builder.latestAlpha1.map(WorkoutJSON.HRVWindow.init),
            activeEnergy: (await builder.activeEnergy).kilocalories,
            laps: await builder.events.filter { $0.kind == .lap }.count,
            plan: (await runner?.status(at: now)).map(PlanJSON.Status.init))
        return snapshot
    }

    /// The session's current state.
    public var state: WorkoutSessionState {
        get async { finished == nil ? await session.state : .ended }
    }

    /// Moves the samples waiting in memory to the spill file (shutdown with the store refusing),
    /// so the next start stores them.
    func spillWaiting() {
        do {
            try streamer?.spillWaiting()
        } catch {
            logger.critical("samples lost at shutdown", metadata: ["session": "\(id)", "error": "\(error)"])
        }
    }

    /// What the session's streamer holds unstored (nil for a guest's session).
    public var storeHealth: SampleStreamer.Health? { streamer?.health }
}

/// Publishes a session's figures when samples arrive, at most once a second (the elapsed time,
/// averages, zone and energy a dashboard shows), without any timer.
final class SnapshotTrigger: Sendable {
    private let state = Mutex<(session: BridgeSession?, last: ContinuousClock.Instant?)>((nil, nil))

    init() {}

    func attach(_ session: BridgeSession) { state.withLock { $0.session = session } }

    /// Breaks the session → builder → sink → trigger cycle once the session ends.
    func detach() { state.withLock { $0 = (nil, nil) } }

    func poke() {
        let now = ContinuousClock.now
        let due = state.withLock { state -> BridgeSession? in
            guard let session = state.session, state.last.map({ now - $0 >= .seconds(1) }) ?? true else { return nil }
            state.last = now
            return session
        }
        if let due { Task { await due.publishState() } }
    }
}
