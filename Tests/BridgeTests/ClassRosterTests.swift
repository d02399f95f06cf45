import Foundation
import GATT
import Logging
import SensorSimulator
import Sensors
import Testing
import Wire
import Workouts

@testable import Bridge

private let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)
private let alice = "C0:FF:EE:00:00:01"
private let bob = "C0:FF:EE:00:00:02"
private let stranger = "C0:FF:EE:00:00:09"
private let classID = UUID(uuidString: "00000000-0000-0000-0000-0000000C1A55")!

/// The date `seconds` after the origin.
private func at(_ seconds: TimeInterval) -> Date { origin.addingTimeInterval(seconds) }

/// Session `number`'s identifier.
private func session(_ number: Int) -> UUID {
    UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", number))!
}

/// A class of Alice's strap (athlete `alice`) and Bob's (no athlete): 10 s heard, 60 s to leave;
/// broadcasts sign in unless `joinVia` says otherwise.
private func setup(autoJoin: Bool = true, joinVia: ClassJoinPath = .broadcast) -> ClassRoster.Setup {
    ClassRoster.Setup(
        id: classID, activity: .cycling, location: .indoor, autoJoin: autoJoin, leaveAfter: 60, heardWithin: 10,
        joinVia: joinVia,
        straps: [ClassRoster.Strap(address: alice, athlete: "alice"), ClassRoster.Strap(address: bob)])
}

private func starts(_ strap: String, ticket: Int, adopting: UUID? = nil) -> ClassRoster.Action {
    .startSession(
        ClassRoster.SessionStart(
            ticket: ticket, strap: strap, athlete: strap == alice ? "alice" : nil, activity: .cycling,
            location: .indoor, adopting: adopting))
}

private func started(_ strap: String, ticket: Int, session number: Int, adopted: Bool = false) -> ClassRoster.Fact {
    .sessionStarted(
        ClassRoster.SessionStarted(
            ticket: ticket, strap: strap, session: session(number), athlete: strap == alice ? "alice" : "strap",
            adopted: adopted))
}

/// A broadcast heard at `seconds`, without a link.
private func broadcast(_ strap: String, heard seconds: TimeInterval, session: UUID? = nil) -> ClassRoster.Fact {
    .link(strap, ClassRoster.Link(state: .seen, lastMeasurement: at(seconds), via: .advertisement, session: session))
}

/// A roster and the actions of its last fact.
private struct RosterDriver {
    var roster = ClassRoster()
    var actions: [ClassRoster.Action] = []

    @discardableResult
    mutating func feed(_ fact: ClassRoster.Fact, at seconds: TimeInterval) -> [ClassRoster.Action] {
        actions = roster.handle(fact, at: at(seconds))
        return actions
    }

    func member(_ strap: String) -> ClassJSON.Member? { roster.json?.members.first { $0.sensor == strap } }

    /// The next deadline, in seconds after the origin.
    var deadline: TimeInterval? { roster.nextDeadline.map { $0.timeIntervalSince(origin) } }

    /// A running class in which Alice joined at 0 (session 1), her strap broadcasting, last heard at 0.
    static func aliceIn(autoJoin: Bool = true) -> RosterDriver {
        var driver = RosterDriver()
        driver.feed(broadcast(alice, heard: 0), at: 0)
        driver.feed(.classStarted(setup(autoJoin: autoJoin)), at: 0)
        driver.feed(started(alice, ticket: 1, session: 1), at: 0)
        return driver
    }
}

/// The first instant after `seconds` (after the origin).
private func justAfter(_ seconds: TimeInterval) -> TimeInterval {
    Date(timeIntervalSinceReferenceDate: at(seconds).timeIntervalSinceReferenceDate.nextUp).timeIntervalSince(origin)
}

@Suite("Class roster: facts in, joins and leaves out")
struct ClassRosterTests {
    @Test(
        "a frame judges its own strap only, and every member once a deadline has passed (the timer may come late)"
    )
    func frameJudgesOthersOnlyPastADeadline() {
        var driver = RosterDriver.aliceIn()
        driver.feed(broadcast(bob, heard: 0), at: 0)
        #expect(driver.actions == [starts(bob, ticket: 2), .publish] || driver.actions == [starts(bob, ticket: 2)])
        driver.feed(started(bob, ticket: 2, session: 2), at: 0)
        // Alice is silent from 0; Bob's frames keep coming. Before her deadline (just after 10 s) a
        // frame of Bob's changes nothing of hers.
        #expect(driver.deadline == justAfter(10))
        driver.feed(broadcast(bob, heard: 5), at: 5)
        #expect(driver.member(alice)?.state == .in)
        // No timer fact came at 10 s: Bob's frame at 12 s judges her too.
        driver.feed(broadcast(bob, heard: 12), at: 12)
        #expect(driver.member(alice)?.state == .outOfRange)
        #expect(driver.actions == [.publish])
        driver.feed(broadcast(bob, heard: 30), at: 30)
        #expect(driver.member(alice)?.state == .outOfRange)
        #expect(driver.actions.isEmpty)
        // Past her leaving time (60 s after she was last heard) the next frame of anyone ends her session.
        driver.feed(broadcast(bob, heard: 61), at: 61)
        #expect(driver.actions == [.endSession(session(1), strap: alice, because: .outOfRange), .publish])
        #expect(driver.member(bob)?.state == .in)
    }

    @Test(
        "a strap heard again past its leaving time while the timer is late leaves and joins again, as with a punctual timer"
    )
    func lateTimerOwnFrame() {
        var punctual = RosterDriver.aliceIn()
        // On time: out of range just after 10 s, gone at 60 s, back with her frame at 75 s.
        punctual.feed(.time, at: justAfter(10))
        punctual.feed(.time, at: 60)
        #expect(punctual.actions.first == .endSession(session(1), strap: alice, because: .outOfRange))
        punctual.feed(broadcast(alice, heard: 75), at: 75)
        #expect(punctual.actions == [starts(alice, ticket: 2)])
        // No timer fact at all: her own frame at 75 s ends the first session before starting another.
        var late = RosterDriver.aliceIn()
        late.feed(broadcast(alice, heard: 75), at: 75)
        #expect(
            late.actions == [
                .endSession(session(1), strap: alice, because: .outOfRange), .publish, starts(alice, ticket: 2),
            ])
        #expect(late.member(alice)?.state == punctual.member(alice)?.state)
        // Heard again before her leaving time, with the timer late: she stays in the same session.
        var early = RosterDriver.aliceIn()
        early.feed(broadcast(alice, heard: 30), at: 30)
        #expect(early.actions.allSatisfy { if case .endSession = $0 { false } else { true } })
        #expect(early.member(alice)?.session == session(1).uuidString.lowercased())
        #expect(early.member(alice)?.state == .in)
    }

    /// A strap's link at 100 s, and whether it is in range (so it joins at the class's start).
    struct Reach: CustomTestStringConvertible, Sendable {
        let name: String
        let link: ClassRoster.Link
        let joins: Bool
        var testDescription: String { name }
    }

    @Test(
        "in range: a ready link, or a measurement (a link frame or a broadcast) heard within heardWithin",
        arguments: [
            Reach(name: "ready, never measured", link: .init(state: .ready), joins: true),
            Reach(name: "broadcast heard 5 s ago", link: .init(state: .seen, lastMeasurement: at(95)), joins: true),
            Reach(
                name: "broadcast heard exactly 10 s ago", link: .init(state: .seen, lastMeasurement: at(90)),
                joins: true),
            Reach(
                name: "broadcast heard 10.001 s ago", link: .init(state: .seen, lastMeasurement: at(89.999)),
                joins: false),
            Reach(
                name: "connected, frame 1 s ago", link: .init(state: .connected, lastMeasurement: at(99)), joins: true),
            Reach(name: "disconnected, never heard", link: .init(state: .disconnected), joins: false),
            Reach(
                name: "disconnected, heard 11 s ago", link: .init(state: .disconnected, lastMeasurement: at(89)),
                joins: false),
        ])
    func inRange(_ reach: Reach) {
        var driver = RosterDriver()
        driver.feed(.link(alice, reach.link), at: 100)
        let actions = driver.feed(.classStarted(setup()), at: 100)
        #expect(actions == [.publish] + (reach.joins ? [starts(alice, ticket: 1)] : []))
    }

    @Test("a class starts with auto-join: configured straps in range are asked to join, an unconfigured one is not")
    func startWithAutoJoin() throws {
        var driver = RosterDriver()
        #expect(driver.roster.json == nil && driver.deadline == nil, "no class before the first")
        driver.feed(.link(alice, .init(state: .ready)), at: -1)
        driver.feed(broadcast(bob, heard: -5), at: -1)
        driver.feed(.link(stranger, .init(state: .ready)), at: -1)
        #expect(
            driver.feed(.classStarted(setup()), at: 0) == [.publish, starts(alice, ticket: 1), starts(bob, ticket: 2)])
        #expect(driver.roster.runningClassID == classID)
        let json = try #require(driver.roster.json)
        #expect(json.state == "running" && json.members.isEmpty && json.autoJoin && json.leaveAfter == 60)
        #expect(json.activity == "cycling" && json.start == ISO8601.format(at(0)))
        // Asked once: facts while the starts are under way ask nothing more.
        #expect(driver.feed(.link(alice, .init(state: .ready)), at: 0.5) == [])
        #expect(driver.feed(.link(stranger, .init(state: .ready, session: session(9))), at: 0.5) == [])
        #expect(driver.feed(.classStarted(setup()), at: 1) == [], "one class at a time")
    }

    @Test("without auto-join nobody in range joins, but a strap recording a session started by hand joins with it")
    func startWithoutAutoJoin() {
        var driver = RosterDriver()
        driver.feed(.link(alice, .init(state: .ready)), at: 0)
        driver.feed(.link(bob, .init(state: .ready, session: session(7))), at: 0)
        #expect(
            driver.feed(.classStarted(setup(autoJoin: false)), at: 0) == [
                .publish, starts(bob, ticket: 1, adopting: session(7)),
            ])
        #expect(driver.feed(started(bob, ticket: 1, session: 7, adopted: true), at: 1) == [.publish])
        #expect(driver.member(bob)?.sessions == [session(7).uuidString.lowercased()])
        #expect(driver.member(alice) == nil)
    }

    @Test("a configured strap in range joins under its athlete: in, its session, when it was heard")
    func joins() throws {
        var driver = RosterDriver()
        driver.feed(.classStarted(setup()), at: 0)
        #expect(driver.feed(broadcast(alice, heard: 3), at: 3) == [starts(alice, ticket: 1)])
        #expect(driver.feed(started(alice, ticket: 1, session: 1), at: 4) == [.publish])
        let member = try #require(driver.member(alice))
        #expect(member.athlete == "alice" && member.state == .in)
        #expect(member.session == session(1).uuidString.lowercased())
        #expect(member.sessions == [session(1).uuidString.lowercased()])
        #expect(member.joined == ISO8601.format(at(4)) && member.lastHeard == ISO8601.format(at(3)))
        #expect(member.left == nil && member.leftBecause == nil)
        #expect(driver.roster.memberSessions == [session(1)])
        #expect(driver.feed(started(alice, ticket: 1, session: 1), at: 4.5) == [], "told twice")
        #expect(
            driver.feed(started(alice, ticket: 1, session: 2), at: 5) == [
                .endSession(session(2), strap: alice, because: .classEnded)
            ], "an answer to no start under way is not a member")
    }

    @Test("an unconfigured strap never joins, in range or recording")
    func unconfiguredStrap() {
        var driver = RosterDriver()
        driver.feed(.classStarted(setup()), at: 0)
        #expect(driver.feed(.link(stranger, .init(state: .ready, session: session(5))), at: 1) == [])
        #expect(driver.feed(broadcast(stranger, heard: 2), at: 2) == [])
        #expect(driver.roster.json?.members.isEmpty == true)
    }

    /// Where Alice is at a time, her strap last heard at 0 and silent since.
    struct Silence: CustomTestStringConvertible, Sendable {
        let seconds: TimeInterval
        let state: ClassMemberState
        var testDescription: String { "\(seconds) s" }
    }

    @Test(
        "silent since 0: in until 10 s, out of range after, left at exactly 60 s and not 1 ms before",
        arguments: [
            Silence(seconds: 9.999, state: .in), Silence(seconds: 10, state: .in),
            Silence(seconds: 10.001, state: .outOfRange), Silence(seconds: 59.999, state: .outOfRange),
            Silence(seconds: 60, state: .left), Silence(seconds: 600, state: .left),
        ])
    func silence(_ row: Silence) {
        var driver = RosterDriver.aliceIn()
        let actions = driver.feed(.time, at: row.seconds)
        #expect(driver.member(alice)?.state == row.state)
        switch row.state {
        case .in: #expect(actions == [])
        case .outOfRange: #expect(actions == [.publish])
        case .left: #expect(actions == [.endSession(session(1), strap: alice, because: .outOfRange), .publish])
        }
    }

    @Test("the deadlines: the first instant out of range, then the leave; none once left")
    func deadlines() throws {
        var driver = RosterDriver.aliceIn()
        #expect(driver.deadline == justAfter(10))
        #expect(driver.feed(.time, at: justAfter(10)) == [.publish])
        #expect(driver.member(alice)?.state == .outOfRange)
        #expect(driver.deadline == 60)
        #expect(driver.feed(.time, at: 60) == [.endSession(session(1), strap: alice, because: .outOfRange), .publish])
        let member = try #require(driver.member(alice))
        #expect(member.state == .left && member.leftBecause == .outOfRange && member.left == ISO8601.format(at(60)))
        #expect(member.session == nil && member.lastHeard == ISO8601.format(at(0)))
        #expect(driver.deadline == nil)
        #expect(driver.feed(.time, at: 61) == [], "told the time with nothing due: nothing")
    }

    @Test("heard again while out of range: shown in again, and the leave moves")
    func backInRange() {
        var driver = RosterDriver.aliceIn()
        driver.feed(.time, at: 30)
        #expect(driver.member(alice)?.state == .outOfRange)
        #expect(driver.feed(broadcast(alice, heard: 40), at: 40) == [.publish])
        #expect(driver.member(alice)?.state == .in && driver.member(alice)?.lastHeard == ISO8601.format(at(40)))
        #expect(driver.deadline == justAfter(50))
        #expect(driver.feed(.time, at: 99.999) == [.publish])
        #expect(driver.deadline == 100)
    }

    @Test(
        "join via link: a broadcast or a link without a bond neither signs a strap in nor keeps its athlete in; a bonded link does"
    )
    func joinViaLink() {
        var driver = RosterDriver()
        driver.feed(.classStarted(setup(joinVia: .link)), at: 0)
        #expect(driver.roster.json?.joinVia == .link)
        // Anyone's radio can say this: nobody signs in, and nothing is due.
        #expect(driver.feed(broadcast(alice, heard: 5), at: 5) == [])
        #expect(driver.member(alice) == nil && driver.deadline == nil)
        // A link without a bond: whoever answers under the address could be anyone.
        let unbonded = ClassRoster.Link(state: .ready, lastMeasurement: at(15), via: .connection, bonded: false)
        #expect(driver.feed(.link(alice, unbonded), at: 15) == [])
        #expect(driver.member(alice) == nil && driver.deadline == nil)
        let linked = ClassRoster.Link(state: .ready, lastMeasurement: at(20), via: .connection, bonded: true)
        #expect(driver.feed(.link(alice, linked), at: 20) == [starts(alice, ticket: 1)])
        driver.feed(started(alice, ticket: 1, session: 1), at: 20)
        #expect(driver.member(alice)?.state == .in)
        // The link drops at 30 after a frame at 29; broadcasts go on: out of range once that frame
        // is 10 s old, gone 60 s after it.
        let dropped = ClassRoster.Link(state: .disconnected, lastMeasurement: at(29), via: .connection, bonded: true)
        driver.feed(.link(alice, dropped), at: 30)
        #expect(driver.deadline == justAfter(39))
        #expect(driver.feed(broadcast(alice, heard: 35), at: 35) == [])
        #expect(driver.deadline == justAfter(39), "the broadcast does not count")
        #expect(driver.feed(.time, at: justAfter(39)) == [.publish])
        #expect(driver.member(alice)?.state == .outOfRange)
        #expect(driver.member(alice)?.lastHeard == ISO8601.format(at(29)))
        driver.feed(broadcast(alice, heard: 88), at: 88)
        #expect(driver.feed(.time, at: 89) == [.endSession(session(1), strap: alice, because: .outOfRange), .publish])
        // Broadcasts alone do not bring her back.
        #expect(driver.feed(broadcast(alice, heard: 95), at: 95) == [])
        #expect(driver.member(alice)?.state == .left)
    }

    @Test("a ready link is heard for as long as it lasts: no deadline; after it drops, silence counts from then")
    func readyLink() {
        var driver = RosterDriver()
        driver.feed(.link(alice, .init(state: .ready, lastMeasurement: at(0))), at: 0)
        driver.feed(.classStarted(setup()), at: 0)
        driver.feed(started(alice, ticket: 1, session: 1), at: 0)
        #expect(driver.deadline == nil)
        #expect(driver.feed(.link(alice, .init(state: .ready, lastMeasurement: at(20))), at: 20) == [])
        #expect(driver.feed(.time, at: 500) == [], "nothing is due while linked")
        #expect(driver.member(alice)?.lastHeard == ISO8601.format(at(500)))
        let dropped = ClassRoster.Link(state: .disconnected, lastMeasurement: at(500))
        #expect(driver.feed(.link(alice, dropped), at: 501) == [])
        #expect(driver.deadline == justAfter(510))
        driver.feed(.time, at: justAfter(510))
        #expect(driver.deadline == 560)
        #expect(driver.feed(.time, at: 560) == [.endSession(session(1), strap: alice, because: .outOfRange), .publish])
    }

    @Test("back in range after leaving: joins again in a second session")
    func rejoin() throws {
        var driver = RosterDriver.aliceIn()
        driver.feed(.time, at: 60)
        #expect(driver.feed(broadcast(alice, heard: 100), at: 100) == [starts(alice, ticket: 2)])
        #expect(driver.member(alice)?.state == .left, "left until its session runs")
        #expect(driver.feed(started(alice, ticket: 2, session: 2), at: 101) == [.publish])
        let member = try #require(driver.member(alice))
        #expect(member.state == .in && member.session == session(2).uuidString.lowercased())
        #expect(member.sessions == [session(1), session(2)].map { $0.uuidString.lowercased() })
        #expect(member.joined == ISO8601.format(at(0)), "joined the class once")
        #expect(member.left == nil && member.leftBecause == nil)
    }

    @Test(
        "a session stopped through the API: left (stopped), not back by itself; a session started by hand brings it back"
    )
    func stoppedThroughTheAPI() throws {
        var driver = RosterDriver.aliceIn()
        #expect(driver.feed(.sessionEnded(session(8)), at: 20) == [], "not a member's session")
        #expect(driver.feed(.sessionEnded(session(1)), at: 20) == [.publish])
        let member = try #require(driver.member(alice))
        #expect(member.state == .left && member.leftBecause == .stopped && member.left == ISO8601.format(at(20)))
        #expect(driver.feed(.sessionEnded(session(1)), at: 21) == [], "told twice")
        // Still recording session 1 as the sensor manager last said: not taken back.
        #expect(driver.feed(.link(alice, .init(state: .ready, session: session(1))), at: 30) == [])
        #expect(driver.feed(.link(alice, .init(state: .ready)), at: 31) == [])
        #expect(driver.deadline == nil)
        #expect(
            driver.feed(.link(alice, .init(state: .ready, session: session(5))), at: 40) == [
                starts(alice, ticket: 2, adopting: session(5))
            ])
        // Started by hand for another athlete: the row names whom it records now.
        #expect(
            driver.feed(
                .sessionStarted(
                    .init(ticket: 2, strap: alice, session: session(5), athlete: "carol", adopted: true)), at: 40)
                == [.publish])
        #expect(driver.member(alice)?.state == .in && driver.member(alice)?.sessions.count == 2)
        #expect(driver.member(alice)?.athlete == "carol")
    }

    @Test("a join whose session does not start is asked again a second later, not before")
    func failedStart() {
        var driver = RosterDriver()
        driver.feed(.link(alice, .init(state: .ready)), at: 0)
        driver.feed(.classStarted(setup()), at: 0)
        #expect(driver.feed(.sessionNotStarted(ticket: 1), at: 0.25) == [])
        #expect(driver.deadline == 0.25 + ClassRoster.retryInterval)
        #expect(driver.feed(.link(alice, .init(state: .ready)), at: 1.125) == [])
        #expect(driver.feed(.sessionNotStarted(ticket: 1), at: 1.125) == [], "told twice")
        #expect(driver.feed(.time, at: 1.25) == [starts(alice, ticket: 2)])
        #expect(driver.deadline == nil, "a start under way has no deadline")
        #expect(driver.feed(started(alice, ticket: 2, session: 1), at: 1.5) == [.publish])
    }

    @Test("the class stops: every session ends (class ended), a start under way ends when it comes late")
    func classStops() throws {
        var driver = RosterDriver.aliceIn()
        driver.feed(broadcast(bob, heard: 1), at: 1)
        driver.feed(started(bob, ticket: 2, session: 2), at: 1)
        driver.feed(.sessionEnded(session(2)), at: 2)
        driver.feed(.link(bob, .init(state: .ready, session: session(3))), at: 3)
        #expect(driver.roster.memberSessions == [session(1)])
        #expect(
            driver.feed(.classStopped, at: 5) == [
                .endSession(session(1), strap: alice, because: .classEnded), .publish,
            ])
        let json = try #require(driver.roster.json)
        #expect(json.state == "ended" && json.end == ISO8601.format(at(5)))
        #expect(json.members.allSatisfy { $0.state == .left && $0.session == nil })
        #expect(json.members.map(\.leftBecause) == [.classEnded, .stopped], "Bob had left before")
        #expect(driver.roster.runningClassID == nil && driver.roster.memberSessions.isEmpty && driver.deadline == nil)
        // Bob's adoption of session 3 was under way (ticket 3): left alone; a session the class started ends.
        #expect(driver.feed(started(bob, ticket: 3, session: 3, adopted: true), at: 6) == [])
        #expect(
            driver.feed(started(bob, ticket: 3, session: 4), at: 6) == [
                .endSession(session(4), strap: bob, because: .classEnded)
            ])
        #expect(driver.feed(broadcast(alice, heard: 7), at: 7) == [])
        #expect(driver.feed(.sessionEnded(session(1)), at: 7) == [])
        #expect(driver.feed(.classStopped, at: 8) == [], "nothing left to stop")
        #expect(driver.roster.json?.end == ISO8601.format(at(5)))
        // A new class: nobody is a member of it yet; Bob's strap still records session 3, so it joins with it.
        #expect(
            driver.feed(.classStarted(setup()), at: 10) == [
                .publish, starts(alice, ticket: 4), starts(bob, ticket: 5, adopting: session(3)),
            ])
        #expect(driver.roster.json?.members.isEmpty == true)
    }

    @Test("time going backwards: nobody leaves early, when last heard never moves back")
    func timeGoesBackwards() {
        var driver = RosterDriver.aliceIn()
        // Heard often enough to stay in (a gap past 60 s would make her leave, timer or not).
        driver.feed(broadcast(alice, heard: 50), at: 50)
        driver.feed(broadcast(alice, heard: 100), at: 100)
        #expect(driver.feed(.time, at: 50) == [])
        #expect(driver.member(alice)?.state == .in && driver.member(alice)?.lastHeard == ISO8601.format(at(100)))
        #expect(driver.deadline == justAfter(110))
        #expect(driver.feed(broadcast(alice, heard: 40), at: 40) == [])
        #expect(driver.member(alice)?.lastHeard == ISO8601.format(at(100)))
        #expect(driver.feed(.time, at: 159.999) == [.publish])
        #expect(driver.feed(.time, at: 160) == [.endSession(session(1), strap: alice, because: .outOfRange), .publish])
    }

    @Test(
        "member states keep their JSON strings",
        arguments: zip(ClassMemberState.allCases, ["in", "out of range", "left"]))
    func memberStateStrings(_ state: ClassMemberState, _ text: String) throws {
        #expect(try JSONEncoder().encode(state) == Data("\"\(text)\"".utf8))
        #expect(try JSONDecoder().decode(ClassMemberState.self, from: Data("\"\(text)\"".utf8)) == state)
    }

    @Test(
        "leave reasons keep their JSON strings",
        arguments: zip(LeaveReason.allCases, ["out of range", "stopped", "class ended"]))
    func leaveReasonStrings(_ reason: LeaveReason, _ text: String) throws {
        #expect(try JSONEncoder().encode(reason) == Data("\"\(text)\"".utf8))
        #expect(try JSONDecoder().decode(LeaveReason.self, from: Data("\"\(text)\"".utf8)) == reason)
    }

    @Test("a member encodes with its state and reason as strings")
    func memberJSON() throws {
        var driver = RosterDriver.aliceIn()
        driver.feed(.time, at: 60)
        let member = try #require(driver.member(alice))
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(member)) as? [String: Any])
        #expect(object["state"] as? String == "left" && object["leftBecause"] as? String == "out of range")
        #expect(object["session"] is NSNull)
        let decoded = try JSONDecoder().decode(ClassJSON.Member.self, from: JSONEncoder().encode(member))
        #expect(decoded == member)
    }
}

/// Sessions that start when the test says so (with `holds`), and remember what started and ended.
private actor HeldSessions: ClassSessions {
    /// Starts are held until ``release()``; after it, none is.
    private var holds: Bool
    private var held: [CheckedContinuation<Void, Never>] = []
    private var askers: [CheckedContinuation<Void, Never>] = []
    private(set) var started: [UUID] = []
    private(set) var ended: [UUID] = []
    /// Ends held until ``releaseEnds()`` (a store slow to save), once ``holdEnds()`` was called.
    private var holdingEnds = false
    private var heldEnds: [CheckedContinuation<Void, Never>] = []
    private var endAskers: [CheckedContinuation<Void, Never>] = []

    init(holds: Bool) { self.holds = holds }

    func startSession(strap: String, athlete: String?, activity: WorkoutActivityType, location: WorkoutLocation)
        async throws(SessionError) -> (id: UUID, athlete: String)
    {
        if holds {
            await withCheckedContinuation { continuation in
                held.append(continuation)
                for asker in askers { asker.resume() }
                askers = []
            }
        }
        let id = session(started.count + 1)
        started.append(id)
        return (id, athlete ?? "strap")
    }

    func runningAthlete(of session: UUID) -> String? {
        started.contains(session) && !ended.contains(session) ? "alice" : nil
    }

    func endSession(_ session: UUID) async {
        if holdingEnds {
            await withCheckedContinuation { continuation in
                heldEnds.append(continuation)
                for asker in endAskers { asker.resume() }
                endAskers = []
            }
        }
        ended.append(session)
    }

    func holdEnds() { holdingEnds = true }

    /// Returns once a session end is held.
    func untilEndAsked() async {
        guard heldEnds.isEmpty else { return }
        await withCheckedContinuation { endAskers.append($0) }
    }

    /// Lets the held ends finish, and ends the ones after at once.
    func releaseEnds() {
        holdingEnds = false
        for continuation in heldEnds { continuation.resume() }
        heldEnds = []
    }

    /// Returns once a session start is held.
    func untilAsked() async {
        guard held.isEmpty else { return }
        await withCheckedContinuation { askers.append($0) }
    }

    /// Lets the held session starts finish, and the later ones run at once.
    func release() {
        holds = false
        for continuation in held { continuation.resume() }
        held = []
    }
}

extension ClassRosterTests {
    /// The manager around the roster: real sensor manager and hub, sessions held by the test, a
    /// clock that moves only when told.
    @Suite("Class roster in the class manager")
    struct InTheManager {
        let clock = ManualWallClock(now: origin)
        let hub = LiveHub()
        let strap = SensorIdentity(adapter: "mock", address: alice, name: "Alice H10")

        private func manager(_ sessions: HeldSessions, bobToo: Bool = false, autoJoin: Bool = true) -> (
            ClassManager, SensorManager
        ) {
            var configuration = BridgeConfiguration()
            configuration.sensors = [BridgeConfiguration.KnownSensor(address: alice, athlete: "alice")]
            if bobToo { configuration.sensors.append(BridgeConfiguration.KnownSensor(address: bob, athlete: "bob")) }
            configuration.classSettings.autoJoin = autoJoin
            configuration.classSettings.leaveAfter = 60
            configuration.classSettings.joinVia = .broadcast
            let logger = Logger(label: "test")
            let sensors = SensorManager(
                adapter: MockSensorAdapter(scenario: .default, clock: clock, logger: logger),
                known: configuration.sensors, hub: hub, logger: logger)
            let classes = ClassManager(
                configuration: configuration, sensors: sensors, sessions: sessions, clock: clock, hub: hub,
                logger: logger)
            return (classes, sensors)
        }

        /// A broadcast of Alice's strap heard now.
        func broadcast(_ sensors: SensorManager) async {
            await sensors.handle(
                .measurement(
                    SensorMeasurement(
                        sensor: strap, characteristic: .heartRateMeasurement,
                        value: .heartRateMeasurement(HeartRateMeasurement(heartRate: 120)), receivedAt: clock.now(),
                        via: .advertisement)))
        }

        /// The class once `condition` holds of it, waiting for its live messages.
        func awaitClass(
            _ classes: ClassManager, _ updates: LiveSubscription, _ condition: (ClassJSON) -> Bool
        ) async -> ClassJSON? {
            if let current = await classes.snapshot, condition(current) { return current }
            for await _ in updates {
                if let current = await classes.snapshot, condition(current) { return current }
            }
            return nil
        }

        @Test(
            "a class stopped while a member's session starts stays stopped: the late session ends, nobody is left in it"
        )
        func stopDuringJoin() async throws {
            let sessions = HeldSessions(holds: true)
            let (classes, sensors) = manager(sessions)
            await sensors.handle(.connectionChanged(strap, .ready))
            await classes.refresh(alice)
            async let starting = classes.start(ClassRequest())
            await sessions.untilAsked()
            let ended = try await classes.stop()
            #expect(ended.state == "ended" && ended.members.isEmpty)
            await sessions.release()
            let answered = try await starting
            #expect(answered.state == "ended")
            let late = try #require(await sessions.started.first)
            #expect(await sessions.ended == [late], "the session that started late is ended")
            let snapshot = try #require(await classes.snapshot)
            #expect(snapshot.state == "ended" && snapshot.members.allSatisfy { $0.session == nil })
            // It stays stopped: a strap in range changes nothing, and there is nothing to stop.
            await classes.refresh(alice)
            #expect(await classes.snapshot == snapshot)
            await #expect(throws: ClassManager.Refusal.noClass) { try await classes.stop() }
        }

        @Test(
            "a start queued behind a held one does not run once the class stopped: one session started, not two",
            .timeLimit(.minutes(1)))
        func queuedStartAfterStop() async throws {
            let sessions = HeldSessions(holds: true)
            let (classes, sensors) = manager(sessions, bobToo: true)
            let bobStrap = SensorIdentity(adapter: "mock", address: bob, name: "Bob H10")
            await sensors.handle(.connectionChanged(strap, .ready))
            await sensors.handle(.connectionChanged(bobStrap, .ready))
            await classes.refresh(alice)
            await classes.refresh(bob)
            async let starting = classes.start(ClassRequest())
            await sessions.untilAsked()
            _ = try await classes.stop()
            await sessions.release()
            _ = try await starting
            let started = await sessions.started
            #expect(started.count == 1, "\(started)")
            #expect(await sessions.ended == started)
        }

        @Test(
            "a class asked for while the last one is still ending its sessions is refused, then starts once they are",
            .timeLimit(.minutes(1)))
        func startWhileEnding() async throws {
            let sessions = HeldSessions(holds: false)
            let (classes, sensors) = manager(sessions)
            await sensors.handle(.connectionChanged(strap, .ready))
            await classes.refresh(alice)
            let first = try await classes.start(ClassRequest())
            #expect(await sessions.started == [session(1)])
            await sessions.holdEnds()
            async let stopping = classes.stop()
            await sessions.untilEndAsked()
            let firstID = try #require(UUID(uuidString: first.id))
            await #expect(throws: ClassManager.Refusal.stillEnding(firstID)) {
                try await classes.start(ClassRequest())
            }
            await sessions.releaseEnds()
            _ = try await stopping
            let second = try await classes.start(ClassRequest())
            #expect(second.state == "running")
            // Not adopted: the old session ended; a new one records the strap.
            #expect(await sessions.started == [session(1), session(2)])
        }

        @Test(
            "a session to adopt that ended meanwhile starts none in its place (without auto-join)",
            .timeLimit(.minutes(1)))
        func failedAdoptionStartsNothing() async throws {
            let sessions = HeldSessions(holds: false)
            let (classes, sensors) = manager(sessions, autoJoin: false)
            await sensors.handle(.connectionChanged(strap, .ready))
            // A session started by hand, ended by the time the class looks.
            await sensors.bind(alice, to: UUID())
            await classes.refresh(alice)
            _ = try await classes.start(ClassRequest())
            #expect(await sessions.started.isEmpty)
        }

        @Test(
            "measurements arrive as hub messages and the leave comes at the roster's deadline on the clock",
            .timeLimit(.minutes(1)))
        func leavesAtTheDeadline() async throws {
            let sessions = HeldSessions(holds: false)
            let (classes, sensors) = manager(sessions)
            let updates = hub.subscribe(kinds: [.class])
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await classes.run() }
                _ = try await classes.start(ClassRequest())
                await broadcast(sensors)
                let joined = await awaitClass(classes, updates) { $0.members.first?.state == .in }
                #expect(joined?.members.first?.session == session(1).uuidString.lowercased())
                // Silent for a minute: out of range, then gone, when the clock says so.
                clock.advance(by: 61)
                let left = await awaitClass(classes, updates) { $0.members.first?.state == .left }
                #expect(left?.members.first?.leftBecause == .outOfRange)
                #expect(await sessions.ended == [session(1)])
                // Heard again: back, in a second session.
                await broadcast(sensors)
                let back = await awaitClass(classes, updates) { $0.members.first?.sessions.count == 2 }
                #expect(back?.members.first?.state == .in)
                _ = try await classes.stop()
                #expect(await sessions.ended == [session(1), session(2)])
                group.cancelAll()
            }
        }
    }
}

extension ClassRosterTests {
    /// A random walk's state: the starts the roster asked for and not answered yet, the sessions started.
    private struct Walk {
        var generator = SeededGenerator(seed: 0xC1A55)
        var asked: [ClassRoster.SessionStart] = []
        var sessions = 0

        /// A random fact at `seconds`: mostly a strap's link, sometimes an answer to a start asked
        /// for, a session's end, the time, or the class stopping or starting.
        mutating func fact(at seconds: TimeInterval) -> ClassRoster.Fact {
            let strap = [alice, bob, stranger].randomElement(using: &generator)!
            switch Int.random(in: 0..<40, using: &generator) {
            case 0: return .time
            case 1: return .classStopped
            case 2: return .classStarted(setup(joinVia: Bool.random(using: &generator) ? .broadcast : .link))
            case 3..<6 where !asked.isEmpty:
                let start = asked.removeFirst()
                sessions += 1
                return started(start.strap, ticket: start.ticket, session: sessions)
            case 6 where !asked.isEmpty: return .sessionNotStarted(ticket: asked.removeFirst().ticket)
            case 7 where sessions > 0: return .sessionEnded(session(Int.random(in: 1...sessions, using: &generator)))
            default:
                let heard = seconds - [0, 0, 0, 3, 9, 11, 40, 70].randomElement(using: &generator)!
                return .link(
                    strap,
                    ClassRoster.Link(
                        state: [.seen, .connecting, .ready, .ready, .disconnected, .gone].randomElement(
                            using: &generator)!,
                        lastMeasurement: at(heard),
                        via: [.connection, .advertisement].randomElement(using: &generator)!,
                        bonded: [nil, true, false].randomElement(using: &generator)!))
            }
        }

        mutating func took(_ actions: [ClassRoster.Action]) {
            for case .startSession(let start) in actions { asked.append(start) }
        }
    }

    @Test(
        "the deadline kept as frames come (each works out its own strap's) is the one every strap's gives, in 20,000 random facts"
    )
    func keptDeadlineMatchesEveryStrapsDeadline() {
        var walk = Walk()
        var roster = ClassRoster()
        var seconds: TimeInterval = 0
        var mismatches: [String] = []
        var deadlinesSeen = 0
        for step in 0..<20_000 {
            // Mostly frames a fraction of a second apart, now and then a silence.
            seconds +=
                Bool.random(using: &walk.generator) ? 0.25 : [1, 10.5, 61].randomElement(using: &walk.generator)!
            let fact = walk.fact(at: seconds)
            walk.took(roster.handle(fact, at: at(seconds)))
            if roster.nextDeadline != nil { deadlinesSeen += 1 }
            // A fact that changes nothing keeps a deadline that has passed meanwhile: the timer
            // fires it at once, and that judgement works every deadline out again.
            let passed = roster.nextDeadline.map { $0 <= at(seconds) } ?? false
            if !passed, roster.nextDeadline != roster.deadlineWorkedOutAfresh, mismatches.count < 5 {
                mismatches.append(
                    "step \(step) (\(fact)): kept \(String(describing: roster.nextDeadline)), afresh \(String(describing: roster.deadlineWorkedOutAfresh))"
                )
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        // The walk must reach deadlines at all, or it shows nothing.
        #expect(deadlinesSeen > 1_000, "\(deadlinesSeen) facts left a deadline")
    }

    @Test("a stopped class leaves no deadline")
    func stoppedClassHasNoDeadline() {
        var driver = RosterDriver.aliceIn()
        #expect(driver.deadline == justAfter(10))
        driver.feed(.classStopped, at: 1)
        #expect(driver.deadline == nil)
    }
}
