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

@Suite("The daemon on a full disk", .serialized)
struct DaemonStoreFaultTests {
    @Test(
        "the store's disk fills during a session: health and STATUS= say so, a new session and stop answer 507 and stop can be retried, and once space is freed the session stops with every sample stored",
        .enabled(if: SmallDisk.isAvailable, "mounting a tmpfs needs root")
    )
    func diskFull() async throws {
        let disk = try SmallDisk(size: 4 << 20)
        defer { disk.remove() }
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("runtime-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: runtime) }
        let listener = try NotifyListener()
        let (datagrams, reader) = listener.collect()
        defer { reader.cancel() }
        let daemon = try await DaemonUnderTest(
            environment: ["NOTIFY_SOCKET": listener.address, "RUNTIME_DIRECTORY": runtime.path],
            storeDirectory: disk.path)
        defer { daemon.stop() }

        let created = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[0]]])
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let id = try #require(created.object?["id"] as? String)
        try await eventually("the first samples stored") {
            let reply = try? await daemon.unix.send(.GET, "/v1/workouts/\(id)/samples?type=heartRate")
            return ((reply?.object?["samples"] as? [Any])?.count ?? 0) > 0
        }
        try disk.fill()

        try await eventually("health to say the disk is full") {
            let health = try? await daemon.unix.send(.GET, "/v1/health").object
            return health?["status"] as? String == "degraded"
                && health?["problems"] as? [String] == ["disk full"]
                && ((health?["store"] as? [String: Any])?["waiting"] as? Int ?? 0) > 0
        }
        try await eventually("STATUS= to say the disk is full") {
            datagrams.all.contains { $0.hasPrefix("STATUS=degraded: disk full") }
        }
        let notStarted = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]]])
        #expect(notStarted.status == 507, "\(String(decoding: notStarted.body, as: UTF8.self))")
        #expect((notStarted.object?["error"] as? [String: Any])?["code"] as? String == "disk_full")
        let refused = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop")
        #expect(refused.status == 507)
        let error = refused.object?["error"] as? [String: Any]
        #expect(error?["code"] as? String == "disk_full")
        #expect((error?["message"] as? String)?.contains("stop it again") == true, "\(String(describing: error))")
        let pending = try #require(try await daemon.unix.send(.GET, "/v1/sessions/\(id)").object)
        #expect(pending["state"] as? String == "ended")
        #expect(pending["saved"] as? Bool == false)
        #expect(((pending["store"] as? [String: Any])?["lost"] as? Int) == 0)
        #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop").status == 507, "still full")
        #expect(try await daemon.unix.send(.GET, "/v1/health").status == 200, "the daemon goes on")

        disk.free()
        let stopped = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop")
        #expect(stopped.status == 200, "\(String(decoding: stopped.body, as: UTF8.self))")
        let summary = try #require(stopped.object?["summary"] as? [String: Any])
        #expect(stopped.object?["saved"] == nil)
        let counted = ((summary["statistics"] as? [String: Any])?["heartRate"] as? [String: Any])?["count"] as? Int
        let stored = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/samples?type=heartRate")
        let storedCount = (stored.object?["samples"] as? [Any])?.count
        #expect(
            counted != nil && storedCount == counted,
            "every heart rate the session counted is stored: \(String(describing: storedCount)) stored, \(String(describing: counted)) counted"
        )
        let workout = try #require(try await daemon.unix.send(.GET, "/v1/workouts/\(id)").object)
        #expect(workout["active"] as? Bool == false)
        let health = try #require(try await daemon.unix.send(.GET, "/v1/health").object)
        #expect(health["status"] as? String == "ok")
        #expect(health["problems"] == nil)
        let started = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]]])
        #expect(started.status == 201, "the strap was not left reserved by the refused start")
    }
}
