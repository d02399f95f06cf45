import Bridge
import BridgeClient
import BusHarness
import Foundation
import JSONSupport
import NIOHTTP1
import Samples
import Testing
import Wire
import WorkoutStore

#if canImport(Glibc)
    import Glibc
#endif

@Suite("hrbridged end to end on the mock adapter", .serialized)
struct DaemonTests {
    let straps = DaemonUnderTest.straps

    @Test("create → SSE and WebSocket streams → pause, resume, lap → stop → stored → exported")
    func fullFlow() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let sensors = try await daemon.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
        #expect(sensors.map(\.address) == straps)
        #expect(sensors.allSatisfy { $0.state == .ready })

        let created = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [straps[0]], "activity": "cycling"])
        #expect(created.status == 201)
        let session = try created.decoded(SessionJSON.self)
        let id = session.id.wire
        #expect(session.athlete == "alice", "the configured owner of the strap")
        #expect(session.state == "running")
        #expect(session.activity == "cycling")

        let events = EventCollector(daemon.unix, path: "/v1/events?session=\(id)&kinds=all")
        defer { events.cancel() }
        // A client naming no kinds (a board) gets everything but the samples; one naming kinds gets those.
        let board = EventCollector(daemon.unix, path: "/v1/events?session=\(id)")
        defer { board.cancel() }
        let chosen = EventCollector(daemon.unix, path: "/v1/events?sensor=\(straps[0])&kinds=measurement,session")
        defer { chosen.cancel() }
        let webSocket = try Spawned(
            venvPython,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/api/ws_watch.py").path,
                "ws://127.0.0.1:\(daemon.port)/v1/ws?session=\(id)&kinds=all", DaemonUnderTest.readToken, "6",
            ], label: "ws_watch")
        defer { webSocket.stop() }
        try await eventually("samples on the SSE stream") {
            try events.messages(.sample, as: SampleJSON.self).count >= 3
        }
        #expect(
            try events.messages(.session, as: SessionJSON.self).first?.payload.id == session.id,
            "a late subscriber first gets the state")
        #expect(try events.tagged().allSatisfy { $0.session == session.id }, "the filter holds")
        let samples = try events.messages(.sample, as: SampleJSON.self).map(\.payload)
        #expect(samples.allSatisfy { $0.source.address == straps[0] })
        #expect(samples.contains { $0.type == "heartRate" && $0.value > 40 })

        #expect(await webSocket.wait() == 0, "\(webSocket.output.suffix(5))")
        // The frames as printed (a line of the client's own would not be an object).
        let frames = try LiveLines.tagged(webSocket.output.filter { $0.hasPrefix("{") })
        #expect(frames.count == 6)
        #expect(frames.allSatisfy { $0.session == session.id })
        #expect(frames.first?.kind == .session)

        let paused = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/pause").decoded(SessionJSON.self)
        #expect(paused.state == "paused")
        let resumed = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/resume").decoded(SessionJSON.self)
        #expect(resumed.state == "running")
        try await Task.sleep(for: .milliseconds(600))
        let lapped = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/lap").decoded(SessionJSON.self)
        #expect(lapped.live?.laps == 1)
        let stopped = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop").decoded(SessionJSON.self)
        #expect(stopped.state == "ended")
        let summary = try #require(stopped.summary)
        #expect((summary.statistics["heartRate"]?.count ?? 0) > 0)
        // Events are ordered by their start: the lap began with the session.
        #expect(Set(summary.events.map(\.type)) == ["pause", "resume", "lap"])
        try await eventually("the session's end on the stream") {
            try events.messages(.session, as: SessionJSON.self).contains { $0.payload.state == "ended" }
        }
        try await eventually("the session's end on the board's stream") {
            try board.messages(.session, as: SessionJSON.self).contains { $0.payload.state == "ended" }
        }
        let boardKinds = Set(try board.tagged().map(\.kind))
        #expect(boardKinds.contains(.session) && !boardKinds.contains(.sample), "\(boardKinds)")
        try await eventually("measurements for the client that chose them") {
            try chosen.messages(.measurement, as: JSONValue.self).count >= 3
        }
        #expect(Set(try chosen.tagged().map(\.kind)).isSubset(of: [.measurement, .session]))

        let workouts = try await daemon.unix.send(.GET, "/v1/workouts").list("workouts", of: WorkoutListingJSON.self)
        #expect(workouts.map(\.id) == [id])
        let stored = try await daemon.unix.send(.GET, "/v1/workouts/\(id)").decoded(WorkoutDetailJSON.self)
        #expect(stored.listing.active == false)
        #expect(stored.summary != nil)
        let fit = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/export?format=fit")
        #expect(fit.status == 200)
        #expect(fit.body.count > 14 && String(decoding: fit.body[8..<12], as: UTF8.self) == ".FIT")
        let tcx = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/export?format=tcx")
        #expect(String(decoding: tcx.body, as: UTF8.self).contains("<TrainingCenterDatabase"))
        let csv = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/export?format=csv")
        #expect(csv.headers.contains { $0.0.lowercased() == "content-type" && $0.1 == "text/csv" })
        #expect(String(decoding: csv.body, as: UTF8.self).split(separator: "\n").count > 2)
    }

    @Test(
        "a socket in directories that do not exist yet: the daemon makes them searchable for the socket's group (0750), not with the socket's umask (0660, which only root could pass)"
    )
    func socketDirectoriesAreSearchable() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-sockdir-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("run/hrbridge/api.sock").path
        let config = directory.appendingPathComponent("config.toml").path
        try Data(
            """
            [adapter]
            kind = "mock"
            [store]
            path = "\(directory.path)/store.sqlite"
            [api]
            socket = "\(socket)"
            """.utf8
        ).write(to: URL(fileURLWithPath: config))
        let api = APIClient(endpoint: .unix(socket))
        let daemon = try await Spawned.startPeer(
            DaemonUnderTest.daemonBinary, ["--config", config], environment: ["STATE_DIRECTORY": directory.path],
            label: "daemon"
        ) { _ in (try? await api.send(.GET, "/v1/health"))?.status == 200 }
        defer { daemon.stop() }
        for made in ["run", "run/hrbridge"] {
            let attributes = try FileManager.default.attributesOfItem(
                atPath: directory.appendingPathComponent(made).path)
            #expect((attributes[.posixPermissions] as? Int) == 0o750, "\(made)")
        }
    }

    @Test("two sessions at once on two straps: each records only its own strap, one athlete per strap")
    func twoConcurrentSessions() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let first = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[0]]])
            .decoded(SessionJSON.self)
        let second = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[1]]])
            .decoded(SessionJSON.self)
        let ids = [first.id, second.id]
        #expect(first.athlete == "alice")
        #expect(second.athlete == "strap-c0ffee000002", "an unconfigured strap is its own athlete")
        let events = EventCollector(daemon.unix, path: "/v1/events?kinds=all")
        defer { events.cancel() }
        try await eventually("samples of both sessions") {
            Set(try events.messages(.sample, as: SampleJSON.self).compactMap(\.session)) == Set(ids)
        }
        for (index, id) in ids.enumerated() {
            let sources = Set(
                try events.messages(.sample, as: SampleJSON.self).filter { $0.session == id }.map(
                    \.payload.source.address))
            #expect(sources == [straps[index]])
        }
        let listed = try await daemon.unix.send(.GET, "/v1/sessions").list("sessions", of: SessionJSON.self)
        #expect(Set(listed.map(\.id)) == Set(ids))
        for id in ids { #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(id.wire)/stop").status == 200) }
        let workouts = try await daemon.unix.send(.GET, "/v1/workouts").list("workouts", of: WorkoutListingJSON.self)
        #expect(Set(workouts.map(\.id)) == Set(ids.map(\.wire)))
    }

    @Test("a guest session streams live and leaves the store unchanged")
    func guestSession() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let created = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[2]], "guest": true])
            .decoded(SessionJSON.self)
        let id = created.id.wire
        #expect(created.guest == true)
        let events = EventCollector(daemon.unix, path: "/v1/events?session=\(id)&kinds=all")
        defer { events.cancel() }
        try await eventually("the guest's samples") { try events.messages(.sample, as: SampleJSON.self).count >= 2 }
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
        let workouts = try await daemon.unix.send(.GET, "/v1/workouts").list("workouts", of: WorkoutListingJSON.self)
        #expect(workouts.isEmpty, "nothing was written")
        #expect(try await daemon.unix.send(.GET, "/v1/workouts/\(id)").status == 404)
    }

    @Test(
        "SIGKILL during a two-strap session: the restarted daemon recovers it on both and its stream resumes",
        arguments: [1.0, 20.0])
    func recoveryAfterKill(speed: Double) async throws {
        // Faster than real time, the first process dated its samples ahead of the wall clock: the
        // restarted simulator's clock starts after them, or the builder would refuse what follows.
        let daemon = try await DaemonUnderTest(speed: speed)
        let created = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [straps[0], straps[1]]])
            .decoded(SessionJSON.self)
        let id = created.id.wire
        func heartRates(_ collector: EventCollector) throws -> Int {
            try collector.messages(.sample, as: SampleJSON.self).filter { $0.payload.type == "heartRate" }.count
        }
        // Killed once the store holds some: what the batch in flight held is lost, as documented.
        let store = try WorkoutStore(path: daemon.storePath, guest: true)
        func stored() async throws -> [QuantitySample] {
            try await store.samples(type: .heartRate, workout: created.id)
        }
        try await eventually("heart rates stored before the crash") { try await stored().count >= 4 }
        kill(daemon.process.pid, SIGKILL)
        _ = await daemon.process.wait()
        let storedAtCrash = try await stored()
        let lastAtCrash = try #require(storedAtCrash.map(\.end).max())
        let restarted = try await DaemonUnderTest(reusing: daemon, samePort: false)
        defer { restarted.stop() }
        let sessions = try await restarted.unix.send(.GET, "/v1/sessions").list("sessions", of: SessionJSON.self)
        #expect(sessions.map(\.id) == [created.id], "the session is back")
        #expect(sessions.first?.state == "running")
        #expect(sessions.first?.sensors == [straps[0], straps[1]], "both straps, the primary first")
        let resumed = EventCollector(restarted.unix, path: "/v1/events?session=\(id)&kinds=all")
        defer { resumed.cancel() }
        try await eventually("heart rates after the restart") { try heartRates(resumed) >= 3 }
        try await eventually("the second strap's samples after the restart") {
            try resumed.messages(.sample, as: SampleJSON.self).contains { $0.payload.source.address == straps[1] }
        }
        let stopped = try await restarted.unix.send(.POST, "/v1/sessions/\(id)/stop").decoded(SessionJSON.self)
        let count = stopped.summary?.statistics["heartRate"]?.count ?? 0
        #expect(count >= storedAtCrash.count + 3, "heart rates from before and after the crash are in one workout")
        // One timeline: what came after the restart is dated after what came before it.
        let all = try await stored()
        #expect(all.count == count)
        #expect(all.filter { $0.start <= lastAtCrash }.count == storedAtCrash.count)
    }

    /// Opens N non-blocking TCP connections to 127.0.0.1:PORT, prints `opened N` and holds them
    /// until it is stopped.
    static let idleConnections = """
        import socket, sys, time
        port, count = int(sys.argv[1]), int(sys.argv[2])
        held = []
        for _ in range(count):
            connection = socket.socket()
            connection.setblocking(False)
            connection.connect_ex(("127.0.0.1", port))
            held.append(connection)
        print("opened", len(held), flush=True)
        while True:
            time.sleep(3600)
        """

    @Test("2,000 idle TCP connections: the Unix socket still answers, TCP says 503 beyond its limit, then recovers")
    func connectionFlood() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        // The 2,000 sockets live in a child process: in this one they would push the descriptors
        // other tests open past 1023, which libmosquitto's loop cannot watch (an MQTT test then
        // never saw its broker's CONNACK).
        let flood = try await Spawned.startPeer(
            "/usr/bin/python3", ["-c", Self.idleConnections, "\(daemon.port)", "2000"], label: "idle connections",
            readyLine: { $0.hasPrefix("opened ") })
        defer { flood.stop() }
        #expect(flood.output.contains("opened 2000"), "\(flood.report)")
        // Tokens are not even looked at: the connections just sit there.
        let health = try await daemon.unix.send(.GET, "/v1/health")
        #expect(health.status == 200, "the Unix socket is its own listener with its own limit")
        var refusal: APIClient.Reply?
        try await eventually("a TCP request beyond the limit to be refused with 503") {
            refusal = try? await daemon.tcp(DaemonUnderTest.readToken).send(.GET, "/v1/health")
            return refusal?.status == 503
        }
        // Written before the router, with the headers every answer carries.
        let headers = Dictionary(
            (refusal?.headers ?? []).map { ($0.0.lowercased(), $0.1) }, uniquingKeysWith: { first, _ in first })
        #expect(headers["content-security-policy"]?.hasPrefix("default-src 'none'") == true, "\(headers)")
        #expect(headers["x-content-type-options"] == "nosniff" && headers["referrer-policy"] == "no-referrer")
        flood.stop()
        try await eventually("TCP to serve again once the idle connections are gone") {
            (try? await daemon.tcp(DaemonUnderTest.readToken).send(.GET, "/v1/health"))?.status == 200
        }
        #expect(daemon.process.isRunning)
    }

    /// Opens N connections to 127.0.0.1:PORT that send nothing, then counts those the server
    /// closes (end of file) and those that got 503, for at most a minute; prints
    /// `closed C busy B` once WANT are closed or the minute is up.
    static let silentConnections = """
        import select, socket, sys, time
        port, count, want = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
        received, closed = {}, set()
        deadline = time.monotonic() + 60
        while len(closed) < want and time.monotonic() < deadline:
            readable, _, _ = select.select([c for c in held if c not in closed], [], [], 1)
            for connection in readable:
                data = connection.recv(4096)
                if data:
                    received[connection] = received.get(connection, b"") + data
                else:
                    closed.add(connection)
        busy = sum(1 for c in closed if received.get(c, b"").startswith(b"HTTP/1.1 503"))
        print("closed", len(closed), "busy", busy, flush=True)
        while True:
            time.sleep(3600)
        """

    @Test(
        "connections over the limit that send nothing get 503 and are closed at once, not after the idle timeout"
    )
    func silentConnectionsOverTheLimit() async throws {
        let daemon = try await DaemonUnderTest(apiSettings: "max_connections = 10\nidle_timeout = 3600")
        defer { daemon.stop() }
        let silent = try await Spawned.startPeer(
            "/usr/bin/python3", ["-c", Self.silentConnections, "\(daemon.port)", "50", "40"],
            label: "silent connections", readyLine: { $0.hasPrefix("closed ") })
        defer { silent.stop() }
        // The daemon's own connections (none here) aside, 40 of the 50 are over the limit.
        #expect(silent.output.contains("closed 40 busy 40"), "\(silent.report)")
        #expect(try await daemon.unix.send(.GET, "/v1/health").status == 200)
    }

    @Test("a client that never finishes its request head (slowloris) is closed after the idle timeout")
    func slowClient() async throws {
        let daemon = try await DaemonUnderTest(apiSettings: "idle_timeout = 2")
        defer { daemon.stop() }
        let descriptor = loopbackConnection(port: daemon.port)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
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

    @Test(
        "--socket longer than a Unix socket's path can be, relative --socket or --store, an unknown --log-level: refused by name (64) before anything starts, --check-config too"
    )
    func socketPathTooLong() async throws {
        let long = "/tmp/" + String(repeating: "s", count: 120)
        let daemon = try Spawned(DaemonUnderTest.daemonBinary, ["--socket", long, "--check-config"], label: "long")
        #expect(await daemon.wait() == 64, "\(daemon.report)")
        #expect(daemon.output.contains { $0.contains("--socket is 125 bytes long") }, "\(daemon.report)")
        // Refused as the configuration refuses them, --check-config included.
        for (arguments, said) in [
            (["--socket", "relative.sock"], "--socket must be an absolute path"),
            (["--store", "store.sqlite"], "--store must be an absolute path"),
            (["--log-level", "bogus"], "--log-level must be one of"),
        ] {
            let refused = try Spawned(
                DaemonUnderTest.daemonBinary, arguments + ["--check-config"], label: arguments[0])
            #expect(await refused.wait() == 64, "\(refused.report)")
            #expect(refused.output.contains { $0.contains(said) }, "\(refused.report)")
        }
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
        // It prints the session as the API gave it.
        let line = try #require(startOutput.first { $0.hasPrefix("{") }, "\(startOutput)")
        let started = try JSONText.decode(SessionJSON.self, from: Data(line.utf8))
        let id = started.id.wire
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
        #expect(try await daemon.unix.send(.GET, "/v1/health").decoded(HealthJSON.self).sessionsActive == 0)
        // Listening before the session starts (its first step ends 2 s in at 5×, sooner than a
        // loaded machine may take to subscribe): a strap's measurement says the stream is live.
        let events = EventCollector(daemon.unix, path: "/v1/events?kinds=plan,session,measurement")
        defer { events.cancel() }
        try await eventually("the live stream to carry a measurement") { !events.lines.isEmpty }
        let created = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]], "plan": Self.plan])
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let session = try created.decoded(SessionJSON.self)
        let id = session.id.wire
        let sessionID = try #require(UUID(uuidString: id))
        let plan = try #require(session.live?.plan)
        #expect(plan.current?.purpose == "warmup")
        // 10 + 2 × 15 = 40 s of workout time: 8 s at speed 5.
        // Ended and saved: the message after the store took the workout (`saved` is false before).
        try await eventually("the session to end with its plan and be saved") {
            try events.messages(.session, as: SessionJSON.self).contains {
                $0.session == sessionID && $0.payload.state == "ended" && $0.payload.summary != nil
                    && $0.payload.saved != false
            }
        }
        let planEvents = try events.messages(.plan, as: PlanJSON.Event.self).filter { $0.session == sessionID }
            .map(\.payload.event)
        // The first step started with the session; every step's end is on the stream.
        #expect(planEvents.filter { $0 == "stepEnded" }.count == 5, "\(planEvents)")
        #expect(planEvents.filter { $0 == "lap" }.count == 2)
        #expect(planEvents.last == "completed")
        let stored = try await daemon.unix.send(.GET, "/v1/workouts/\(id)").decoded(WorkoutDetailJSON.self)
        let summary = try #require(stored.summary)
        #expect(abs(summary.elapsedTime - 40) < 1.5, "ends at the plan's last step")
        let kinds = summary.events.map(\.type)
        #expect(kinds.filter { $0 == "segment" }.count == 5)
        #expect(kinds.filter { $0 == "lap" }.count == 2)
    }

    @Test(
        "a plan's activity and location are the session's; its power-zone alerts use the athlete's FTP; a hand lap after the plan's first lap is taken, and every lap is stored"
    )
    func planSetsTheWorkout() async throws {
        let daemon = try await DaemonUnderTest(
            moreSettings: "[[athletes]]\nid = \"dave\"\nname = \"Dave\"\nmax_hr = 185\nftp = 250")
        defer { daemon.stop() }
        let plan: [String: Any] = [
            "version": 1, "name": "Hand laps", "activity": "cycling", "location": "outdoor",
            "custom": [
                "blocks": [
                    [
                        "iterations": 2,
                        "steps": [["purpose": "work", "goal": ["time": "10 s"], "alert": ["powerZone": 2]]],
                    ]
                ],
                "cooldown": ["goal": "open"],
            ],
        ]
        let events = EventCollector(daemon.unix, path: "/v1/events?kinds=plan,measurement")
        defer { events.cancel() }
        try await eventually("the live stream to carry a measurement") { !events.lines.isEmpty }
        // No activity asked for: the request's default (running) is not what runs.
        let created = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]], "athlete": "dave", "plan": plan])
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let session = try created.decoded(SessionJSON.self)
        #expect(
            session.activity == "cycling" && session.location == "outdoor", "\(session.activity) \(session.location)")
        let id = session.id.wire
        let sessionID = try #require(UUID(uuidString: id))
        func planEvents() throws -> [String] {
            try events.messages(.plan, as: PlanJSON.Event.self).filter { $0.session == sessionID }.map(\.payload.event)
        }
        try await eventually("the plan's first lap") { try planEvents().contains("lap") }
        let lap = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/lap")
        #expect((200..<300).contains(lap.status), "\(lap.errorMessage ?? "")")
        try await eventually("the plan's second lap") { try planEvents().filter { $0 == "lap" }.count == 2 }
        _ = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/next")
        try await eventually("the session saved") {
            let stored = try? await daemon.unix.send(.GET, "/v1/workouts/\(id)").decoded(WorkoutDetailJSON.self)
            return stored?.summary != nil
        }
        let stored = try await daemon.unix.send(.GET, "/v1/workouts/\(id)").decoded(WorkoutDetailJSON.self)
        let laps = try #require(stored.summary).events.filter { $0.type == "lap" }
        #expect(laps.count == 3, "\(laps)")
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
        let id = try created.decoded(SessionJSON.self).id.wire
        let next = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/next")
        #expect(next.status == 409)
    }
}
