import Bridge
import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Testing
import Wire

#if canImport(Glibc)
    import Glibc
#endif

@Suite("hrbridged end to end on the mock adapter", .serialized)
struct DaemonTests {
    let straps = DaemonUnderTest.straps

    func object(_ reply: APIClient.Reply) throws -> [String: Any] {
        try #require(reply.object, "not a JSON object: \(String(decoding: reply.body, as: UTF8.self))")
    }

    @Test("create → SSE and WebSocket streams → pause, resume, lap → stop → stored → exported")
    func fullFlow() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let sensors = try object(try await daemon.unix.send(.GET, "/v1/sensors"))["sensors"] as? [[String: Any]]
        #expect(sensors?.compactMap { $0["address"] as? String } == straps)
        #expect(sensors?.allSatisfy { $0["state"] as? String == "ready" } == true)

        let created = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [straps[0]], "activity": "cycling"])
        #expect(created.status == 201)
        let session = try object(created)
        let id = try #require(session["id"] as? String)
        #expect(session["athlete"] as? String == "alice", "the configured owner of the strap")
        #expect(session["state"] as? String == "running")
        #expect(session["activity"] as? String == "cycling")

        let events = EventCollector(daemon.unix, path: "/v1/events?session=\(id)")
        defer { events.cancel() }
        let webSocket = try Spawned(
            venvPython,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/api/ws_watch.py").path,
                "ws://127.0.0.1:\(daemon.port)/v1/ws?session=\(id)", DaemonUnderTest.readToken, "6",
            ], label: "ws_watch")
        defer { webSocket.stop() }
        try await eventually("samples on the SSE stream") { events.of(kind: "sample").count >= 3 }
        #expect(events.of(kind: "session").first?["id"] as? String == id, "a late subscriber first gets the state")
        #expect(events.all.allSatisfy { $0["session"] as? String == id }, "the filter holds")
        let samples = events.of(kind: "sample")
        #expect(samples.allSatisfy { ($0["source"] as? [String: Any])?["address"] as? String == straps[0] })
        #expect(samples.contains { $0["type"] as? String == "heartRate" && ($0["value"] as? Double ?? 0) > 40 })

        #expect(await webSocket.wait() == 0, "\(webSocket.output.suffix(5))")
        let frames = webSocket.output.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        #expect(frames.count == 6)
        #expect(frames.allSatisfy { $0["session"] as? String == id })
        #expect(frames.first?["kind"] as? String == "session")

        let paused = try object(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/pause"))
        #expect(paused["state"] as? String == "paused")
        let resumed = try object(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/resume"))
        #expect(resumed["state"] as? String == "running")
        try await Task.sleep(for: .milliseconds(600))
        let lapped = try object(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/lap"))
        #expect(lapped["laps"] as? Int == 1)
        let stopped = try object(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop"))
        #expect(stopped["state"] as? String == "ended")
        let summary = try #require(stopped["summary"] as? [String: Any])
        let heartRate = (summary["statistics"] as? [String: Any])?["heartRate"] as? [String: Any]
        #expect((heartRate?["count"] as? Int ?? 0) > 0)
        // Events are ordered by their start: the lap began with the session.
        #expect(
            Set((summary["events"] as? [[String: Any]])?.compactMap { $0["type"] as? String } ?? []) == [
                "pause", "resume", "lap",
            ])
        try await eventually("the session's end on the stream") {
            events.of(kind: "session").contains { $0["state"] as? String == "ended" }
        }

        let workouts = try object(try await daemon.unix.send(.GET, "/v1/workouts"))["workouts"] as? [[String: Any]]
        #expect(workouts?.map { $0["id"] as? String } == [id])
        let stored = try object(try await daemon.unix.send(.GET, "/v1/workouts/\(id)"))
        #expect(stored["active"] as? Bool == false)
        #expect(stored["summary"] is [String: Any])
        let fit = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/export?format=fit")
        #expect(fit.status == 200)
        #expect(fit.body.count > 14 && String(decoding: fit.body[8..<12], as: UTF8.self) == ".FIT")
        let tcx = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/export?format=tcx")
        #expect(String(decoding: tcx.body, as: UTF8.self).contains("<TrainingCenterDatabase"))
        let csv = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/export?format=csv")
        #expect(csv.headers.contains { $0.0.lowercased() == "content-type" && $0.1 == "text/csv" })
        #expect(String(decoding: csv.body, as: UTF8.self).split(separator: "\n").count > 2)
    }

    @Test("two sessions at once on two straps: each records only its own strap, one athlete per strap")
    func twoConcurrentSessions() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let first = try object(try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[0]]]))
        let second = try object(try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[1]]]))
        let ids = try [#require(first["id"] as? String), #require(second["id"] as? String)]
        #expect(first["athlete"] as? String == "alice")
        #expect(second["athlete"] as? String == "strap-c0ffee000002", "an unconfigured strap is its own athlete")
        let events = EventCollector(daemon.unix, path: "/v1/events")
        defer { events.cancel() }
        try await eventually("samples of both sessions") {
            Set(events.of(kind: "sample").compactMap { $0["session"] as? String }) == Set(ids)
        }
        for (index, id) in ids.enumerated() {
            let sources = Set(
                events.of(kind: "sample").filter { $0["session"] as? String == id }.compactMap {
                    ($0["source"] as? [String: Any])?["address"] as? String
                })
            #expect(sources == [straps[index]])
        }
        let listed = try object(try await daemon.unix.send(.GET, "/v1/sessions"))["sessions"] as? [[String: Any]]
        #expect(Set(listed?.compactMap { $0["id"] as? String } ?? []) == Set(ids))
        for id in ids { #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop").status == 200) }
        let workouts = try object(try await daemon.unix.send(.GET, "/v1/workouts"))["workouts"] as? [[String: Any]]
        #expect(Set(workouts?.compactMap { $0["id"] as? String } ?? []) == Set(ids))
    }

    @Test("a guest session streams live and leaves the store unchanged")
    func guestSession() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let created = try object(
            try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[2]], "guest": true]))
        let id = try #require(created["id"] as? String)
        #expect(created["guest"] as? Bool == true)
        let events = EventCollector(daemon.unix, path: "/v1/events?session=\(id)")
        defer { events.cancel() }
        try await eventually("the guest's samples") { events.of(kind: "sample").count >= 2 }
        // The strap sends malformed frames: while it records a guest, the log names the strap only.
        let linesBefore = daemon.process.output.count
        try await eventually("a refused frame of the guest's strap in the log") {
            daemon.process.output.dropFirst(linesBefore).contains { $0.contains("frame refused") }
        }
        let guestLines = daemon.process.output.dropFirst(linesBefore).filter {
            $0.contains(straps[2]) && $0.contains("frame refused")
        }
        #expect(!guestLines.isEmpty)
        #expect(guestLines.allSatisfy { !$0.contains("bytes=") && $0.contains("guest=true") }, "\(guestLines)")
        let stopped = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop")
        #expect(stopped.status == 200)
        let workouts = try object(try await daemon.unix.send(.GET, "/v1/workouts"))["workouts"] as? [[String: Any]]
        #expect(workouts?.isEmpty == true, "nothing was written")
        #expect(try await daemon.unix.send(.GET, "/v1/workouts/\(id)").status == 404)
    }

    @Test("SIGKILL during a session: the restarted daemon recovers it and its stream resumes")
    func recoveryAfterKill() async throws {
        // Real time: the simulator's accelerated clock starts afresh with each process.
        let daemon = try await DaemonUnderTest(speed: 1)
        let created = try object(try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[0]]]))
        let id = try #require(created["id"] as? String)
        let events = EventCollector(daemon.unix, path: "/v1/events?session=\(id)")
        func heartRates(_ collector: EventCollector) -> Int {
            collector.of(kind: "sample").filter { $0["type"] as? String == "heartRate" }.count
        }
        try await eventually("heart rates before the crash") { heartRates(events) >= 4 }
        events.cancel()
        kill(daemon.process.pid, SIGKILL)
        _ = await daemon.process.wait()
        let restarted = try await DaemonUnderTest(reusing: daemon)
        defer { restarted.stop() }
        let sessions = try object(try await restarted.unix.send(.GET, "/v1/sessions"))["sessions"] as? [[String: Any]]
        #expect(sessions?.map { $0["id"] as? String } == [id], "the session is back")
        #expect(sessions?.first?["state"] as? String == "running")
        let resumed = EventCollector(restarted.unix, path: "/v1/events?session=\(id)")
        defer { resumed.cancel() }
        try await eventually("heart rates after the restart") { heartRates(resumed) >= 3 }
        let stopped = try object(try await restarted.unix.send(.POST, "/v1/sessions/\(id)/stop"))
        let count =
            ((stopped["summary"] as? [String: Any])?["statistics"] as? [String: Any])
            .flatMap { ($0["heartRate"] as? [String: Any])?["count"] as? Int } ?? 0
        // The store is written at least once a second: a SIGKILL loses at most the last second.
        #expect(count >= 6, "heart rates from before and after the crash are in one workout")
    }

    @Test("2,000 idle TCP connections: the Unix socket still answers, TCP says 503 beyond its limit, then recovers")
    func connectionFlood() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        for _ in 0..<2_000 {
            // Close-on-exec: a server another suite spawns meanwhile (PostgreSQL) must not inherit
            // 2,000 descriptors (it then refused to start: "insufficient file descriptors").
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { break }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(daemon.port).bigEndian
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            descriptors.append(descriptor)
        }
        #expect(descriptors.count == 2_000)
        // Tokens are not even looked at: the connections just sit there.
        let health = try await daemon.unix.send(.GET, "/v1/health")
        #expect(health.status == 200, "the Unix socket is its own listener with its own limit")
        try await eventually("a TCP request beyond the limit to be refused with 503") {
            (try? await daemon.tcp(DaemonUnderTest.readToken).send(.GET, "/v1/health"))?.status == 503
        }
        for descriptor in descriptors { close(descriptor) }
        descriptors = []
        try await eventually("TCP to serve again once the idle connections are gone") {
            (try? await daemon.tcp(DaemonUnderTest.readToken).send(.GET, "/v1/health"))?.status == 200
        }
        #expect(daemon.process.isRunning)
    }

    @Test("a client that never finishes its request head (slowloris) is closed after the idle timeout")
    func slowClient() async throws {
        let daemon = try await DaemonUnderTest(apiSettings: "idle_timeout = 2")
        defer { daemon.stop() }
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(daemon.port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        let partial = Array("GET /v1/health HTTP/1.1\r\nHost: x\r\n".utf8)
        #expect(write(descriptor, partial, partial.count) == partial.count)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        // The server closes it: a read returns end of file (0) rather than "nothing yet".
        try await eventually("the half-sent request's connection to be closed") {
            var byte: UInt8 = 0
            return read(descriptor, &byte, 1) == 0
        }
        #expect(try await daemon.tcp(DaemonUnderTest.readToken).send(.GET, "/v1/health").status == 200)
    }

    @Test("the socket: born 0660 (no chmod after the fact), never a symlink, never a running instance's")
    func socketHygiene() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop(removing: false) }
        let mode = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)[.posixPermissions] as? Int
        #expect(mode == 0o660)
        // A second daemon on the same configuration must not take over: the store is the first
        // one's (75); on another store, the live socket is still not stolen (71).
        let config = daemon.directory.appendingPathComponent("config.toml")
        let second = try Spawned(DaemonUnderTest.daemonBinary, ["--config", config.path], label: "second")
        #expect(await second.wait() == 75, "\(second.report)")
        let otherStore = daemon.directory.appendingPathComponent("other.toml")
        try Data(
            try String(contentsOf: config, encoding: .utf8).replacingOccurrences(
                of: "store.sqlite", with: "other.sqlite"
            )
            .utf8
        ).write(to: otherStore)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: otherStore.path)
        let third = try Spawned(DaemonUnderTest.daemonBinary, ["--config", otherStore.path], label: "third")
        #expect(await third.wait() == 71, "\(third.report)")
        #expect(third.output.contains { $0.contains("socket of a running hrbridged") }, "\(third.report)")
        #expect(try await daemon.unix.send(.GET, "/v1/health").status == 200, "the first one still serves")
        daemon.process.stop()
        // A symlink where the socket goes is refused, not followed.
        try? FileManager.default.removeItem(atPath: daemon.socketPath)
        try FileManager.default.createSymbolicLink(atPath: daemon.socketPath, withDestinationPath: "/tmp/elsewhere")
        let fourth = try Spawned(DaemonUnderTest.daemonBinary, ["--config", config.path], label: "fourth")
        #expect(await fourth.wait() == 71, "\(fourth.report)")
        #expect(fourth.output.contains { $0.contains("exists and is not a socket") }, "\(fourth.report)")
        try? FileManager.default.removeItem(at: daemon.directory)
    }

    @Test("the command line drives the daemon: session start, lap, status, watch, stop")
    func commandLine() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        func run(_ arguments: [String]) async throws -> (Int32?, [String]) {
            let process = try Spawned(
                DaemonUnderTest.binary, ["session"] + arguments + ["--socket", daemon.socketPath])
            let status = await process.wait()
            return (status, process.output)
        }
        let (startStatus, startOutput) = try await run(["start", "--sensor", straps[1], "--activity", "walking"])
        #expect(startStatus == 0, "\(startOutput)")
        let started = startOutput.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        let id = try #require(started.first?["id"] as? String)
        #expect(try await run(["lap"]).0 == 0, "the only session is the default")
        let (_, status) = try await run(["status", id])
        #expect(status.joined().contains("\"laps\":1"))
        let (watchStatus, watched) = try await run(["watch", "--session", id, "--count", "3"])
        #expect(watchStatus == 0)
        #expect(watched.count == 3)
        #expect(try await run(["stop", id]).0 == 0)
        let (refusedStatus, refused) = try await run(["pause", id])
        #expect(refusedStatus == 65, "the API's refusal: \(refused)")
        let missing = try Spawned(DaemonUnderTest.binary, ["session", "status", "--socket", "/nonexistent/api.sock"])
        #expect(await missing.wait() == 69)
    }
}

@Suite("hrbridged: structured workouts in sessions", .serialized)
struct DaemonPlanTests {
    static var plan: [String: Any] {
        [
            "version": 1, "name": "Short intervals", "activity": "running", "location": "indoor",
            "custom": [
                "warmup": ["goal": ["time": "10 s"]],
                "blocks": [
                    [
                        "iterations": 2,
                        "steps": [
                            ["purpose": "work", "goal": ["time": "10 s"], "alert": ["heartRate": "40-220 bpm"]],
                            ["purpose": "recovery", "goal": ["time": "5 s"]],
                        ],
                    ]
                ],
            ],
        ]
    }

    @Test("a session with a plan: steps and laps on the stream, the plan in the session, ends by itself")
    func planRuns() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        // A plan bomb is refused at once with the path that is too large; nothing was started.
        let bomb: [String: Any] = [
            "version": 1, "activity": "running",
            "custom": ["blocks": [["iterations": 9_000_000_000_000_000_000, "steps": [["goal": ["time": "1 s"]]]]]],
        ]
        let refused = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]], "plan": bomb])
        let refusal = String(decoding: refused.body, as: UTF8.self)
        #expect(refused.status == 422 || refused.status == 400, "\(refused.status) \(refusal)")
        #expect(refusal.contains("$.custom.blocks[0].iterations") && refusal.contains("at most 1000"), "\(refusal)")
        #expect(try await daemon.unix.send(.GET, "/v1/health").object?["sessionsActive"] as? Int == 0)
        let created = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]], "plan": Self.plan])
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let id = try #require(created.object?["id"] as? String)
        let plan = try #require(created.object?["plan"] as? [String: Any])
        #expect((plan["current"] as? [String: Any])?["purpose"] as? String == "warmup")
        let events = EventCollector(daemon.unix, path: "/v1/events?session=\(id)")
        defer { events.cancel() }
        // 10 + 2 × 15 = 40 s of workout time: 8 s at speed 5.
        try await eventually("the session to end with its plan") {
            events.of(kind: "session").contains { $0["state"] as? String == "ended" }
        }
        let planEvents = events.of(kind: "plan").compactMap { $0["event"] as? String }
        // The first step started before this subscriber came; every step's end is on the stream.
        #expect(planEvents.filter { $0 == "stepEnded" }.count == 5, "\(planEvents)")
        #expect(planEvents.filter { $0 == "lap" }.count == 2)
        #expect(planEvents.last == "completed")
        let stored = try await daemon.unix.send(.GET, "/v1/workouts/\(id)")
        let summary = try #require(stored.object?["summary"] as? [String: Any])
        #expect(abs((summary["elapsedTime"] as? Double ?? 0) - 40) < 1.5, "ends at the plan's last step")
        let kinds = (summary["events"] as? [[String: Any]])?.compactMap { $0["type"] as? String } ?? []
        #expect(kinds.filter { $0 == "segment" }.count == 5)
        #expect(kinds.filter { $0 == "lap" }.count == 2)
    }

    @Test("a plan that does not validate is refused with its problems; next without a plan is refused")
    func badPlan() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        var plan = Self.plan
        plan["version"] = 7
        let refused = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]], "plan": plan])
        #expect(refused.status == 400)
        #expect(refused.errorMessage?.hasPrefix("plan:") == true, "\(refused.errorMessage ?? "")")
        let created = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]]])
        let id = try #require(created.object?["id"] as? String)
        let next = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/next")
        #expect(next.status == 409)
    }
}
