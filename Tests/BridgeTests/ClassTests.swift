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

    func object(_ reply: APIClient.Reply) throws -> [String: Any] {
        try #require(reply.object, "not a JSON object: \(String(decoding: reply.body, as: UTF8.self))")
    }

    /// Alice's strap holds a link; the second strap (no athlete configured) too; Carol's only
    /// broadcasts, and is out of range from 120 s to 270 s of simulated time.
    static let scenario = """
        {"version": 1, "seed": 3, "straps": [
          {"name": "Alice H10", "address": "\(DaemonUnderTest.straps[0])", "segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]},
          {"name": "Spare strap", "address": "\(DaemonUnderTest.straps[1])", "segments": [{"type": "steady", "duration": "60m", "intensity": 0.4}]},
          {"name": "Polar H9 Carol", "address": "\(DaemonUnderTest.straps[2])", "broadcastOnly": true,
           "segments": [{"type": "steady", "duration": "60m", "intensity": 0.6}],
           "faults": [{"type": "disconnect", "at": "120s", "duration": "150s"}]}
        ]}
        """

    func members(_ daemon: DaemonUnderTest) async throws -> [String: [String: Any]] {
        let reply = try object(try await daemon.unix.send(.GET, "/v1/class"))
        let list = reply["members"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["athlete"] as? String ?? "?", $0) })
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
        #expect(try object(started)["activity"] as? String == "cycling", "[class] activity")
        #expect(try await daemon.unix.send(.POST, "/v1/class", json: [:]).status == 409, "one class at a time")

        // Everyone in range signs in by themselves, the broadcast-only strap included.
        try await eventually("three athletes in the class") {
            let members = try await members(daemon)
            return ["alice", "carol", anonymous].allSatisfy { members[$0]?["state"] as? String == "in" }
        }
        let sessions = try object(try await daemon.unix.send(.GET, "/v1/sessions"))["sessions"] as? [[String: Any]]
        let athletes = Set((sessions ?? []).compactMap { $0["athlete"] as? String })
        #expect(athletes == ["alice", "carol", anonymous])
        #expect((sessions ?? []).allSatisfy { $0["activity"] as? String == "cycling" })
        // HRV: absent for the broadcast strap, and the session says why.
        let byAthlete = Dictionary(uniqueKeysWithValues: (sessions ?? []).map { ($0["athlete"] as? String ?? "?", $0) })
        #expect((byAthlete["carol"]?["hrvUnavailable"] as? String)?.contains("no RR intervals") == true)
        #expect(byAthlete["alice"]?["hrvUnavailable"] is NSNull, "a linked strap has RR intervals")
        let carolsFirst = try #require(try await members(daemon)["carol"]?["session"] as? String)

        // Alice's session ended by hand: she stays out of the class.
        let alicesSession = try #require(try await members(daemon)["alice"]?["session"] as? String)
        #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(alicesSession)/stop").status == 200)
        try await eventually("Alice left, stopped") {
            try await members(daemon)["alice"]?["leftBecause"] as? String == "stopped"
        }

        // Carol's strap goes quiet at 120 s: out of range, then she leaves (after 1 min) with her workout saved.
        try await eventually("Carol left") { try await members(daemon)["carol"]?["state"] as? String == "left" }
        let carolStates = events.of(kind: "class").compactMap { message in
            (message["members"] as? [[String: Any]])?.first { $0["athlete"] as? String == "carol" }?["state"] as? String
        }
        #expect(carolStates.contains("out of range"), "shown out of range before leaving: \(carolStates)")
        #expect(try await members(daemon)["carol"]?["leftBecause"] as? String == "out of range")
        let carolsSamples = try object(try await daemon.unix.send(.GET, "/v1/workouts/\(carolsFirst)/samples"))
        #expect(((carolsSamples["samples"] as? [Any])?.count ?? 0) > 0, "her data is kept")

        // Back in range at 270 s: she joins again, in a new session.
        try await eventually("Carol back") { try await members(daemon)["carol"]?["state"] as? String == "in" }
        let carol = try #require(try await members(daemon)["carol"])
        #expect((carol["sessions"] as? [String])?.count == 2)
        #expect(carol["session"] as? String != carolsFirst)
        let alice = try #require(try await members(daemon)["alice"])
        #expect(
            alice["state"] as? String == "left" && (alice["sessions"] as? [String])?.count == 1, "stopped stays out")

        // The class ends: every session in it ends and is saved.
        let ended = try object(try await daemon.unix.send(.POST, "/v1/class/stop"))
        #expect(ended["state"] as? String == "ended")
        #expect((ended["members"] as? [[String: Any]] ?? []).allSatisfy { $0["state"] as? String == "left" })
        let after = try object(try await daemon.unix.send(.GET, "/v1/sessions"))["sessions"] as? [[String: Any]]
        #expect(after?.isEmpty == true)
        let workouts = try object(try await daemon.unix.send(.GET, "/v1/workouts"))["workouts"] as? [[String: Any]]
        let workoutsByAthlete = Dictionary(grouping: workouts ?? []) { $0["athlete"] as? String ?? "?" }.mapValues(
            \.count)
        #expect(workoutsByAthlete == ["alice": 1, anonymous: 1, "carol": 2], "Carol's two visits are two workouts")
        #expect(
            (workouts ?? []).contains {
                $0["id"] as? String == carolsFirst.lowercased() || $0["id"] as? String == carolsFirst
            })
        #expect(try await daemon.unix.send(.POST, "/v1/class/stop").status == 404, "nothing left to stop")
    }

    @Test("without auto_join nobody signs in, but a session started by hand on a configured strap is in the class")
    func handStartedSessionsJoin() async throws {
        let daemon = try await DaemonUnderTest(classBoard: true)
        defer { daemon.stop() }
        let created = try object(try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[0]]]))
        let session = try #require(created["id"] as? String)
        let started = try object(try await daemon.unix.send(.POST, "/v1/class", json: ["activity": "rowing"]))
        #expect(started["autoJoin"] as? Bool == false)
        try await eventually("Alice's session in the class") {
            try await members(daemon)["alice"]?["session"] as? String == session
        }
        #expect(try await members(daemon).count == 1, "the other straps, in range, do not sign in")
        let ended = try object(try await daemon.unix.send(.POST, "/v1/class/stop"))
        #expect((ended["members"] as? [[String: Any]])?.first?["leftBecause"] as? String == "class ended")
        #expect(try object(try await daemon.unix.send(.GET, "/v1/sessions/\(session)"))["state"] as? String == "ended")
    }
}
