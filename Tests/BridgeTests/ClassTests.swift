import Bridge
import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Testing
import Wire

@Suite("hrbridged: a class with automatic sign-in", .serialized)
struct ClassTests {
    let straps = DaemonUnderTest.straps

    /// Alice's strap holds a link; the second strap (no athlete configured) too; Carol's only
    /// broadcasts, and is out of range for 150 s of simulated time every 300 s from 360 s on: 36 s
    /// of wall time at 10× for the daemon to start and the class to begin first, and a loaded CI
    /// machine that began the class after her first absence (it did) still sees her go at the next.
    static let scenario = """
        {"version": 1, "seed": 3, "straps": [
          {"name": "Alice H10", "address": "\(DaemonUnderTest.straps[0])", "segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]},
          {"name": "Spare strap", "address": "\(DaemonUnderTest.straps[1])", "segments": [{"type": "steady", "duration": "60m", "intensity": 0.4}]},
          {"name": "Polar H9 Carol", "address": "\(DaemonUnderTest.straps[2])", "broadcastOnly": true,
           "segments": [{"type": "steady", "duration": "60m", "intensity": 0.6}],
           "faults": [{"type": "disconnect", "at": "360s", "duration": "150s"},
                      {"type": "disconnect", "at": "660s", "duration": "150s"},
                      {"type": "disconnect", "at": "960s", "duration": "150s"},
                      {"type": "disconnect", "at": "1260s", "duration": "150s"},
                      {"type": "disconnect", "at": "1560s", "duration": "150s"},
                      {"type": "disconnect", "at": "1860s", "duration": "150s"},
                      {"type": "disconnect", "at": "2160s", "duration": "150s"}]}
        ]}
        """

    /// The class's members by athlete.
    func members(_ daemon: DaemonUnderTest) async throws -> [String: ClassJSON.Member] {
        let members = try await daemon.unix.send(.GET, "/v1/class").decoded(ClassJSON.self).members
        return Dictionary(uniqueKeysWithValues: members.map { ($0.athlete, $0) })
    }

    /// The running sessions.
    func sessions(_ daemon: DaemonUnderTest) async throws -> [SessionJSON] {
        try await daemon.unix.send(.GET, "/v1/sessions").list("sessions", of: SessionJSON.self)
    }

    @Test(
        "configured straps in range join under their athletes (a broadcast-only one too), leave out of range with their data kept, come back; stopped by hand stays out"
    )
    func autoJoin() async throws {
        let daemon = try await DaemonUnderTest(
            speed: 10, classBoard: true,
            moreSettings: """
                [class]
                auto_join = true
                leave_after_minutes = 1
                activity = "cycling"
                join_via = "broadcast"
                """, scenario: Self.scenario, streaming: 2)
        defer { daemon.stop() }
        let anonymous = SessionManager.anonymousAthlete(for: straps[1])

        let none = try await daemon.unix.send(.GET, "/v1/class")
        #expect(none.status == 404, "no class before one starts")
        #expect(try await daemon.tcp(DaemonUnderTest.readToken).send(.POST, "/v1/class", json: [:]).status == 403)
        #expect(try await daemon.unix.send(.POST, "/v1/class", json: ["colour": "red"]).status == 400)
        #expect(try await daemon.unix.send(.POST, "/v1/class", json: ["activity": "juggling"]).status == 400)
        // The class's live messages: "out of range" lasts only until she leaves, so it is read here.
        let events = EventCollector(daemon.unix, path: "/v1/events")
        defer { events.cancel() }
        let started = try await daemon.unix.send(.POST, "/v1/class", json: [:])
        #expect(started.status == 201)
        #expect(try started.decoded(ClassJSON.self).activity == "cycling", "[class] activity")
        #expect(try await daemon.unix.send(.POST, "/v1/class", json: [:]).status == 409, "one class at a time")

        // Everyone in range signs in by themselves, the broadcast-only strap included.
        try await eventually("three athletes in the class") {
            let members = try await members(daemon)
            return ["alice", "carol", anonymous].allSatisfy { members[$0]?.state == .in }
        }
        let running = try await sessions(daemon)
        #expect(Set(running.map(\.athlete)) == ["alice", "carol", anonymous])
        #expect(running.allSatisfy { $0.activity == "cycling" })
        // HRV: absent for the broadcast strap, and the session says why.
        let byAthlete = Dictionary(uniqueKeysWithValues: running.map { ($0.athlete, $0) })
        let carolsLive = try #require(byAthlete["carol"]?.live)
        let alicesLive = try #require(byAthlete["alice"]?.live)
        #expect(carolsLive.hrvUnavailable?.contains("no RR intervals") == true)
        #expect(alicesLive.hrvUnavailable == nil, "a linked strap has RR intervals")
        // Her first session in the class: on a loaded machine she may have left and come back once already.
        let carolsFirst = try #require(try await members(daemon)["carol"]?.sessions.first)

        // Alice's session ended by hand: she stays out of the class.
        let alicesSession = try #require(try await members(daemon)["alice"]?.session)
        #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(alicesSession)/stop").status == 200)
        try await eventually("Alice left, stopped") {
            try await members(daemon)["alice"]?.leftBecause == .stopped
        }

        // Carol's strap goes quiet: out of range, then she leaves (after 1 min) with her workout saved.
        // Read from the class's live messages, not the current state: on a loaded machine the
        // simulator (10× the wall clock) may bring her back before a poll would see her gone.
        func carol() throws -> [ClassJSON.Member] {
            try events.messages(.class, as: ClassJSON.self).compactMap { message in
                message.payload.members.first { $0.athlete == "carol" }
            }
        }
        do {
            try await eventually("Carol left") { try carol().contains { $0.state == .left } }
        } catch {
            // Says whether the stream dropped messages (a slow reader) or the class never said it.
            let drops = events.of(kind: "dropped").compactMap { $0["count"] as? Int }
            let now = try? await members(daemon)["carol"]
            Issue.record(
                "Carol's states seen: \(try carol().map(\.state)); dropped: \(drops); now: \(String(describing: now))")
            throw error
        }
        let carolStates = try carol().map(\.state)
        #expect(carolStates.contains(.outOfRange), "shown out of range before leaving: \(carolStates)")
        #expect(try carol().first { $0.state == .left }?.leftBecause == .outOfRange)
        let carolsSamples = try await daemon.unix.send(.GET, "/v1/workouts/\(carolsFirst)/samples")
            .list("samples", of: SampleJSON.self)
        #expect(!carolsSamples.isEmpty, "her data is kept")

        // Back in range 150 s later: she joins again, in a new session.
        try await eventually("Carol back") { try await members(daemon)["carol"]?.state == .in }
        let carol = try #require(try await members(daemon)["carol"])
        #expect(carol.sessions.count >= 2 && carol.sessions.first == carolsFirst, "\(carol.sessions)")
        #expect(carol.session != nil && carol.session != carolsFirst)
        let alice = try #require(try await members(daemon)["alice"])
        #expect(alice.state == .left && alice.sessions.count == 1, "stopped stays out")

        // The class ends: every session in it ends and is saved.
        let ended = try await daemon.unix.send(.POST, "/v1/class/stop").decoded(ClassJSON.self)
        #expect(ended.state == "ended")
        // (A loaded machine may have seen her go and come back once more meanwhile.)
        let carolsVisits = try #require(ended.members.first { $0.athlete == "carol" }).sessions.count
        #expect(!ended.members.isEmpty && ended.members.allSatisfy { $0.state == .left })
        #expect(try await sessions(daemon).isEmpty)
        let workouts = try await daemon.unix.send(.GET, "/v1/workouts").list("workouts", of: WorkoutListingJSON.self)
        let workoutsByAthlete = Dictionary(grouping: workouts, by: \.athlete).mapValues(\.count)
        #expect(carolsVisits >= 2)
        #expect(
            workoutsByAthlete == ["alice": 1, anonymous: 1, "carol": carolsVisits],
            "each of Carol's visits is a workout")
        #expect(workouts.contains { UUID(uuidString: $0.id) == UUID(uuidString: carolsFirst) })
        #expect(try await daemon.unix.send(.POST, "/v1/class/stop").status == 404, "nothing left to stop")
    }

    @Test(
        "join via link (the default): a strap with a bonded link signs in; one linked without a bond and one only broadcasting are heard but never do"
    )
    func onlyBondedLinksSignIn() async throws {
        // The spare strap answers a link but was never bonded: anyone could answer under its address.
        let scenario = Self.scenario.replacingOccurrences(
            of: #""name": "Spare strap","#, with: #""name": "Spare strap", "bonded": false,"#)
        #expect(scenario != Self.scenario)
        let daemon = try await DaemonUnderTest(
            speed: 10, classBoard: true,
            moreSettings: """
                [class]
                auto_join = true
                """, scenario: scenario, streaming: 2)
        defer { daemon.stop() }
        let started = try await daemon.unix.send(.POST, "/v1/class", json: [:]).decoded(ClassJSON.self)
        #expect(started.joinVia == .link)
        let classStart = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(started.start)
        try await eventually("Alice in the class") { try await members(daemon)["alice"]?.state == .in }
        // Three frames of each of the others after the class began: one that signed in would
        // have started its session at the first.
        var heard: [String: Set<Date>] = [:]
        try await eventually("three frames of the unbonded and the broadcast strap heard in the class") {
            for (strap, via) in [(straps[1], "connection"), (straps[2], "advertisement")] {
                let status = try await daemon.unix.send(.GET, "/v1/sensors/\(strap)").decoded(SensorStatus.self)
                if status.via == via, let last = status.lastMeasurement, last > classStart {
                    heard[strap, default: []].insert(last)
                }
            }
            return heard.values.filter { $0.count >= 3 }.count == 2
        }
        let spare = try await daemon.unix.send(.GET, "/v1/sensors/\(straps[1])").decoded(SensorStatus.self)
        #expect(spare.state == .ready && spare.bonded == false)
        let alice = try await daemon.unix.send(.GET, "/v1/sensors/\(straps[0])").decoded(SensorStatus.self)
        #expect(alice.bonded == true)
        let inClass = try await members(daemon)
        #expect(Set(inClass.keys) == ["alice"], "a broadcast or an unbonded link is not an identity: \(inClass)")
        #expect(try await sessions(daemon).map(\.athlete) == ["alice"])
        _ = try await daemon.unix.send(.POST, "/v1/class/stop")
    }

    @Test("without auto_join nobody signs in, but a session started by hand on a configured strap is in the class")
    func handStartedSessionsJoin() async throws {
        let daemon = try await DaemonUnderTest(classBoard: true)
        defer { daemon.stop() }
        let created = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[0]]])
        let session = try created.decoded(SessionJSON.self).id
        let started = try await daemon.unix.send(.POST, "/v1/class", json: ["activity": "rowing"]).decoded(
            ClassJSON.self)
        #expect(started.autoJoin == false)
        #expect(started.activity == "rowing")
        try await eventually("Alice's session in the class") {
            try await members(daemon)["alice"]?.session.flatMap(UUID.init(uuidString:)) == session
        }
        #expect(try await members(daemon).count == 1, "the other straps, in range, do not sign in")
        let ended = try await daemon.unix.send(.POST, "/v1/class/stop").decoded(ClassJSON.self)
        #expect(ended.members.map(\.leftBecause) == [.classEnded])
        let stopped = try await daemon.unix.send(.GET, "/v1/sessions/\(session.wire)").decoded(SessionJSON.self)
        #expect(stopped.state == "ended")
    }
}
