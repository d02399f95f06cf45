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
        "the store's disk fills during a session: health and STATUS= say so, a new session and stop answer 507 and stop can be retried, and once space is freed the daemon saves the session by itself with every sample stored",
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
        let id = try created.decoded(SessionJSON.self).id.wire
        try await eventually("the first samples stored") {
            // (Not stored yet: a 404, not an answer, so try again.)
            let reply = try? await daemon.unix.send(.GET, "/v1/workouts/\(id)/samples?type=heartRate")
            return (try? reply?.list("samples", of: SampleJSON.self).isEmpty) == false
        }
        try disk.fill()

        try await eventually("health to say the disk is full") {
            let health = try? await daemon.unix.send(.GET, "/v1/health").decode(HealthJSON.self)
            return health?.status == "degraded" && health?.problems == ["disk full"]
                && (health?.store?.waiting ?? 0) > 0
        }
        try await eventually("STATUS= to say the disk is full") {
            datagrams.all.contains { $0.hasPrefix("STATUS=degraded: disk full") }
        }
        let notStarted = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]]])
        #expect(notStarted.status == 507, "\(String(decoding: notStarted.body, as: UTF8.self))")
        #expect(try notStarted.decoded(ErrorJSON.self).error.code == "disk_full")
        let refused = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop")
        #expect(refused.status == 507)
        let error = try refused.decoded(ErrorJSON.self).error
        #expect(error.code == "disk_full")
        #expect(error.message.contains("stop it again"), "\(error)")
        let pending = try await daemon.unix.send(.GET, "/v1/sessions/\(id)").decoded(SessionJSON.self)
        #expect(pending.state == "ended")
        #expect(pending.saved == false)
        #expect(pending.store?.lost == 0)
        #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop").status == 507, "still full")
        // Ended, though unsaved: its strap is free again (a new session is refused by the disk, not the strap).
        let again = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[0]]])
        #expect(again.status == 507, "\(String(decoding: again.body, as: UTF8.self))")
        #expect(try await daemon.unix.send(.GET, "/v1/health").status == 200, "the daemon goes on")
        // A full disk is the daemon's fault, not a client's: not counted among refused requests.
        let metrics = String(decoding: try await daemon.unix.send(.GET, "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("hrbridge_frames_decoded_total"), "the daemon's metrics")
        #expect(!metrics.contains(#"hrbridge_api_refused_total{code="disk_full"}"#))

        disk.free()
        // Nobody stops it again: the daemon saves it by itself (a class member's session has no one to).
        try await eventually("the session saved by itself once space is freed") {
            let reply = try? await daemon.unix.send(.GET, "/v1/sessions/\(id)").decode(SessionJSON.self)
            return reply?.state == "ended" && reply?.saved == nil && reply?.summary != nil
        }
        // A stop now answers with the saved workout.
        let stopped = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop")
        #expect(stopped.status == 200, "\(String(decoding: stopped.body, as: UTF8.self))")
        let session = try stopped.decoded(SessionJSON.self)
        let summary = try #require(session.summary)
        #expect(session.saved == nil)
        let counted = summary.statistics["heartRate"]?.count
        let stored = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/samples?type=heartRate")
        let storedCount = try stored.list("samples", of: SampleJSON.self).count
        #expect(
            counted != nil && storedCount == counted,
            "every heart rate the session counted is stored: \(storedCount) stored, \(String(describing: counted)) counted"
        )
        let workout = try await daemon.unix.send(.GET, "/v1/workouts/\(id)").decoded(WorkoutDetailJSON.self)
        #expect(workout.listing.active == false)
        let health = try await daemon.unix.send(.GET, "/v1/health").decoded(HealthJSON.self)
        #expect(health.status == "ok")
        #expect(health.problems == nil)
        try await eventually("STATUS= to say the store is fine again") {
            let all = datagrams.all
            guard let degraded = all.lastIndex(where: { $0.hasPrefix("STATUS=degraded") }) else { return false }
            return all[(degraded + 1)...].contains { $0.hasPrefix("STATUS=") && !$0.contains("degraded") }
        }
        let started = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]]])
        #expect(started.status == 201, "the strap was not left reserved by the refused start")
    }
}
