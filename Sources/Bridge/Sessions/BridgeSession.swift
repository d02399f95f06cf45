public import Foundation
import Logging
import Samples
public import Sensors
import Synchronization
public import Wire
import WorkoutPlans
import WorkoutRecording
public import WorkoutStore
public import Workouts

/// One live session of the daemon: a `WorkoutRecorder` taking only this session's sensors, whose
/// samples, events, zone changes, α1 windows, plan events and state this publishes on the live hub.
public actor BridgeSession: FiguresSource {
    public nonisolated let id: UUID
    /// The athlete's profile.
    public nonisolated let profile: UserProfile
    public nonisolated let sensors: [SensorIdentity]
    /// Whether it is a guest session (never stored).
    public nonisolated let guest: Bool
    public nonisolated let configuration: WorkoutConfiguration
    /// When recording began.
    public nonisolated let started: Date
    private let recorder: WorkoutRecorder
    private let clock: any WallClock
    private let hub: LiveHub
    private let logger: Logger
    /// Publishes the figures in rounds with every other session's, and the state changes.
    private let figuresPublisher: FiguresPublisher
    /// Publishes the state on every session event; cancelled and awaited by ``stop()``.
    private var stateTask: Task<Void, Never>?
    private var planTask: Task<Void, Never>?
    private let whenPlanCompletes: (@Sendable (UUID) async -> Void)?
    /// Where each strap's last reading came from (`via`), for saying why HRV is absent.
    private let sensorManager: SensorManager?
    private let statusChanges: ChangeSignal?
    /// Whether the last figures published showed the store in trouble: its recovery is news too.
    private nonisolated let storeTroubleShown = Mutex(false)
    private var session: WorkoutSession { recorder.session }
    private var builder: LiveWorkoutBuilder { recorder.builder }
    private var streamer: SampleStreamer? { recorder.streamer }

    init(
        recorder: WorkoutRecorder, guest: Bool, started: Date, figures: FiguresPublisher, clock: any WallClock,
        hub: LiveHub, logger: Logger, sensorManager: SensorManager? = nil, statusChanges: ChangeSignal? = nil,
        whenPlanCompletes: (@Sendable (UUID) async -> Void)? = nil
    ) {
        self.sensorManager = sensorManager
        self.statusChanges = statusChanges
        self.id = recorder.id
        self.profile = recorder.profile
        self.sensors = recorder.sensors
        self.guest = guest
        self.configuration = recorder.configuration
        self.started = started
        self.recorder = recorder
        self.figuresPublisher = figures
        self.clock = clock
        self.hub = hub
        self.logger = logger
        self.whenPlanCompletes = whenPlanCompletes
    }

    /// The sample sink of a session: the live hub; samples also put the session's figures in the
    /// next round (``FiguresPublisher``).
    static func sink(id: UUID, hub: LiveHub, figures: FiguresPublisher) -> @Sendable ([QuantitySample]) -> Void {
        { samples in
            for sample in samples {
                let address = sample.source.address
                hub.publish(kind: .sample, session: id, sensor: address) {
                    SampleJSON.line(sample, kind: .sample, session: id, sensor: address)
                }
            }
            figures.sampled(id)
        }
    }

    /// Late samples (a gateway's backfill): stored with this workout; the live builder moved on,
    /// so the finished workout's figures are recomputed from the store.
    func backfill(_ samples: [QuantitySample]) async {
        await recorder.storeLate(samples)
    }

    /// Wires the recorder's updates to the hub, then publishes the state.
    func attach() async {
        let workoutID = id
        let hub = hub
        await recorder.attach(onUpdate: { update in
            switch update {
            case .event(let event):
                hub.publish(LiveMessage(kind: .event, session: workoutID, payload: WorkoutJSON.Event(event)))
            case .zone(let zone):
                hub.publish(LiveMessage(kind: .zone, session: workoutID, payload: WorkoutJSON.ZoneChange(zone)))
            case .heartRateVariability(let window):
                hub.publish(LiveMessage(kind: .hrv, session: workoutID, payload: WorkoutJSON.HRVWindow(window)))
            case .activityBegan, .activityEnded, .collected:
                break
            }
        })
        figuresPublisher.add(self)
        let events = session.events()
        stateTask = Task { [weak self] in
            for await _ in events { await self?.publishState() }
        }
    }

    deinit {
        // A session dropped without stop(): its tasks hold it weakly and end here.
        stateTask?.cancel()
        planTask?.cancel()
        figuresPublisher.forget(id)
    }

    /// Publishes the session's state to the live hub.
    func publishState() async {
        figuresPublisher.publishState(.session(await snapshot()), of: id)
    }

    /// Whether a round works out this session's figures: a reader takes them, or the store's
    /// trouble (or its end) is news.
    nonisolated var figuresWanted: Bool {
        hub.wantsFigures(of: id) || Self.storeInTrouble(storeHealth) || storeTroubleShown.withLock { $0 }
    }

    /// This round's figures, for the readers that take them, with the count of state changes
    /// published before they were worked out; while the store is in trouble (and once it is out
    /// of it), none: the state goes out as news, to every reader.
    func figures() async -> (figures: LiveMessage, changes: Int)? {
        let trouble = Self.storeInTrouble(storeHealth)
        let shownBefore = storeTroubleShown.withLock { shown in
            defer { shown = trouble }
            return shown
        }
        let changes = figuresPublisher.changeCount(of: id)
        if trouble || shownBefore {
            statusChanges?.signal()
            // As news, unless a change (the end) went out while it was worked out.
            figuresPublisher.publishState(.session(await snapshot()), of: id, ifNoChangeSince: changes)
            return nil
        }
        guard hub.wantsFigures(of: id) else { return nil }
        return (.session(await snapshot()), changes)
    }

    /// Whether the store refuses this session's samples or lost some: what the status line names.
    private static func storeInTrouble(_ health: SampleStreamer.Health?) -> Bool {
        health.map { StoreHealthJSON.problem($0) != nil } ?? false
    }

    /// The plan's "next": ends the current step (open goals end only this way).
    public func nextStep() async throws(SessionError) {
        guard recorder.runsPlan else { throw .notAllowed("this session runs no plan") }
        publish(await recorder.nextStep(at: clock.now()))
        await publishState()
    }

    private func publish(_ events: [PlanEvent]) {
        for event in events { hub.publish(LiveMessage(kind: .plan, session: id, payload: PlanJSON.Event(event))) }
    }

    private func startPlan() {
        guard recorder.runsPlan else { return }
        let clock = clock
        let id = id
        let recorder = recorder
        planTask = Task { [weak self] in
            // Judged every workout second, so steps end on time whatever the clock's speed.
            while !Task.isCancelled {
                do {
                    try await clock.sleep(until: clock.now().addingTimeInterval(1))
                } catch {
                    return
                }
                guard let self else { return }
                let events = await recorder.tickPlan(at: clock.now())
                await self.publish(events)
                if !events.isEmpty { await self.publishState() }
                if await recorder.planIsComplete {
                    await self.whenPlanCompletes?(id)
                    return
                }
            }
        }
    }

    /// Starts recording now and writes the recovery journal.
    func begin() async throws {
        publish(try await recorder.begin(at: started))
        startPlan()
        await publishState()
    }

    public func pause() async throws(WorkoutSessionError) {
        try await recorder.pause(at: clock.now())
        await publishState()
    }

    public func resume() async throws(WorkoutSessionError) {
        try await recorder.resume(at: clock.now())
        await publishState()
    }

    /// Marks a lap from the previous lap (or the start) to now.
    public func lap() async throws(WorkoutSessionError) {
        try await recorder.lap(at: clock.now())
        await publishState()
    }

    /// Ends the current activity and begins another (a triathlon's next leg).
    public func newActivity(_ activity: WorkoutActivityType, location: WorkoutLocation?)
        async throws(WorkoutSessionError)
    {
        try await recorder.newActivity(
            WorkoutConfiguration(activityType: activity, location: location ?? configuration.location), at: clock.now())
        await publishState()
    }

    /// Ends the session, finishes the workout and saves it (unless a guest's).
    ///
    /// When the store refuses (a full disk) the session has ended but its workout is not saved:
    /// this throws the ``StoreError`` and a later call (once space is freed) saves it.
    @discardableResult
    public func stop() async throws -> Workout {
        if let finished = await recorder.finished { return finished }
        planTask?.cancel()
        let workout = try await recorder.finish(at: clock.now(), settle: .detach)
        await recorder.stopStreams()
        figuresPublisher.remove(id)
        if let stateTask {
            stateTask.cancel()
            await stateTask.value
        }
        await publishState()
        return workout
    }

    /// The session as the API shows it.
    public func snapshot() async -> SessionJSON {
        let now = clock.now()
        let finished = await recorder.finished
        let state = finished == nil ? await session.state : .ended
        var snapshot = SessionJSON(
            id: id, athlete: profile.id, guest: guest, state: state.rawValue,
            activity: configuration.activityType.rawValue, location: configuration.location.rawValue,
            sensors: sensors.map(\.address), start: started, elapsedTime: 0)
        if let storage = streamer?.health, !storage.isCaughtUp || storage.lastError != nil || storage.lost > 0 {
            snapshot.store = StoreHealthJSON(storage)
        }
        if let ended = await recorder.ended {
            snapshot.elapsedTime = ended.elapsedTime
            snapshot.summary = WorkoutJSON.Summary(ended)
            if finished == nil { snapshot.saved = false }
            return snapshot
        }
        let figures = await builder.liveFigures(at: now)
        snapshot.elapsedTime = figures.elapsedTime
        var zone: WorkoutJSON.Zone?
        if let current = figures.statistics[.heartRate]?.mostRecent, let configuration = figures.heartRateZones {
            zone = WorkoutJSON.Zone(configuration.zones[configuration.position(of: current)])
        }
        snapshot.live = SessionJSON.Live(
            statistics: WorkoutJSON.Statistics.byType(figures.statistics),
            zones: WorkoutJSON.heartRateZones(figures.zoneGroups), zone: zone,
            rmssd: figures.heartRateVariability.rmssd,
            alpha1: figures.latestAlpha1.map(WorkoutJSON.HRVWindow.init),
            activeEnergy: figures.activeEnergy.kilocalories, laps: figures.laps,
            plan: recorder.runsPlan ? (await recorder.planStatus(at: now)).map(PlanJSON.Status.init) : nil,
            hrvUnavailable: hrvUnavailable())
        return snapshot
    }

    /// Why no HRV comes now: every strap is heard through its broadcast (no RR intervals).
    private func hrvUnavailable() -> String? {
        guard let sensorManager, !sensors.isEmpty else { return nil }
        for sensor in sensors where !sensorManager.isHeardByBroadcast(sensor.address) { return nil }
        return "heart rate from advertisements (no link) carries no RR intervals: no HRV until a link frees"
    }

    /// The address of the strap whose heart rate the session's figures follow: its primary
    /// heart-rate source once a sample came, else its first sensor.
    public func primaryHeartRateStrap() async -> String? {
        await builder.primarySources[.heartRate]?.address ?? sensors.first?.address
    }

    /// Whether the session has ended, saved or not (a store that refused the save).
    public var hasEnded: Bool {
        get async { await recorder.ended != nil }
    }

    /// The session's current state.
    public var state: WorkoutSessionState {
        get async { await recorder.finished == nil ? await session.state : .ended }
    }

    /// Moves the samples waiting in memory to the spill file (shutdown with the store refusing),
    /// so the next start stores them.
    func spillWaiting() async {
        do {
            try await recorder.spillWaiting()
        } catch {
            logger.critical("samples lost at shutdown", metadata: ["session": "\(id)", "error": "\(error)"])
        }
    }

    /// What the session's streamer holds unstored (nil for a guest's session).
    /// Nonisolated: the daemon's status line sums it over every session, and hopping onto each
    /// session's actor for it cost more than the figures themselves.
    public nonisolated var storeHealth: SampleStreamer.Health? { recorder.streamer?.health }
}
