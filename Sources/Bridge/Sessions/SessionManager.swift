import Foundation
public import Logging
import Samples
public import Sensors
import Synchronization
public import Wire
import WorkoutPlans
import WorkoutRecording
public import WorkoutStore
public import Workouts

/// Creates, drives and ends the daemon's sessions: several at once, each bound to its own sensors
/// (one athlete per strap), guests kept out of the store, unfinished sessions recovered at start.
public actor SessionManager {
    private let configuration: BridgeConfiguration
    private let sensors: SensorManager
    private let store: WorkoutStore?
    private let clock: any WallClock
    private let hub: LiveHub
    private let logger: Logger
    private let registry = WorkoutSessionRegistry()
    /// Publishes every session's figures in rounds; run by ``SessionService``.
    nonisolated let figures: FiguresPublisher
    /// Guest sessions, known before their first live message (readers outside the actor ask).
    private nonisolated let guestIDs = Mutex<Set<UUID>>([])
    private var sessions: [UUID: BridgeSession] = [:]
    /// Sessions being created: journaled before they join ``sessions``, so recovery, which may
    /// run meanwhile, must not take them for ones a crash left.
    private var starting: Set<UUID> = []
    /// Ended sessions, kept so a client can read how they ended (the newest ``endedLimit``; the
    /// store keeps the workouts).
    private var ended: [UUID: BridgeSession] = [:]
    private var endedOrder: [UUID] = []
    /// Sessions that ended but whose workout the store has not saved yet (a full disk): still
    /// listed, so a stop saves them, but holding neither their straps nor their athlete.
    private var unsaved: Set<UUID> = []
    /// Each unsaved session's save, tried again by itself (``retrySaving(_:)``) until it is saved:
    /// nobody may be there to stop a class member's session again.
    private var saveRetries: [UUID: Task<Void, Never>] = [:]
    /// The first wait before saving an unsaved session again; it doubles up to ``longestSaveRetry``.
    /// Set by ``stopAll()``: no save is tried again after that.
    private var shuttingDown = false
    static let firstSaveRetry: TimeInterval = 10
    static let longestSaveRetry: TimeInterval = 300
    /// Sensors and athletes of sessions being created or recovered: reserved before the first
    /// suspension, so two requests for one strap, or a request and a recovery, cannot both pass
    /// the checks. A sensor maps to what holds it (``beingCreated``, ``beingForgotten``, or the
    /// recovered session's id).
    private var reservedSensors: [String: String] = [:]
    private var reservedAthletes: Set<String> = []
    /// Tests' seam: awaited while a recovered session holds its reservations, before it is built.
    private var whileRecovering: (@Sendable (UUID) async -> Void)?

    /// Sets the tests' seam ``whileRecovering``.
    func pauseRecovery(with hook: (@Sendable (UUID) async -> Void)?) { whileRecovering = hook }

    /// Signalled when the set of running sessions or a session's store health changed: what
    /// systemd's status line says (it does not follow each session's figures).
    nonisolated let statusChanges = ChangeSignal()

    /// How many ended sessions stay readable through the API.
    public static let endedLimit = 100

    public init(
        configuration: BridgeConfiguration, sensors: SensorManager, store: WorkoutStore?, clock: any WallClock,
        hub: LiveHub, figuresClock: any WallClock = SystemWallClock(), logger: Logger
    ) {
        figures = FiguresPublisher(clock: figuresClock, hub: hub)
        self.configuration = configuration
        self.sensors = sensors
        self.store = store
        self.clock = clock
        self.hub = hub
        self.logger = logger
    }

    /// The athlete id of a strap without a configured athlete: `strap-c0ffee000001`.
    public static func anonymousAthlete(for address: String) -> String {
        "strap-" + address.lowercased().replacingOccurrences(of: ":", with: "")
    }

    /// Whether a session is a guest's (answers before the session's first message is published).
    nonisolated func isGuest(_ id: UUID) -> Bool { guestIDs.withLock { $0.contains(id) } }

    /// Running and paused sessions.
    public var active: [BridgeSession] { sessions.values.sorted { $0.started < $1.started } }

    /// How many sessions are running or paused.
    public var activeCount: Int { sessions.count }

    /// A session by identifier (active or ended).
    public func session(_ id: String) throws(SessionError) -> BridgeSession {
        guard let uuid = UUID(uuidString: id), let session = sessions[uuid] ?? ended[uuid] else {
            throw .unknownSession(id)
        }
        return session
    }

    /// Starts a session.
    public func create(_ request: SessionRequest) async throws(SessionError) -> BridgeSession {
        guard !request.sensors.isEmpty else { throw .noSensors }
        let addresses = request.sensors.map { $0.uppercased() }
        guard Set(addresses).count == addresses.count else { throw .invalid("a sensor is listed twice") }
        for address in addresses {
            guard await sensors.status(address) != nil else { throw .unknownSensor(address) }
        }
        // From here to the reservation nothing suspends: the checks and the claim are one step.
        for address in addresses {
            if let owner = sessions.values.first(where: {
                !unsaved.contains($0.id) && $0.sensors.contains { $0.address == address }
            }) {
                throw .sensorInUse(address, session: owner.id.uuidString.lowercased())
            }
            if let holder = reservedSensors[address] { throw .sensorInUse(address, session: holder) }
        }
        let athlete: BridgeConfiguration.Athlete
        if let id = request.athlete {
            guard let found = configuration.athlete(id) else { throw .unknownAthlete(id) }
            athlete = found
        } else {
            // A strap nobody configured is its own anonymous athlete: one athlete per strap.
            athlete =
                configuration.athlete(forSensor: addresses[0])
                ?? BridgeConfiguration.Athlete(profile: UserProfile(id: Self.anonymousAthlete(for: addresses[0])))
        }
        if sessions.values.contains(where: { !unsaved.contains($0.id) && $0.profile.id == athlete.profile.id })
            || reservedAthletes.contains(athlete.profile.id)
        {
            throw .athleteBusy(athlete.profile.id)
        }
        for address in addresses { reservedSensors[address] = Self.beingCreated }
        reservedAthletes.insert(athlete.profile.id)
        defer {
            for address in addresses { reservedSensors[address] = nil }
            reservedAthletes.remove(athlete.profile.id)
        }
        var zones = athlete.zones
        if let boundaries = request.zones {
            do {
                zones = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: boundaries)
            } catch {
                throw .invalid("zones: \(error)")
            }
        }
        var runnerPlan: WorkoutPlan?
        if let planValue = request.plan {
            // Zone alerts are judged against the zones this session will use.
            var context = PlanContext()
            if let zonesInForce = zones ?? athlete.profile.preferredZoneConfiguration(for: .heartRate) {
                context.zones[.heartRate] = zonesInForce
            }
            if let powerZones = athlete.profile.preferredZoneConfiguration(for: .cyclingPower) {
                context.zones[.cyclingPower] = powerZones
            }
            do {
                let plan = try PlanFormat.decode(planValue, context: context)
                let problems = PlanValidator.problems(in: plan, context: context)
                guard problems.isEmpty else { throw PlanError(problems: problems) }
                runnerPlan = plan
            } catch {
                throw .invalid("plan: \(error)")
            }
        }
        var identities: [SensorIdentity] = []
        for address in addresses { identities.append(await sensors.identity(address)) }
        // A plan is checked for its own activity, so it sets the workout's (as `workout run --plan`
        // does); its location when it names one.
        let workoutConfiguration = WorkoutConfiguration(
            activityType: runnerPlan?.activity ?? request.activity,
            location: runnerPlan.map { $0.location == .unknown ? request.location : $0.location } ?? request.location)
        let id = UUID()
        starting.insert(id)
        defer { starting.remove(id) }
        var setup = WorkoutRecorder.Setup(
            configuration: workoutConfiguration, profile: athlete.profile, sensors: identities, zones: zones,
            plan: runnerPlan, store: request.guest ? nil : store, id: id)
        setup.onlyTheseSensors = true
        setup.logsRefusedFrames = false
        let recorder: WorkoutRecorder
        do {
            recorder = try await WorkoutRecorder(
                setup, adapter: sensors.adapter, clock: clock, registry: registry,
                sampleSink: BridgeSession.sink(id: id, hub: hub, figures: figures), logger: logger)
        } catch let error as StoreError {
            throw .storage(error)
        } catch {
            throw .invalid("the session could not start: \(error)")
        }
        // A plan ends its session when its last step ends.
        var whenPlanCompletes: (@Sendable (UUID) async -> Void)?
        if runnerPlan != nil {
            whenPlanCompletes = { [weak self] id in _ = try? await self?.stop(id.uuidString) }
        }
        if request.guest { _ = guestIDs.withLock { $0.insert(id) } }
        let session = BridgeSession(
            recorder: recorder, guest: request.guest, started: clock.now(), figures: figures, clock: clock, hub: hub,
            logger: logger, sensorManager: sensors, statusChanges: statusChanges, whenPlanCompletes: whenPlanCompletes)
        await session.attach()
        do {
            try await session.begin()
        } catch {
            _ = try? await session.stop()
            if let error = error as? StoreError { throw .storage(error) }
            throw .invalid("the session could not start: \(error)")
        }
        sessions[id] = session
        statusChanges.signal()
        // A strap's own anonymous athlete and a guest's are not shown; the zones in force are.
        let shown = !request.guest && configuration.athlete(athlete.profile.id) != nil
        let recorded = RecordedAthlete(athlete, zones: zones, shown: shown)
        for address in addresses { await sensors.bind(address, to: id, athlete: recorded, guest: request.guest) }
        // Its "running" went out while it began, before it was listed here: a reader that looks
        // it up on that message (the peripheral following the session) missed it. Say it again.
        await session.publishState()
        logger.info(
            "session started",
            metadata: [
                "session": "\(id)", "athlete": "\(request.guest ? "(guest)" : athlete.profile.id)",
                "guest": "\(request.guest)",
            ])
        return session
    }

    /// Ends a session and saves its workout (unless a guest's).
    @discardableResult
    public func stop(_ id: String) async throws -> Workout {
        let session = try session(id)
        let workout: Workout
        do {
            workout = try await session.stop()
        } catch {
            // Ended but not saved: its straps and athlete may start again while the store refuses.
            if await session.hasEnded, sessions[session.id] != nil, unsaved.insert(session.id).inserted {
                statusChanges.signal()
                // (Not once shutting down: the journal and the spill file keep it for the next start.)
                if !shuttingDown { saveRetries[session.id] = retrySaving(session.id) }
                for sensor in session.sensors { await sensors.bind(sensor.address, to: nil) }
            }
            throw error
        }
        let wasUnsaved = unsaved.remove(session.id) != nil
        saveRetries.removeValue(forKey: session.id)?.cancel()
        if sessions.removeValue(forKey: session.id) != nil {
            ended[session.id] = session
            endedOrder.append(session.id)
            while endedOrder.count > Self.endedLimit { ended[endedOrder.removeFirst()] = nil }
            statusChanges.signal()
            // An unsaved one let its straps go when it ended: another session may hold them now.
            if !wasUnsaved { for sensor in session.sensors { await sensors.bind(sensor.address, to: nil) } }
            logger.info("session ended", metadata: ["session": "\(session.id)"])
        }
        return workout
    }

    /// Frames a gateway sent late (its journal, after the broker was away): turned into samples
    /// and stored with every recorded session that follows the strap and had begun by then. The
    /// store keeps each sample once, so frames it already has add nothing. Returns how many
    /// sessions took them.
    @discardableResult
    public func backfill(_ measurements: [SensorMeasurement]) async -> Int {
        guard let first = measurements.first else { return 0 }
        let address = first.sensor.address
        let targets = sessions.values.filter { session in
            !session.guest && !unsaved.contains(session.id) && session.sensors.contains { $0.address == address }
        }
        guard !targets.isEmpty else { return 0 }
        var sampler = MeasurementSampler(
            source: SampleSource(adapter: first.sensor.adapter, address: address, name: first.sensor.name))
        var samples: [QuantitySample] = []
        for measurement in measurements where measurement.sensor.address == address {
            samples += sampler.samples(
                from: measurement.value, receivedAt: measurement.receivedAt, via: measurement.via)
        }
        for session in targets { await session.backfill(samples.filter { $0.start >= session.started }) }
        return targets.count
    }

    /// What the sessions' streamers hold unstored, summed, with the most recent refusal.
    public func storeHealth() async -> SampleStreamer.Health {
        var total = SampleStreamer.Health()
        for session in sessions.values {
            guard let health = session.storeHealth else { continue }
            total.waiting += health.waiting
            total.spilled += health.spilled
            total.lost += health.lost
            total.failedWrites += health.failedWrites
            total.lastError = health.lastError ?? total.lastError
        }
        return total
    }

    /// Saves an unsaved session again after a while (on the injected clock), waiting twice as
    /// long after each refusal, until it is saved or the manager stops.
    private func retrySaving(_ id: UUID) -> Task<Void, Never> {
        Task { [weak self, clock, logger] in
            var delay = Self.firstSaveRetry
            while !Task.isCancelled {
                do {
                    try await clock.sleep(until: clock.now().addingTimeInterval(delay))
                } catch {
                    return
                }
                guard let self else { return }
                do {
                    guard try await self.saveAgain(id) else { return }
                    logger.notice("an unsaved session is saved now", metadata: ["session": "\(id)"])
                    return
                } catch {
                    delay = min(delay * 2, Self.longestSaveRetry)
                }
            }
        }
    }

    /// Stops an unsaved session again (saving it); false when it is not unsaved any more (a stop
    /// saved it meanwhile, or the manager is shutting down).
    private func saveAgain(_ id: UUID) async throws -> Bool {
        guard unsaved.contains(id), !shuttingDown else { return false }
        try await stop(id.uuidString)
        return true
    }

    /// Ends every session and saves them (shutdown).
    public func stopAll() async {
        shuttingDown = true
        for retry in saveRetries.values { retry.cancel() }
        saveRetries = [:]
        for session in active {
            do {
                try await stop(session.id.uuidString)
            } catch {
                // Left in the journal, its waiting samples in the spill file: the next start recovers both.
                await session.spillWaiting()
                logger.error("session not saved", metadata: ["session": "\(session.id)", "error": "\(error)"])
            }
        }
    }

    /// What holds a strap reserved for a session not there yet.
    static let beingCreated = "a session is being created on it"
    /// What holds a strap while it is forgotten.
    static let beingForgotten = "it is being removed"

    /// Forgets a strap (BlueZ removes its device, a strap nobody configured leaves the list)
    /// unless a session records it or is being created or recovered on it; held meanwhile, so
    /// no session starts on a strap while it goes.
    public func forgetSensor(_ address: String) async throws {
        let address = address.uppercased()
        if let owner = sessions.values.first(where: {
            !unsaved.contains($0.id) && $0.sensors.contains { $0.address == address }
        }) {
            throw SessionError.sensorInUse(address, session: owner.id.uuidString.lowercased())
        }
        if let holder = reservedSensors[address] { throw SessionError.sensorInUse(address, session: holder) }
        reservedSensors[address] = Self.beingForgotten
        defer { reservedSensors[address] = nil }
        try await sensors.forget(address)
    }

    /// Continues the sessions a crash interrupted (the store's recovery journal), on their sensors.
    public func recover() async {
        guard let store else { return }
        let records: [ActiveSessionRecord]
        do {
            for problem in try await store.unreadableJournalRows() {
                logger.error(
                    "a session in the recovery journal cannot be recovered", metadata: ["problem": "\(problem)"])
            }
            records = try await store.activeSessions()
        } catch {
            logger.error("the recovery journal cannot be read", metadata: ["error": "\(error)"])
            return
        }
        // A session the API started while recovery waited is journaled too: it is live, not lost.
        for record in records where sessions[record.workoutID] == nil && !starting.contains(record.workoutID) {
            // From here to the reservation nothing suspends. A strap a session took while
            // recovery waited stays with it (that session is live); the recovered one follows the rest.
            let journaled = Self.sensorAddresses(of: record)
            let taken = journaled.filter { address in
                reservedSensors[address] != nil
                    || sessions.values.contains { session in
                        !unsaved.contains(session.id) && session.sensors.contains { $0.address == address }
                    }
            }
            guard let addresses = Self.strapsToFollow(journaled: journaled, taken: Set(taken)) else {
                // Every strap it followed is another session's (or is being removed), or it names
                // none: nothing would reach it. Saved as it was, ending where it last recorded.
                await finishOrphaned(record, store: store)
                continue
            }
            if !taken.isEmpty {
                logger.warning(
                    "a recovered session's straps are in another session",
                    metadata: ["session": "\(record.workoutID)", "sensors": "\(taken.joined(separator: ","))"])
            }
            for address in addresses { reservedSensors[address] = record.workoutID.uuidString.lowercased() }
            // (Unless a session being created holds the athlete: its reservation is its own.)
            let athlete = record.profile.flatMap { reservedAthletes.insert($0.id).inserted ? $0.id : nil }
            defer {
                for address in addresses { reservedSensors[address] = nil }
                if let athlete { reservedAthletes.remove(athlete) }
            }
            await whileRecovering?(record.workoutID)
            do {
                var identities: [SensorIdentity] = []
                for address in addresses { identities.append(await sensors.identity(address)) }
                var setup = WorkoutRecorder.Setup(
                    configuration: record.configuration,
                    profile: record.profile ?? UserProfile(id: UserProfile.anonymousID), sensors: identities,
                    store: store, recovering: record)
                setup.onlyTheseSensors = true
                setup.logsRefusedFrames = false
                let live = BridgeSession.sink(id: record.workoutID, hub: hub, figures: figures)
                var sink = live
                let resumed = sensors.adapter.backfillSource.map(ResumedStraps.init)
                if let resumed {
                    sink = { samples in
                        if !resumed.isDone { resumed.note(samples) }
                        live(samples)
                    }
                }
                let recorder = try await WorkoutRecorder(
                    setup, adapter: sensors.adapter, clock: clock, registry: registry, sampleSink: sink, logger: logger)
                // After the recorder stored what the last run spilled, before frames flow (attach).
                if let resumed {
                    resumed.watch(await storedEnds(of: record, following: addresses, store: store))
                }
                let session = BridgeSession(
                    recorder: recorder, guest: false, started: record.start, figures: figures, clock: clock, hub: hub,
                    logger: logger, sensorManager: sensors, statusChanges: statusChanges)
                await session.attach()
                sessions[record.workoutID] = session
                statusChanges.signal()
                let profile = record.profile ?? UserProfile(id: UserProfile.anonymousID)
                let recorded = RecordedAthlete(
                    BridgeConfiguration.Athlete(profile: profile),
                    zones: record.customZones.first { $0.quantityType == .heartRate },
                    shown: configuration.athlete(profile.id) != nil)
                for address in addresses { await sensors.bind(address, to: record.workoutID, athlete: recorded) }
                await session.publishState()
                logger.notice("session recovered", metadata: ["session": "\(record.workoutID)"])
            } catch {
                logger.error(
                    "session not recovered", metadata: ["session": "\(record.workoutID)", "error": "\(error)"])
            }
        }
    }

    /// Where the store's part of each strap a recovered session follows ends: its last frame
    /// (a heart rate, an RR interval or an energy increment; samples name the gateway a frame came through, and the
    /// latest wins), or the session's start when none is stored.
    private func storedEnds(
        of record: ActiveSessionRecord, following addresses: [String], store: WorkoutStore
    ) async -> [String: ResumedStraps.Stored] {
        var ends: [String: ResumedStraps.Stored] = [:]
        for address in addresses { ends[address] = ResumedStraps.Stored(adapter: nil, until: record.start) }
        do {
            for sensor in try await store.sources() where addresses.contains(sensor.address.uppercased()) {
                for type in [QuantityType.heartRate, .heartbeatSeries, .activeEnergyBurned] {
                    guard
                        let latest = try await store.samples(
                            type: type, source: sensor, workout: record.workoutID, limit: 1, ascending: false
                        ).first
                    else { continue }
                    let address = sensor.address.uppercased()
                    if latest.end > ends[address]?.until ?? .distantPast {
                        ends[address] = ResumedStraps.Stored(adapter: latest.source.adapter, until: latest.end)
                    }
                }
            }
        } catch {
            logger.warning(
                "a recovered session's stored end cannot be read: what the daemon missed while down is not asked for",
                metadata: ["session": "\(record.workoutID)", "error": "\(error)"])
            return [:]
        }
        return ends
    }

    /// The straps a recovered session follows: those of the journal row no other session holds
    /// (live, being created or removed) — or nil when none is left, and the session is not started.
    static func strapsToFollow(journaled: [String], taken: Set<String>) -> [String]? {
        let free = journaled.filter { !taken.contains($0) }
        return free.isEmpty ? nil : free
    }

    /// Saves a journaled session that nothing will record any more, as the store holds it and
    /// without starting it (its athlete may be recording again already); a store that refuses
    /// leaves it in the journal for the next start.
    private func finishOrphaned(_ record: ActiveSessionRecord, store: WorkoutStore) async {
        do {
            let workout = try await WorkoutRecovery.finishAsStored(record, store: store, logger: logger)
            logger.notice(
                "a recovered session's straps are all in other sessions: saved as stored, ending where it last recorded",
                metadata: ["session": "\(record.workoutID)", "end": "\(workout.end)"])
        } catch {
            logger.error(
                "a recovered session with no strap left could not be saved; it stays in the journal",
                metadata: ["session": "\(record.workoutID)", "error": "\(error)"])
        }
    }

    /// The straps a journaled session records, its primary first. A row journaled before the
    /// sensor list was kept names only the primary sources: heart rate's first, then the others.
    static func sensorAddresses(of record: ActiveSessionRecord) -> [String] {
        var sources = record.sensors
        if sources.isEmpty {
            let heartRate = record.primarySources[QuantityType.heartRate.rawValue]
            sources = (heartRate.map { [$0] } ?? []) + record.primarySources.values.sorted { $0.address < $1.address }
        }
        var addresses: [String] = []
        for source in sources where !addresses.contains(source.address.uppercased()) {
            addresses.append(source.address.uppercased())
        }
        return addresses
    }
}
