import Bridge
import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Testing
import Wire

/// The OpenAPI document and the response types cannot drift: real responses of every kind are
/// checked against the document's schemas (closed with `additionalProperties: false`) by
/// jsonschema-rs, and every key the document names must show up in some response.
@Suite("The OpenAPI document and the response types agree, both ways", .serialized)
struct OpenAPIDriftTests {
    struct Observed {
        var method: String
        var template: String
        var status: Int
        var body: Any
    }

    nonisolated(unsafe) static let plan: [String: Any] = [
        "version": 1, "name": "drift check", "activity": "running",
        "custom": [
            "warmup": ["goal": ["time": "10 min"], "name": "easy", "alert": ["heartRate": "40-220 bpm"]],
            "blocks": [["iterations": 1, "steps": [["purpose": "work", "goal": ["time": "5 min"]]]]],
        ],
    ]

    /// Runs the checker on `observed`; its exit status and what it printed.
    func check(_ observed: [Observed], in directory: URL, name: String) async throws -> (Int32, String) {
        let lines = try observed.map { item in
            let object: [String: Any] = [
                "method": item.method, "path": item.template, "status": item.status, "body": item.body,
            ]
            return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
        }
        let file = directory.appendingPathComponent(name)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file)
        // Waited for without holding a thread of the pool while Python starts.
        let checker = try Spawned(
            packageRoot.appendingPathComponent(".venv/bin/python").path,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/openapi/check_responses.py").path,
                packageRoot.appendingPathComponent("Sources/Bridge/API/openapi.json").path, file.path,
            ], label: "check_responses.py")
        let status = await checker.wait() ?? -1
        return (status, checker.output.joined(separator: "\n"))
    }

    @Test(
        "every response kind, live and ended sessions with plan and α1 included, matches its schema; no key is undocumented or unused"
    )
    func responsesMatchTheDocument() async throws {
        // Fast enough that 2 minutes of beats (the first α1 window) take a few seconds.
        let daemon = try await DaemonUnderTest(speed: 30, moreSettings: "[class]\nauto_join = true")
        defer { daemon.stop() }
        let client = daemon.unix
        var observed: [Observed] = []
        func record(_ method: HTTPMethod, _ template: String, _ path: String, json: [String: Any]? = nil) async throws
            -> [String: Any]
        {
            let reply =
                if let json { try await client.send(method, path, json: json) } else {
                    try await client.send(method, path)
                }
            let body = try JSONSerialization.jsonObject(with: reply.body)
            observed.append(Observed(method: "\(method)", template: template, status: reply.status, body: body))
            return body as? [String: Any] ?? [:]
        }
        let strap = DaemonUnderTest.straps[0]
        try await eventually("the straps to stream") {
            try await client.send(.GET, "/v1/health").object?["sensorsStreaming"] as? Int == 3
        }
        _ = try await record(.GET, "/v1/health", "/v1/health")
        _ = try await record(.GET, "/v1/sensors", "/v1/sensors")
        _ = try await record(.GET, "/v1/sensors/{address}", "/v1/sensors/\(strap)")
        _ = try await record(.GET, "/v1/sensors/{address}", "/v1/sensors/not-an-address")
        _ = try await record(.GET, "/v1/sensors/{address}", "/v1/sensors/C0:FF:EE:99:99:99")
        _ = try await record(.POST, "/v1/sessions", "/v1/sessions", json: ["sensors": [strap], "guest": "yes"])
        let created = try await record(
            .POST, "/v1/sessions", "/v1/sessions", json: ["sensors": [strap], "athlete": "alice", "plan": Self.plan])
        let id = try #require(created["id"] as? String)
        let events = EventCollector(client, path: "/v1/events?session=\(id)")
        defer { events.cancel() }
        try await eventually("the first DFA α1 window") { !events.of(kind: "hrv").isEmpty }
        let live = try await record(.GET, "/v1/sessions/{id}", "/v1/sessions/\(id)")
        #expect(live["alpha1"] is [String: Any], "a live session with its α1 window")
        _ = try await record(.GET, "/v1/sessions", "/v1/sessions")
        for action in ["lap", "pause", "resume", "next"] {
            _ = try await record(.POST, "/v1/sessions/{id}/\(action)", "/v1/sessions/\(id)/\(action)")
        }
        _ = try await record(
            .POST, "/v1/sessions/{id}/activity", "/v1/sessions/\(id)/activity", json: ["activity": "cycling"])
        let stopped = try await record(.POST, "/v1/sessions/{id}/stop", "/v1/sessions/\(id)/stop")
        #expect(stopped["summary"] is [String: Any])
        _ = try await record(.POST, "/v1/sessions/{id}/lap", "/v1/sessions/\(UUID().uuidString)/lap")
        _ = try await record(.GET, "/v1/workouts", "/v1/workouts")
        _ = try await record(.GET, "/v1/workouts/{id}", "/v1/workouts/\(id)")
        _ = try await record(.GET, "/v1/workouts/{id}/samples", "/v1/workouts/\(id)/samples?type=heartRate")
        _ = try await record(.GET, "/v1/workouts/{id}", "/v1/workouts/not-a-uuid")
        let changes = try await record(.GET, "/v1/samples/changes", "/v1/samples/changes?type=heartRate&limit=5")
        #expect((changes["added"] as? [Any])?.count == 5, "the stopped workout's samples")
        _ = try await record(.GET, "/v1/samples/changes", "/v1/samples/changes?anchor=-1")
        // A class: everyone joins; one session ended by hand; the class ended.
        _ = try await record(.GET, "/v1/class", "/v1/class")
        _ = try await record(.POST, "/v1/class", "/v1/class", json: ["location": "inside"])
        _ = try await record(.POST, "/v1/class", "/v1/class", json: ["activity": "rowing"])
        _ = try await record(.POST, "/v1/class", "/v1/class", json: [:])
        try await eventually("three straps in the class") {
            (try await client.send(.GET, "/v1/class").object?["members"] as? [Any])?.count == 3
        }
        let running = try await record(.GET, "/v1/class", "/v1/class")
        let first = try #require((running["members"] as? [[String: Any]])?.first?["session"] as? String)
        _ = try await client.send(.POST, "/v1/sessions/\(first)/stop")
        try await eventually("the stopped member left") {
            let members = try await client.send(.GET, "/v1/class").object?["members"] as? [[String: Any]]
            return members?.contains { $0["leftBecause"] as? String == "stopped" } == true
        }
        _ = try await record(.GET, "/v1/class", "/v1/class")
        _ = try await record(.POST, "/v1/class/stop", "/v1/class/stop")
        _ = try await record(.POST, "/v1/class/stop", "/v1/class/stop")
        _ = try await record(.GET, "/v1/athletes", "/v1/athletes")
        _ = try await record(.GET, "/v1/athletes/{id}", "/v1/athletes/alice")
        _ = try await record(.GET, "/v1/athletes/{id}", "/v1/athletes/nobody")

        let (status, report) = try await check(observed, in: daemon.directory, name: "observed.jsonl")
        #expect(status == 0, "\(report)")
        #expect(report.contains("checked \(observed.count) responses,") && report.contains(" 0 problems"), "\(report)")

        // The checker itself: a key the document does not name, and a key it names that never
        // appears, are both reported.
        var drifted = observed
        if let index = drifted.firstIndex(where: { $0.template == "/v1/sensors/{address}" && $0.status == 200 }),
            var sensor = drifted[index].body as? [String: Any]
        {
            sensor["undocumentedKey"] = 1
            drifted[index].body = sensor
        }
        drifted = drifted.map { item in
            var item = item
            if item.template == "/v1/athletes/{id}", var athlete = item.body as? [String: Any] {
                athlete.removeValue(forKey: "restingHeartRate")
                item.body = athlete
            }
            if item.template == "/v1/athletes", var list = item.body as? [String: Any],
                let athletes = list["athletes"] as? [[String: Any]]
            {
                list["athletes"] = athletes.map { $0.filter { $0.key != "restingHeartRate" } }
                item.body = list
            }
            return item
        }
        let (driftStatus, driftReport) = try await check(drifted, in: daemon.directory, name: "drifted.jsonl")
        #expect(driftStatus == 1)
        #expect(driftReport.contains("undocumentedKey"), "\(driftReport)")
        #expect(driftReport.contains("restingHeartRate"), "\(driftReport)")
    }
}
