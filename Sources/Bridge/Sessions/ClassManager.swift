public import Foundation
public import Logging
public import Sensors
public import ServiceLifecycle
public import Wire
import Workouts

/// The class: one running at a time, a session per athlete. With `[class] auto_join`, a configured
/// strap seen in range (linked, or its broadcast heard) joins under its athlete; out of range for
/// `leave_after_minutes`, it leaves and its workout is saved; back in range, it joins again.
///
/// A thin shell around ``ClassRoster``, which decides: this feeds it facts (the live hub's `sensor`,
/// `measurement` and `session` messages, the class requests, its deadlines on the injected clock)
/// and carries out its actions. The roster's state is never copied across a suspension: a session
/// start that suspends is told back to the roster as a fact, so a class stopped meanwhile stays
/// stopped. ``run()`` follows the hub and keeps the one timer; the daemon runs it as a service.
public actor ClassManager: Service {
    /// Why a class request was refused.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case alreadyRunning(UUID)
        case noClass
        /// The last class's sessions are still being ended: a new class would adopt them as they end.
        case stillEnding(UUID)
        /// The daemon is stopping.
        case shuttingDown

        public var description: String {
            switch self {
            case .alreadyRunning(let id): "a class is running (\(id.uuidString.lowercased())); stop it first"
            case .noClass: "no class is running"
            case .stillEnding(let id):
                "the last class (\(id.uuidString.lowercased())) is still ending its sessions; try again in a moment"
            case .shuttingDown: "the daemon is stopping"
            }
        }

        /// The API's error code.
        public var code: String {
            switch self {
            case .alreadyRunning: "class_running"
            case .noClass: "not_found"
            case .stillEnding: "class_ending"
            case .shuttingDown: "shutting_down"
            }
        }
    }

    private let settings: ClassSettings
    private let straps: [ClassRoster.Strap]
    private let addresses: Set<String>
    private let sensors: SensorManager
    private let sessions: any ClassSessions
    private let clock: any WallClock
    private let hub: LiveHub
    private let logger: Logger
    private nonisolated let timer: DeadlineTimer
    private var roster = ClassRoster()
    /// Set at shutdown: the sessions end with the daemon's, and nobody is judged for it.
    private var isShutDown = false
    /// The last refusal logged per strap, so a strap that cannot join is logged once, not every retry.
    private var refusals: [String: String] = [:]
    /// The class a stop is ending the sessions of, until they are all ended.
    private var ending: UUID?

    public init(
        configuration: BridgeConfiguration, sensors: SensorManager, sessions: any ClassSessions,
        clock: any WallClock, hub: LiveHub, logger: Logger
    ) {
        self.settings = configuration.classSettings
        self.straps = configuration.sensors.map { ClassRoster.Strap(address: $0.address, athlete: $0.athlete) }
        self.addresses = Set(configuration.sensors.map(\.address))
        self.sensors = sensors
        self.sessions = sessions
        self.clock = clock
        self.hub = hub
        self.logger = logger
        self.timer = DeadlineTimer(clock: clock)
    }

    /// The running class, or the last one ended (nil before the first).
    public var snapshot: ClassJSON? { roster.json }

    /// Starts a class; with auto-join, the configured straps in range join before this returns.
    public func start(_ request: ClassRequest) async throws(Refusal) -> ClassJSON {
        if let running = roster.runningClassID { throw .alreadyRunning(running) }
        if let previous = ending { throw .stillEnding(previous) }
        guard !isShutDown else { throw .shuttingDown }
        refusals = [:]
        let setup = ClassRoster.Setup(
            id: UUID(), activity: request.activity ?? settings.activity, location: request.location,
            autoJoin: settings.autoJoin, leaveAfter: settings.leaveAfter, heardWithin: settings.heardWithin,
            joinVia: settings.joinVia, straps: straps)
        logger.info(
            "class started",
            metadata: [
                "class": "\(setup.id)", "autoJoin": "\(settings.autoJoin)", "joinVia": "\(settings.joinVia.rawValue)",
            ])
        await feed(.classStarted(setup))
        // The roster holds a class from its start on.
        return roster.json!
    }

    /// Ends the class and every session in it (their workouts saved before this returns).
    public func stop() async throws(Refusal) -> ClassJSON {
        guard let running = roster.runningClassID else { throw .noClass }
        logger.info("class ended", metadata: ["class": "\(running)"])
        ending = running
        defer { ending = nil }
        // The class as it ended, whatever happens once its sessions are ended.
        return await feed(.classStopped, snapshot: true)!
    }

    /// Stops judging (shutdown): the sessions end with the daemon's.
    public func shutdown() {
        isShutDown = true
        timer.arm(nil)
    }

    /// Follows the sensors and the sessions through the live hub, and tells the roster the time at
    /// its deadlines, until cancelled or a graceful shutdown.
    public func run() async {
        // Subscribed before the first look at the sensors: a change in between comes as a message.
        // A session's changes (`session`), not its figures each second (`figures`): only its end matters here.
        let deliveries = hub.subscribe(kinds: [.sensor, .measurement, .session])
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.timer.run { await self.deadlineReached() } }
                group.addTask {
                    await self.resynchronize()
                    for await delivery in deliveries { await self.receive(delivery) }
                }
                await group.next()
                group.cancelAll()
            }
        }
        // Nothing is judged any more: the sessions end with the daemon's.
        shutdown()
    }

    /// Tells the roster what the sensor manager says of a configured strap now. Only ``run()``'s
    /// loop calls it (and tests), one call at a time, so what it tells is never older than what it told.
    func refresh(_ address: String) async {
        guard !isShutDown, let status = await sensors.status(address) else { return }
        await feed(.link(address, ClassRoster.Link(status)))
    }

    private func receive(_ delivery: LiveSubscription.Delivery) async {
        guard !isShutDown else { return }
        guard case .message(let message) = delivery else {
            // Messages were dropped: what they said is read again.
            await resynchronize()
            return
        }
        switch message.kind {
        case .sensor, .measurement:
            guard let address = message.sensor, addresses.contains(address) else { return }
            await refresh(address)
        case .session:
            guard let session = message.session, roster.memberSessions.contains(session) else { return }
            await checkRunning(session)
        default:
            break
        }
    }

    /// Every configured strap's status, and whether every member's session still runs.
    private func resynchronize() async {
        for strap in straps { await refresh(strap.address) }
        for session in roster.memberSessions { await checkRunning(session) }
    }

    private func checkRunning(_ session: UUID) async {
        if await sessions.runningAthlete(of: session) == nil { await feed(.sessionEnded(session)) }
    }

    private func deadlineReached() async {
        guard !isShutDown else { return }
        await feed(.time)
    }

    /// Hands a fact to the roster and carries out its actions; with `snapshot`, returns the class as
    /// the fact left it (encoding the roster costs a line per member: not done for every frame heard).
    @discardableResult
    private func feed(_ fact: ClassRoster.Fact, snapshot: Bool = false) async -> ClassJSON? {
        let actions = roster.handle(fact, at: clock.now())
        let json = snapshot ? roster.json : nil
        if !isShutDown { timer.arm(roster.nextDeadline) }
        for action in actions { await perform(action) }
        return json
    }

    private func perform(_ action: ClassRoster.Action) async {
        switch action {
        case .publish:
            if let json = roster.json { hub.publish(LiveMessage(kind: .class, payload: json)) }
        case .endSession(let session, let strap, let reason):
            if reason == .outOfRange {
                logger.info("left the class: out of range", metadata: ["sensor": "\(strap)"])
            }
            await end(session, of: strap)
        case .startSession(let start):
            // Queued behind other starts: the class may have stopped (or the daemon begun to) since.
            guard !isShutDown, roster.wantsStart(start.ticket) else {
                await feed(.sessionNotStarted(ticket: start.ticket))
                return
            }
            let outcome = await startSession(start)
            await feed(outcome)
            guard case .sessionStarted(let started) = outcome, roster.memberSessions.contains(started.session) else {
                return
            }
            logger.info("joined the class", metadata: ["sensor": "\(started.strap)", "athlete": "\(started.athlete)"])
            // Ended before the roster heard of it (its hub message came first): told now.
            await checkRunning(started.session)
        }
    }

    /// The strap's session: the one it records already while that runs, else a new one.
    private func startSession(_ start: ClassRoster.SessionStart) async -> ClassRoster.Fact {
        if let adopting = start.adopting {
            guard let athlete = await sessions.runningAthlete(of: adopting) else {
                // It ended meanwhile (stopped by hand, its plan done): the roster decides again,
                // rather than a session starting that nobody asked for.
                return .sessionNotStarted(ticket: start.ticket)
            }
            return .sessionStarted(
                .init(ticket: start.ticket, strap: start.strap, session: adopting, athlete: athlete, adopted: true))
        }
        do {
            let session = try await sessions.startSession(
                strap: start.strap, athlete: start.athlete, activity: start.activity, location: start.location)
            refusals[start.strap] = nil
            return .sessionStarted(
                .init(ticket: start.ticket, strap: start.strap, session: session.id, athlete: session.athlete))
        } catch {
            if refusals.updateValue(error.code, forKey: start.strap) != error.code {
                logger.warning(
                    "cannot join the class", metadata: ["sensor": "\(start.strap)", "error": "\(error.description)"])
            }
            return .sessionNotStarted(ticket: start.ticket)
        }
    }

    private func end(_ session: UUID, of address: String) async {
        do {
            try await sessions.endSession(session)
        } catch {
            // Ended but unsaved (the store refused): listed with `saved: false`, its strap free to
            // rejoin; a stop (the API's, or the daemon's at shutdown) saves it, and the recovery
            // journal holds it until then.
            logger.error(
                "a class session did not end cleanly", metadata: ["sensor": "\(address)", "error": "\(error)"])
        }
    }
}
