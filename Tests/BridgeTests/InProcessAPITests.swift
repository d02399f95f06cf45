import BusHarness
import Foundation
import Hummingbird
import HummingbirdTesting
import JSONSupport
import Testing
import Wire

@testable import Bridge

/// Routes, bodies, errors and tokens, answered in-process (no daemon process, no socket).
@Suite("the API in-process: routes, bodies, errors and tokens", .serialized)
struct InProcessAPITests {
    let straps = DaemonUnderTest.straps

    /// The `id` of a session body.
    struct Identified: Decodable { var id: String }

    @Test("an event stream whose client goes away ends with it, even one that never had anything to send")
    func eventStreamEndsWithItsClient() async throws {
        let bridge = try await InProcessBridge()
        let hub = bridge.core.hub
        let before = hub.subscriberCount
        try await bridge.test(mode: .live) { client in
            let port = try #require(client.port)
            let descriptor = loopbackConnection(port: port)
            try #require(descriptor >= 0)
            // A session that does not exist: its filter matches nothing, so nothing is ever written.
            let request = Array("GET /v1/events?session=\(UUID().uuidString) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            #expect(write(descriptor, request, request.count) == request.count)
            try await eventually("the stream's subscription") { hub.subscriberCount == before + 1 }
            close(descriptor)
            try await eventually("the subscription to end with its client") { hub.subscriberCount == before }
        }
        try await bridge.stop()
    }

    @Test("bad requests get a 4xx JSON error naming the problem, never a 5xx, and the API goes on")
    func badRequests() async throws {
        let bridge = try await InProcessBridge()
        try await bridge.test { (client) async throws in
            let busy = try #require(
                try await client.send(.post, "/v1/sessions", json: ["sensors": [straps[0]]]).decode(Identified.self))
            let cases: [(method: HTTPRequest.Method, path: String, body: [String: Any]?, status: Int, code: String)] = [
                (.post, "/v1/sessions", ["sensors": []], 400, "invalid_request"),
                (.post, "/v1/sessions", ["sensors": [straps[1]], "colour": "red"], 400, "invalid_request"),
                (.post, "/v1/sessions", ["sensors": [straps[1]], "activity": "flying"], 400, "invalid_request"),
                (.post, "/v1/sessions", ["sensors": [straps[1]], "zones": [150]], 400, "invalid_request"),
                (.post, "/v1/sessions", ["sensors": [straps[1]], "guest": "yes"], 400, "invalid_request"),
                (.post, "/v1/sessions", ["sensors": ["C0:FF:EE:99:99:99"]], 404, "unknown_sensor"),
                (.post, "/v1/sessions", ["sensors": ["strap"]], 400, "invalid_request"),
                (.post, "/v1/sessions", ["sensors": Array(repeating: straps[1], count: 17)], 400, "invalid_request"),
                (
                    .post, "/v1/sessions", ["sensors": [straps[1]], "athlete": String(repeating: "a", count: 65)], 400,
                    "invalid_request"
                ),
                (.post, "/v1/sessions", ["sensors": [straps[1]], "zones": Array(100...111)], 400, "invalid_request"),
                (
                    // A pace of 1e20 minutes once trapped while its problem was described.
                    .post, "/v1/sessions",
                    [
                        "sensors": [straps[1]],
                        "plan": [
                            "version": 1, "activity": "running",
                            "custom": [
                                "blocks": [
                                    [
                                        "steps": [
                                            ["goal": "open", "alert": ["pace": "99999999999999999999:00-5:00 /km"]]
                                        ]
                                    ]
                                ]
                            ],
                        ],
                    ], 400, "invalid_request"
                ),
                (.trace, "/v1/sessions", nil, 405, "method_not_allowed"),
                (.post, "/v1/sessions", ["sensors": [straps[0]]], 409, "sensor_in_use"),
                (.post, "/v1/sessions", ["sensors": [straps[1]], "athlete": "nobody"], 404, "unknown_athlete"),
                (.post, "/v1/sessions/not-a-session/pause", nil, 404, "unknown_session"),
                (.post, "/v1/sessions/\(busy.id)/resume", nil, 409, "invalid_state"),
                (.get, "/v1/sensors/not-an-address", nil, 400, "invalid_request"),
                (.get, "/v1/sensors/C0:FF:EE:99:99:99", nil, 404, "unknown_sensor"),
                (.get, "/v1/workouts/not-a-uuid", nil, 400, "invalid_request"),
                (.get, "/v1/workouts/\(UUID().uuidString)", nil, 404, "unknown_workout"),
                (.get, "/v1/workouts?limit=0", nil, 400, "invalid_request"),
                (.get, "/v1/events?session=nope", nil, 400, "invalid_request"),
                (.get, "/v1/events?kinds=measurement,heartbeat", nil, 400, "invalid_request"),
                (.delete, "/v1/sensors/\(straps[0])", nil, 409, "sensor_in_use"),
                // Zones as the schema has them: 2 to 8 distinct heart rates, above 0, at most 300.
                (.post, "/v1/sessions", ["sensors": [straps[1]], "zones": [120, 400]], 400, "invalid_request"),
                (.post, "/v1/sessions", ["sensors": [straps[1]], "zones": Array(100...108)], 400, "invalid_request"),
                (.post, "/v1/sessions", ["sensors": [straps[1]], "zones": [120, 120, 140]], 400, "invalid_request"),
                // Actions take no fields: one would be ignored.
                (.post, "/v1/sessions/\(busy.id)/lap", ["colour": "red"], 400, "invalid_request"),
                (.post, "/v1/class/stop", ["discard": true], 400, "invalid_request"),
                // No such route: the API's JSON error, not an empty 404.
                (.get, "/v1/nope", nil, 404, "not_found"),
                (.get, "/" + String(repeating: "a", count: 5_000), nil, 404, "not_found"),
                (.get, "/v1/ws", nil, 405, "method_not_allowed"),
                (.get, "/v1/workouts/" + String(repeating: "w", count: 5_000), nil, 400, "invalid_request"),
                (.get, "/v1/sensors/" + String(repeating: "s", count: 5_000), nil, 400, "invalid_request"),
                (.get, "/v1/athletes/" + String(repeating: "a", count: 5_000), nil, 404, "unknown_athlete"),
                (.get, "/v1/sessions/" + String(repeating: "x", count: 5_000), nil, 404, "unknown_session"),
                (.get, "/v1/events?sensor=not-an-address", nil, 400, "invalid_request"),
                (.get, "/v1/events?sensor=", nil, 400, "invalid_request"),
                // A parameter named twice would be read once and the other dropped without a word.
                (.get, "/v1/workouts?limit=5&limit=abc", nil, 400, "invalid_request"),
                (.get, "/v1/events?kinds=sensor&kinds=bogus", nil, 400, "invalid_request"),
                (.get, "/v1/workouts?athlete=", nil, 400, "invalid_request"),
                // What a client sent is echoed cut and escaped, however it is counted.
                (.post, "/v1/sessions", ["sensors": [String(repeating: "s", count: 5_000)]], 400, "invalid_request"),
                (
                    .post, "/v1/sessions",
                    ["sensors": [straps[1]], "athlete": "a" + String(repeating: "\u{301}", count: 5_000)], 400,
                    "invalid_request"
                ),
                (
                    .post, "/v1/sessions",
                    ["sensors": [straps[1]], "athlete": String(repeating: "\u{1F600}", count: 64)],
                    404, "unknown_athlete"
                ),
            ]
            for item in cases {
                let reply = try await client.send(item.method, item.path, json: item.body)
                #expect(Int(reply.status.code) == item.status, "\(item.method) \(item.path) \(item.body ?? [:])")
                #expect(reply.errorCode == item.code, "\(item.path)")
                let message = reply.decode(ErrorJSON.self)?.error.message ?? ""
                #expect(!message.isEmpty)
                #expect(message.utf8.count < 400, "what the client sent is not echoed whole: \(message.prefix(80))")
            }
            let lap = try await client.send(.post, "/v1/sessions/\(busy.id)/lap")
            #expect(lap.status == .ok, "an action without a body still works")
            let unknownField = try await client.send(.post, "/v1/sessions/\(busy.id)/lap", json: ["colour": "red"])
            #expect(unknownField.decode(ErrorJSON.self)?.error.message.contains("\"colour\"") == true)
            let malformed = try await client.execute(
                uri: "/v1/sessions", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: "{not json"))
            #expect(malformed.status == .badRequest)
            #expect(try await client.send(.get, "/v1/health").status == .ok, "the API goes on")
        }
        try await bridge.stop()
    }

    @Test("tokens: without one is 401, a read token reads but cannot start a session (403), control can")
    func tokenRoles() async throws {
        let bridge = try await InProcessBridge()
        try await bridge.test(requiresToken: true) { (client) async throws in
            let anonymous = try await client.send(.get, "/v1/sensors")
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.headers[.wwwAuthenticate] == "Bearer")
            #expect(try await client.send(.get, "/v1/health", token: "wrong-token-0123456789").status == .unauthorized)
            let read = DaemonUnderTest.readToken
            #expect(try await client.send(.get, "/v1/sensors", token: read).status == .ok)
            #expect(try await client.send(.get, "/v1/openapi.json", token: read).status == .ok)
            let refused = try await client.send(.post, "/v1/sessions", json: ["sensors": [straps[0]]], token: read)
            #expect(refused.status == .forbidden)
            #expect(refused.errorCode == "forbidden")
            #expect(
                try await client.send(.post, "/v1/sensors/\(straps[0])/disconnect", token: read).status == .forbidden)
            let created = try await client.send(
                .post, "/v1/sessions", json: ["sensors": [straps[0]]], token: DaemonUnderTest.controlToken)
            #expect(created.status == .created)
            let query = try await client.send(.get, "/v1/sessions?token=\(read)")
            #expect(query.status == .ok, "?token= works where headers cannot be set (EventSource, WebSocket)")
        }
        try await bridge.stop()
    }

    @Test("tokens are compared in full: a prefix, a longer string or another case is refused")
    func tokenComparison() async throws {
        let bridge = try await InProcessBridge()
        try await bridge.test(requiresToken: true) { (client) async throws in
            let token = DaemonUnderTest.readToken
            for wrong in [String(token.dropLast()), token + "x", token.uppercased(), ""] {
                #expect(try await client.send(.get, "/v1/sensors", token: wrong).status == .unauthorized, "\(wrong)")
            }
            #expect(try await client.send(.get, "/v1/sensors", token: token).status == .ok)
        }
        try await bridge.stop()
    }

    @Test("ten concurrent creates on one strap: exactly one session; ended sessions are pruned from memory")
    func atomicCreateAndPruning() async throws {
        let bridge = try await InProcessBridge()
        let strap = straps[1]
        try await bridge.test { (client) async throws in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        Int(try await client.send(.post, "/v1/sessions", json: ["sensors": [strap]]).status.code)
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.sorted() == [201] + Array(repeating: 409, count: 9), "\(statuses)")
            #expect(try await client.send(.get, "/v1/health").decode(HealthJSON.self)?.sessionsActive == 1)
            let running = try #require(
                try await client.send(.get, "/v1/sessions").decode([String: [Identified]].self)?["sessions"]?.first?.id)
            #expect(try await client.send(.post, "/v1/sessions/\(running)/stop").status == .ok)
            // More ended sessions than are kept: the oldest is no longer a session, but its workout is stored.
            for _ in 0..<SessionManager.endedLimit {
                let created = try #require(
                    try await client.send(.post, "/v1/sessions", json: ["sensors": [strap]]).decode(Identified.self))
                #expect(try await client.send(.post, "/v1/sessions/\(created.id)/stop").status == .ok)
            }
            #expect(try await client.send(.get, "/v1/sessions/\(running)").status == .notFound)
            #expect(try await client.send(.get, "/v1/workouts/\(running)").status == .ok)
        }
        try await bridge.stop()
    }

    /// A `figures` message, decoded.
    struct FiguresMessage: Decodable {
        var session: UUID?
        var sessions: [SessionJSON]
    }

    @Test(
        "sessions' figures come in rounds, all sessions in one message to a board; a reader of changes gets only changes; none after the end"
    )
    func figuresInRounds() async throws {
        let bridge = try await InProcessBridge()
        let hub = bridge.core.hub
        let changes = hub.subscribe(kinds: [.session])
        let first = try await bridge.core.sessions.create(SessionRequest(sensors: [straps[1]]))
        let second = try await bridge.core.sessions.create(SessionRequest(sensors: [straps[2]]))
        #expect(!hub.wantsFigures(of: first.id), "nobody reads its figures: they are not worked out")
        let board = hub.subscribe(kinds: [.session, .figures])
        let follower = hub.subscribe(session: first.id, kinds: [.figures])
        // Rounds until one holds both sessions, then two more: the first's elapsed time moves on.
        var elapsed: [Double] = []
        for await delivery in board {
            guard case .message(let message) = delivery, message.kind == .figures else { continue }
            let figures = try JSONText.decode(FiguresMessage.self, from: Data(message.json.utf8))
            #expect(figures.session == nil)
            let ids = figures.sessions.map(\.id)
            #expect(Set(ids).count == ids.count, "a session once per round: \(ids)")
            // Both stream, so a round holds both (one may miss a round on a starved machine).
            if elapsed.isEmpty && Set(ids) != [first.id, second.id] { continue }
            elapsed += figures.sessions.filter { $0.id == first.id }.map(\.elapsedTime)
            if elapsed.count == 3 { break }
        }
        #expect(elapsed == elapsed.sorted() && elapsed.last! > elapsed.first!, "the figures move on: \(elapsed)")
        for await delivery in follower {
            guard case .message(let message) = delivery else { continue }
            let figures = try JSONText.decode(FiguresMessage.self, from: Data(message.json.utf8))
            #expect(figures.session == first.id && figures.sessions.map(\.id) == [first.id], "only its own session")
            break
        }
        try await bridge.core.sessions.stop(first.id.uuidString)
        // The board's next two rounds after the first session's end (the second one streams on):
        // they hold the second session only.
        var ended = false
        var roundsAfterEnd: [[UUID]] = []
        for await delivery in board {
            guard case .message(let message) = delivery else { continue }
            if message.kind == .session, message.session == first.id,
                try JSONText.decode(SessionJSON.self, from: Data(message.json.utf8)).state == "ended"
            {
                ended = true
            } else if ended, message.kind == .figures {
                roundsAfterEnd.append(
                    try JSONText.decode(FiguresMessage.self, from: Data(message.json.utf8)).sessions.map(\.id))
                if roundsAfterEnd.count == 2 { break }
            }
        }
        #expect(roundsAfterEnd == [[second.id], [second.id]], "no figures of an ended session")
        try await bridge.stop()
        // The reader of changes: states only, each older than the board's second round.
        var changed: [(state: String, elapsed: Double)] = []
        for await delivery in changes {
            guard case .message(let message) = delivery else { continue }
            #expect(message.kind == .session)
            let snapshot = try JSONText.decode(SessionJSON.self, from: Data(message.json.utf8))
            if snapshot.id == first.id { changed.append((snapshot.state, snapshot.elapsedTime)) }
        }
        #expect(changed.last?.state == "ended")
        #expect(
            changed.filter { $0.state != "ended" }.allSatisfy { $0.elapsed < elapsed[1] },
            "changes only, no figures: \(changed)")
    }
}
