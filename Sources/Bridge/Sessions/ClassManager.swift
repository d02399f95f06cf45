public import Foundation
public import Logging
public import Sensors
public import Wire
import Workouts

/// The class: one running at a time, a session per athlete. With `[class] auto_join`, a configured
/// strap seen in range (linked, or its broadcast heard) joins under its athlete; out of range for
/// `leave_after_minutes`, it leaves and its workout is saved; back in range, it joins again.
///
/// Judged once a second of the injected clock, so a simulated clock drives it in tests.
public actor ClassManager {
    /// Why a class request was refused.
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case alreadyRunning(UUID)
        case noClass

        public var description: String {
            switch self {
            case .alreadyRunning(let id): "a class is running (\(id.uuidString.lowercased())); stop it first"
            case .noClass: "no class is running"
            }
        }
    }

    private struct Member {
        var sensor: String
        var athlete: String
        var session: UUID?
        var sessions: [UUID] = []
        var joined: Date
        var lastHeard: Date?
        var left: Date?
        var leftBecause: LeaveReason?
        /// Whether the last published snapshot showed it in range.
        var shownInRange = true
    }

    private struct RunningClass {
        var id = UUID()
        var activity: WorkoutActivityType
        var location: WorkoutLocation
        var start: Date
        var end: Date?
        var members: [String: Member] = [:]
    }

    private let settings: ClassSettings
    private let configured: [BridgeConfiguration.KnownSensor]
    private let sensors: SensorManager
    private let sessions: SessionManager
    private let clock: any WallClock
    private let hub: LiveHub
    private let logger: Logger
    private var current: RunningClass?
    private var watchTask: Task<Void, Never>?
    /// The last refusal logged per strap, so a strap that cannot join is logged once, not every second.
    private var refusals: [String: String] = [:]

    public init(
        configuration: BridgeConfiguration, sensors: SensorManager, sessions: SessionManager, clock: any WallClock,
        hub: LiveHub, logger: Logger
    ) {
        self.settings = configuration.classSettings
        self.configured = configuration.sensors
        self.sensors = sensors
        self.sessions = sessions
        self.clock = clock
        self.hub = hub
        self.logger = logger
    }

    /// The running class, or the last one ended (nil before the first).
    public var snapshot: ClassJSON? { current.map(json) }

    /// Starts a class; with auto-join, the configured straps in range join at once.
    public func start(_ request: ClassRequest) async throws(Refusal) -> ClassJSON {
        if let current, current.end == nil { throw .alreadyRunning(current.id) }
        current = RunningClass(
            activity: request.activity ?? settings.activity, location: request.location, start: clock.now())
        refusals = [:]
        logger.info("class started", metadata: ["class": "\(current!.id)", "autoJoin": "\(settings.autoJoin)"])
        await sweep()
        publish()
        let clock = clock
        watchTask = Task { [weak self] in
            while !Task.isCancelled {
                do {
                    try await clock.sleep(until: clock.now().addingTimeInterval(1))
                } catch {
                    return
                }
                await self?.sweep()
            }
        }
        return json(current!)
    }

    /// Ends the class and every session in it (their workouts saved).
    public func stop() async throws(Refusal) -> ClassJSON {
        guard var running = current, running.end == nil else { throw .noClass }
        watchTask?.cancel()
        watchTask = nil
        let now = clock.now()
        for (address, member) in running.members {
            guard let session = member.session else { continue }
            await end(session, of: address)
            running.members[address]?.session = nil
            running.members[address]?.left = now
            running.members[address]?.leftBecause = .classEnded
        }
        running.end = now
        current = running
        logger.info("class ended", metadata: ["class": "\(running.id)"])
        publish()
        return json(running)
    }

    /// Stops judging (shutdown); the sessions end with the daemon's.
    public func shutdown() {
        watchTask?.cancel()
        watchTask = nil
    }

    /// One judgement: who joins, who is out of range, who leaves.
    func sweep() async {
        guard var running = current, running.end == nil else { return }
        let now = clock.now()
        let active = Set(await sessions.active.map(\.id))
        var changed = false
        for sensor in configured {
            guard let status = await sensors.status(sensor.address) else { continue }
            let address = sensor.address
            let heard = status.state == .ready ? now : status.lastMeasurement
            let inRange = heard.map { now.timeIntervalSince($0) <= settings.heardWithin } ?? false
            if var member = running.members[address], let session = member.session {
                if let heard, member.lastHeard.map({ heard > $0 }) ?? true { member.lastHeard = heard }
                if !active.contains(session) {
                    // Ended through the API (or its plan ended): it stays out until the class ends.
                    member.session = nil
                    member.left = now
                    member.leftBecause = .stopped
                    changed = true
                } else if !inRange, now.timeIntervalSince(member.lastHeard ?? member.joined) >= settings.leaveAfter {
                    await end(session, of: address)
                    member.session = nil
                    member.left = now
                    member.leftBecause = .outOfRange
                    changed = true
                    logger.info(
                        "left the class: out of range",
                        metadata: ["sensor": "\(address)", "athlete": "\(member.athlete)"])
                } else if member.shownInRange != inRange {
                    member.shownInRange = inRange
                    changed = true
                }
                running.members[address] = member
                continue
            }
            // A session started by hand on a configured strap is part of the class either way.
            let signsIn = settings.autoJoin && inRange && running.members[address]?.leftBecause != .stopped
            guard signsIn || status.session != nil else { continue }
            guard let session = await join(address, athlete: sensor.athlete, status: status, running: running) else {
                continue
            }
            var member =
                running.members[address]
                ?? Member(sensor: address, athlete: session.athlete, joined: now)
            member.session = session.id
            member.sessions.append(session.id)
            member.lastHeard = heard
            member.left = nil
            member.leftBecause = nil
            member.shownInRange = true
            running.members[address] = member
            changed = true
            logger.info("joined the class", metadata: ["sensor": "\(address)", "athlete": "\(session.athlete)"])
        }
        current = running
        if changed { publish() }
    }

    /// The strap's session: the one it records already (a session started by hand, or recovered
    /// after a restart), else a new one under its athlete.
    private func join(_ address: String, athlete: String?, status: SensorStatus, running: RunningClass) async
        -> (id: UUID, athlete: String)?
    {
        if let id = status.session, let existing = try? await sessions.session(id.uuidString),
            await existing.state != .ended
        {
            return (id, existing.profile.id)
        }
        let request = SessionRequest(
            activity: running.activity, location: running.location, sensors: [address], athlete: athlete)
        do {
            let session = try await sessions.create(request)
            refusals[address] = nil
            return (session.id, session.profile.id)
        } catch {
            if refusals.updateValue(error.code, forKey: address) != error.code {
                logger.warning(
                    "cannot join the class", metadata: ["sensor": "\(address)", "error": "\(error.description)"])
            }
            return nil
        }
    }

    private func end(_ session: UUID, of address: String) async {
        do {
            try await sessions.stop(session.uuidString)
        } catch {
            // Left in the recovery journal: the store saves it once it can.
            logger.error(
                "a class session did not end cleanly", metadata: ["sensor": "\(address)", "error": "\(error)"])
        }
    }

    private func publish() {
        guard let current else { return }
        hub.publish(LiveMessage(kind: .class, payload: json(current)))
    }

    private func json(_ running: RunningClass) -> ClassJSON {
        let members = running.members.values.sorted { $0.sensor < $1.sensor }.map { member in
            let state: ClassMemberState = member.session == nil ? .left : member.shownInRange ? .in : .outOfRange
            return ClassJSON.Member(
                sensor: member.sensor, athlete: member.athlete, state: state,
                session: member.session.map { $0.uuidString.lowercased() },
                sessions: member.sessions.map { $0.uuidString.lowercased() }, joined: ISO8601.format(member.joined),
                lastHeard: member.lastHeard.map(ISO8601.format), left: member.left.map(ISO8601.format),
                leftBecause: member.leftBecause)
        }
        return ClassJSON(
            id: running.id.uuidString.lowercased(), state: running.end == nil ? "running" : "ended",
            activity: running.activity.rawValue,
            location: running.location.rawValue, start: ISO8601.format(running.start),
            end: running.end.map(ISO8601.format), autoJoin: settings.autoJoin,
            leaveAfter: settings.leaveAfter, members: members)
    }
}
