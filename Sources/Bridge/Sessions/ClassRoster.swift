public import Foundation
public import Sensors
public import Wire
public import Workouts

/// The class as a pure decider: facts go in (the class started or stopped, what the sensor manager
/// says of a strap, sessions started or ended, the time), actions come out (start a session for a
/// strap, end one, publish the class), with the next date at which it must be told the time.
///
/// No I/O and no clock: every fact comes with its date, and ``ClassManager`` carries the actions
/// out. A session start that suspends is answered later with ``Fact/sessionStarted(_:)`` or
/// ``Fact/sessionNotStarted(ticket:)``; whatever happened meanwhile (the class stopped) stays true.
///
/// The rules, as the once-a-second sweep had them, judged on every fact:
/// - A strap is heard *now* while its link is `ready`, else when its last measurement came: a link
///   frame, or (with ``ClassJoinPath/broadcast`` only) a broadcast. It is in range while heard within
///   `heardWithin` seconds. With ``ClassJoinPath/link`` (the default) anyone's radio can repeat a
///   strap's address, broadcast, or answer a link: only a link to a bonded strap (encrypted with
///   its stored key) counts, never a broadcast nor a link without a bond.
/// - Only configured straps take part. With auto-join, one in range joins under its athlete; with
///   or without it, one that records a session (started by hand, or recovered) joins with that
///   session. A member whose session was ended through the API (`stopped`) does not join again by
///   itself, but does with a session started by hand.
/// - A member not in range is shown `out of range`; once out of range and not heard for
///   `leaveAfter` seconds (since it joined, if never heard), its session ends and it leaves
///   (`out of range`). Back in range, it joins again in a new session.
/// - A session start that fails is asked for again a second later (``retryInterval``).
/// - Stopping the class ends every session in it (`class ended`); a session whose start finishes
///   after the class it was for stopped is ended at once (one adopted is left alone).
/// - Time is taken as told: a clock that steps back makes nobody leave earlier.
public struct ClassRoster: Sendable {
    /// A configured strap and the athlete it records under (nil: its configured or anonymous one).
    public struct Strap: Hashable, Sendable {
        /// The Bluetooth address, upper case.
        public var address: String
        /// The athlete identifier.
        public var athlete: String?

        /// A strap as given.
        public init(address: String, athlete: String? = nil) {
            self.address = address
            self.athlete = athlete
        }
    }

    /// A class to run: its start request with `[class]` and the configured straps.
    public struct Setup: Hashable, Sendable {
        /// The class's identifier.
        public var id: UUID
        /// The activity of every session in it.
        public var activity: WorkoutActivityType
        /// Where it takes place.
        public var location: WorkoutLocation
        /// Whether configured straps in range join by themselves.
        public var autoJoin: Bool
        /// Seconds out of range after which a member leaves.
        public var leaveAfter: TimeInterval
        /// A strap without a link is in range while a measurement came this recently (s).
        public var heardWithin: TimeInterval
        /// What makes a strap heard: its link only, or its broadcast too.
        public var joinVia: ClassJoinPath
        /// The straps that may join, in configuration order.
        public var straps: [Strap]

        /// A setup as given.
        public init(
            id: UUID, activity: WorkoutActivityType, location: WorkoutLocation, autoJoin: Bool,
            leaveAfter: TimeInterval, heardWithin: TimeInterval, joinVia: ClassJoinPath, straps: [Strap]
        ) {
            self.id = id
            self.activity = activity
            self.location = location
            self.autoJoin = autoJoin
            self.leaveAfter = leaveAfter
            self.heardWithin = heardWithin
            self.joinVia = joinVia
            self.straps = straps
        }
    }

    /// What the sensor manager says of a strap.
    public struct Link: Hashable, Sendable {
        /// Its state: `ready` counts as heard for as long as it lasts.
        public var state: SensorState
        /// When its last measurement came, through a link or a broadcast.
        public var lastMeasurement: Date?
        /// How the last measurement came (nil before the first).
        public var via: MeasurementPath?
        /// Whether its last link frame came over a bonded link (nil before the first).
        public var bonded: Bool?
        /// The session recording it, when one is.
        public var session: UUID?
        /// When its last frame through a bonded link came: kept by the roster across broadcasts (and
        /// frames over a link without a bond) heard since.
        var lastLinkFrame: Date?

        /// A link as given.
        public init(
            state: SensorState, lastMeasurement: Date? = nil, via: MeasurementPath? = nil, bonded: Bool? = nil,
            session: UUID? = nil
        ) {
            self.state = state
            self.lastMeasurement = lastMeasurement
            self.via = via
            self.bonded = bonded
            self.session = session
        }

        /// What a sensor status says.
        public init(_ status: SensorStatus) {
            self.init(
                state: status.state, lastMeasurement: status.lastMeasurement,
                via: status.via.flatMap(MeasurementPath.init(rawValue:)), bonded: status.bonded,
                session: status.session)
        }

        /// Whether its last measurement came over a bonded link.
        var lastFrameBonded: Bool { via == .connection && bonded == true }
    }

    /// A session asked for with ``Action/startSession(_:)``.
    public struct SessionStart: Hashable, Sendable {
        /// Answer with this ticket.
        public var ticket: Int
        /// The strap it records, alone.
        public var strap: String
        /// Its athlete (nil: the strap's configured or anonymous athlete).
        public var athlete: String?
        /// The class's activity.
        public var activity: WorkoutActivityType
        /// The class's location.
        public var location: WorkoutLocation
        /// The session already recording the strap: adopted while it runs, else a new one starts.
        public var adopting: UUID?

        /// A session start as given.
        public init(
            ticket: Int, strap: String, athlete: String?, activity: WorkoutActivityType, location: WorkoutLocation,
            adopting: UUID? = nil
        ) {
            self.ticket = ticket
            self.strap = strap
            self.athlete = athlete
            self.activity = activity
            self.location = location
            self.adopting = adopting
        }
    }

    /// A session started (or adopted) for a ``SessionStart``.
    public struct SessionStarted: Hashable, Sendable {
        /// The ticket of the ``SessionStart``.
        public var ticket: Int
        /// The strap it records.
        public var strap: String
        /// The session.
        public var session: UUID
        /// Its athlete.
        public var athlete: String
        /// Whether it is the session the strap recorded already (not one the class started).
        public var adopted: Bool

        /// A started session as given.
        public init(ticket: Int, strap: String, session: UUID, athlete: String, adopted: Bool = false) {
            self.ticket = ticket
            self.strap = strap
            self.session = session
            self.athlete = athlete
            self.adopted = adopted
        }
    }

    /// A fact, told with its date to ``handle(_:at:)``.
    public enum Fact: Hashable, Sendable {
        /// A class starts (ignored while one runs: the caller refuses that).
        case classStarted(Setup)
        /// The class ends, and every session in it.
        case classStopped
        /// What the sensor manager says of a strap now (its state changed, or a measurement came).
        case link(String, Link)
        /// A session asked for runs.
        case sessionStarted(SessionStarted)
        /// A session asked for did not start.
        case sessionNotStarted(ticket: Int)
        /// A session ended from outside the class: through the API, or its plan ended.
        case sessionEnded(UUID)
        /// Only the date: a deadline came.
        case time
    }

    /// What the caller does, in order.
    public enum Action: Hashable, Sendable {
        /// Start or adopt a session for a strap that joins; answer with ``Fact/sessionStarted(_:)``
        /// or ``Fact/sessionNotStarted(ticket:)``.
        case startSession(SessionStart)
        /// End a session, its workout saved: its athlete left, or the class it was for ended.
        case endSession(UUID, strap: String, because: LeaveReason)
        /// The class changed: publish ``json``.
        case publish
    }

    /// How long after a failed session start the strap is tried again.
    public static let retryInterval: TimeInterval = 1

    private struct Member: Hashable, Sendable {
        var strap: String
        var athlete: String
        var session: UUID?
        var sessions: [UUID] = []
        var joined: Date
        var lastHeard: Date?
        var left: Date?
        var leftBecause: LeaveReason?
        /// Whether the last judgement found it in range.
        var shownInRange = true
    }

    private struct RunningClass: Hashable, Sendable {
        var setup: Setup
        var start: Date
        var end: Date?
        var members: [String: Member] = [:]
    }

    /// The running class, or the last one ended.
    private var current: RunningClass?
    /// What the sensor manager said last of each strap (kept between classes).
    private var links: [String: Link] = [:]
    /// Session starts under way: the strap of each ticket.
    private var pendingStarts: [Int: String] = [:]
    private var lastTicket = 0
    /// Straps whose session start failed, and when they may be tried again.
    private var retryAt: [String: Date] = [:]
    /// The date of the last fact.
    private var now: Date?
    /// ``nextDeadline`` as the last fact left it: the earliest of ``strapDeadlines``.
    private var dueAt: Date?
    /// Each strap's own next deadline, as last worked out (absent: none), so that a frame works out
    /// its strap's alone.
    private var strapDeadlines: [String: Date] = [:]
    /// Where each configured strap of the running class is in its setup.
    private var strapIndex: [String: Int] = [:]

    /// No class yet.
    public init() {}

    /// The running class's identifier (nil: none runs).
    public var runningClassID: UUID? { current.flatMap { $0.end == nil ? $0.setup.id : nil } }

    /// Whether a class runs.
    public var isRunning: Bool { runningClassID != nil }

    /// Whether the start with `ticket` is still wanted: under way for the class that runs now (a
    /// start queued behind others is not, once that class stopped).
    public func wantsStart(_ ticket: Int) -> Bool { isRunning && pendingStarts[ticket] != nil }

    /// The sessions the running class's members record now.
    public var memberSessions: Set<UUID> {
        guard let current, current.end == nil else { return [] }
        return Set(current.members.values.compactMap(\.session))
    }

    /// Takes a fact told at `now`; returns what to do: sessions to end, then the publication, then
    /// sessions to start.
    public mutating func handle(_ fact: Fact, at now: Date) -> [Action] {
        self.now = now
        var outcome = Outcome()
        switch fact {
        case .classStarted(let setup):
            guard !isRunning else { return [] }
            current = RunningClass(setup: setup, start: now)
            strapIndex = Dictionary(
                setup.straps.enumerated().map { ($0.element.address, $0.offset) },
                uniquingKeysWith: { first, _ in first })
            pendingStarts = [:]
            retryAt = [:]
            outcome.changed = true
        case .classStopped:
            let actions = stop(at: now)
            workOutDeadlines()
            return actions
        case .link(let strap, var link):
            link.lastLinkFrame = link.lastFrameBonded ? link.lastMeasurement : links[strap]?.lastLinkFrame
            // A link changes its own strap's standing only; the others' change at their deadlines.
            // One that passed before this frame (the timer's ``Fact/time`` may come late on a
            // loaded machine) is judged first, on what was known before the frame: a strap silent
            // past its leaving time leaves even when the frame is its own, as with a punctual timer.
            let due = dueAt.map { now >= $0 } ?? false
            if due, hasLeft(strap, at: now) { judge(at: now, into: &outcome, only: strap) }
            links[strap] = link
            judge(at: now, into: &outcome, only: due ? nil : strap)
            if due { workOutDeadlines() } else { workOutDeadline(of: strap) }
            return outcome.actions
        case .sessionStarted(let started):
            guard pendingStarts.removeValue(forKey: started.ticket) != nil, isRunning else {
                // Late for its class (it stopped meanwhile): a session the class started ends; one
                // adopted, or a member's told twice, is left alone.
                guard !started.adopted, !memberSessions.contains(started.session) else { return [] }
                return [.endSession(started.session, strap: started.strap, because: .classEnded)]
            }
            retryAt[started.strap] = nil
            join(started, at: now)
            outcome.changed = true
        case .sessionNotStarted(let ticket):
            guard let strap = pendingStarts.removeValue(forKey: ticket) else { return [] }
            retryAt[strap] = now.addingTimeInterval(Self.retryInterval)
        case .sessionEnded(let session):
            guard var running = current, running.end == nil,
                let strap = running.members.first(where: { $0.value.session == session })?.key
            else { return [] }
            // Ended through the API (or its plan ended): it stays out until the class ends.
            running.members[strap]?.session = nil
            running.members[strap]?.left = now
            running.members[strap]?.leftBecause = .stopped
            current = running
            outcome.changed = true
        case .time:
            break
        }
        judge(at: now, into: &outcome)
        workOutDeadlines()
        return outcome.actions
    }

    /// The next date at which ``handle(_:at:)`` must be told the time (``Fact/time``), if any. It
    /// may have passed (facts that changed nothing came since): told at once, then.
    public var nextDeadline: Date? { dueAt }

    /// The earliest deadline worked out afresh from every strap, leaving ``nextDeadline`` alone
    /// (tests hold the kept one to it).
    var deadlineWorkedOutAfresh: Date? {
        guard let running = current, running.end == nil else { return nil }
        return running.setup.straps.compactMap { deadline(of: $0.address, in: running) }.min()
    }

    /// Every strap's deadline worked out again, and the earliest of them.
    private mutating func workOutDeadlines() {
        strapDeadlines = [:]
        if let running = current, running.end == nil {
            for strap in running.setup.straps {
                strapDeadlines[strap.address] = deadline(of: strap.address, in: running)
            }
        }
        dueAt = strapDeadlines.values.min()
    }

    /// One strap's deadline worked out again, after a fact about it alone. Every other strap's
    /// deadline is later than now (else this fact would have been judged as due), so the earliest
    /// is found again only when this strap's was it and moved later.
    private mutating func workOutDeadline(of address: String) {
        guard let running = current, running.end == nil else { return workOutDeadlines() }
        let old = strapDeadlines[address]
        let new = deadline(of: address, in: running)
        guard new != old else { return }
        strapDeadlines[address] = new
        if let old, let dueAt, old <= dueAt, new.map({ $0 > old }) ?? true {
            self.dueAt = strapDeadlines.values.min()
        } else if let new, dueAt.map({ new < $0 }) ?? true {
            dueAt = new
        }
    }

    /// The strap's next deadline after ``now``: its retry, the instant it is shown out of range, or
    /// when it leaves.
    private func deadline(of address: String, in running: RunningClass) -> Date? {
        guard let now, let link = links[address] else { return nil }
        let setup = running.setup
        guard let member = running.members[address], member.session != nil else {
            guard let retry = retryAt[address], retry > now, !pendingStarts.values.contains(address) else { return nil }
            return retry
        }
        // A ready link is heard until a fact says otherwise: time alone changes nothing.
        guard !readyCounts(link, joinVia: setup.joinVia) else { return nil }
        var deadlines: [Date] = []
        let outOfRangeFrom: Date
        if let lastInRange = lastMeasurementHeard(link, joinVia: setup.joinVia)?.addingTimeInterval(
            setup.heardWithin), now <= lastInRange
        {
            // Shown out of range from the first instant after the last one in range.
            outOfRangeFrom = Date(timeIntervalSinceReferenceDate: lastInRange.timeIntervalSinceReferenceDate.nextUp)
            deadlines.append(outOfRangeFrom)
        } else {
            outOfRangeFrom = now
        }
        let leaves = (member.lastHeard ?? member.joined).addingTimeInterval(setup.leaveAfter)
        deadlines.append(max(leaves, outOfRangeFrom))
        return deadlines.filter { $0 > now }.min()
    }

    /// The class as the API shows it (nil before the first).
    public var json: ClassJSON? {
        guard let current else { return nil }
        let members = current.members.values.sorted { $0.strap < $1.strap }.map { member in
            let state: ClassMemberState = member.session == nil ? .left : member.shownInRange ? .in : .outOfRange
            return ClassJSON.Member(
                sensor: member.strap, athlete: member.athlete, state: state,
                session: member.session.map { $0.uuidString.lowercased() },
                sessions: member.sessions.map { $0.uuidString.lowercased() }, joined: ISO8601.format(member.joined),
                lastHeard: member.lastHeard.map(ISO8601.format), left: member.left.map(ISO8601.format),
                leftBecause: member.leftBecause)
        }
        let setup = current.setup
        return ClassJSON(
            id: setup.id.uuidString.lowercased(), state: current.end == nil ? "running" : "ended",
            activity: setup.activity.rawValue, location: setup.location.rawValue, start: ISO8601.format(current.start),
            end: current.end.map(ISO8601.format), autoJoin: setup.autoJoin, leaveAfter: setup.leaveAfter,
            joinVia: setup.joinVia, members: members)
    }

    /// What one fact leads to.
    private struct Outcome {
        var ends: [Action] = []
        var starts: [Action] = []
        var changed = false

        var actions: [Action] { ends + (changed ? [.publish] : []) + starts }
    }

    private mutating func stop(at now: Date) -> [Action] {
        guard var running = current, running.end == nil else { return [] }
        var ends: [Action] = []
        for strap in running.members.keys.sorted() {
            guard let session = running.members[strap]?.session else { continue }
            ends.append(.endSession(session, strap: strap, because: .classEnded))
            running.members[strap]?.session = nil
            running.members[strap]?.left = now
            running.members[strap]?.leftBecause = .classEnded
        }
        running.end = now
        current = running
        pendingStarts = [:]
        retryAt = [:]
        return ends + [.publish]
    }

    /// Whether a member silent since it was last heard (or joined) has reached its leaving time.
    private static func isPastLeaving(_ member: Member, at now: Date, setup: Setup) -> Bool {
        now >= (member.lastHeard ?? member.joined).addingTimeInterval(setup.leaveAfter)
    }

    /// Whether the strap's member, judged on what is known of its link now, has left the class:
    /// out of range and past its leaving time (a judgement the timer may not have made yet).
    private func hasLeft(_ address: String, at now: Date) -> Bool {
        guard let running = current, running.end == nil, var member = running.members[address], member.session != nil,
            let link = links[address]
        else { return false }
        let heard = whenHeard(link, at: now, joinVia: running.setup.joinVia)
        if let heard, member.lastHeard.map({ heard > $0 }) ?? true { member.lastHeard = heard }
        return !isInRange(heard, at: now, within: running.setup.heardWithin)
            && Self.isPastLeaving(member, at: now, setup: running.setup)
    }

    /// When the strap is heard: now while its link is ready, else its last measurement that counts.
    private func whenHeard(_ link: Link, at now: Date, joinVia: ClassJoinPath) -> Date? {
        readyCounts(link, joinVia: joinVia) ? now : lastMeasurementHeard(link, joinVia: joinVia)
    }

    /// Whether a ready link makes the strap heard now: any link where broadcasts count, else only
    /// one whose frames come bonded.
    private func readyCounts(_ link: Link, joinVia: ClassJoinPath) -> Bool {
        link.state == .ready && (joinVia == .broadcast || link.lastFrameBonded)
    }

    /// The last measurement, when its path counts: a broadcast only where broadcasts sign in.
    private func lastMeasurementHeard(_ link: Link, joinVia: ClassJoinPath) -> Date? {
        switch joinVia {
        case .broadcast: link.lastMeasurement
        case .link: link.lastLinkFrame
        }
    }

    private func isInRange(_ heard: Date?, at now: Date, within seconds: TimeInterval) -> Bool {
        heard.map { now <= $0.addingTimeInterval(seconds) } ?? false
    }

    private mutating func join(_ started: SessionStarted, at now: Date) {
        guard var running = current else { return }
        var member =
            running.members[started.strap]
            ?? Member(strap: started.strap, athlete: started.athlete, joined: now)
        // Back with a session started by hand for someone else: the row names whom it records now.
        member.athlete = started.athlete
        member.session = started.session
        member.sessions.append(started.session)
        member.lastHeard = links[started.strap].flatMap { whenHeard($0, at: now, joinVia: running.setup.joinVia) }
        member.left = nil
        member.leftBecause = nil
        member.shownInRange = true
        running.members[started.strap] = member
        current = running
    }

    /// One judgement of every configured strap (or only of the one at `only`): who is out of range,
    /// who leaves, who joins.
    private mutating func judge(at now: Date, into outcome: inout Outcome, only: String? = nil) {
        guard var running = current, running.end == nil else { return }
        // Taken out while judged: the members are changed in place, not copied.
        current = nil
        defer { current = running }
        let setup = running.setup
        let judged = only.map { address in strapIndex[address].map { [setup.straps[$0]] } ?? [] } ?? setup.straps
        for strap in judged {
            let address = strap.address
            guard let link = links[address] else { continue }
            let heard = whenHeard(link, at: now, joinVia: setup.joinVia)
            let inRange = isInRange(heard, at: now, within: setup.heardWithin)
            if var member = running.members[address], let session = member.session {
                if let heard, member.lastHeard.map({ heard > $0 }) ?? true { member.lastHeard = heard }
                if !inRange, Self.isPastLeaving(member, at: now, setup: setup) {
                    outcome.ends.append(.endSession(session, strap: address, because: .outOfRange))
                    member.session = nil
                    member.left = now
                    member.leftBecause = .outOfRange
                    outcome.changed = true
                } else if member.shownInRange != inRange {
                    member.shownInRange = inRange
                    outcome.changed = true
                }
                running.members[address] = member
                continue
            }
            guard !pendingStarts.values.contains(address), retryAt[address].map({ now >= $0 }) ?? true else {
                continue
            }
            // A session started by hand on a configured strap is part of the class either way; one
            // the class had already (and saw end) is not taken back.
            let recorded = link.session.flatMap { running.members[address]?.sessions.contains($0) == true ? nil : $0 }
            let signsIn = setup.autoJoin && inRange && running.members[address]?.leftBecause != .stopped
            guard signsIn || recorded != nil else { continue }
            lastTicket += 1
            pendingStarts[lastTicket] = address
            outcome.starts.append(
                .startSession(
                    SessionStart(
                        ticket: lastTicket, strap: address, athlete: strap.athlete, activity: setup.activity,
                        location: setup.location, adopting: recorded)))
        }
    }
}
