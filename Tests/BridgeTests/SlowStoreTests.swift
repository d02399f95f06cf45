import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Testing
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// A store that stops answering must not stop the live side: nothing of the daemon waits on a
/// thread for the database.
@Suite("hrbridged with PostgreSQL paused (SIGSTOP)", .serialized)
struct SlowStoreTests {
    @Test(
        "10 s of a stopped PostgreSQL: the live stream goes on, /v1/health answers throughout, nothing is lost"
    )
    func pausedDatabase() async throws {
        try await withPostgres { database in
            let daemon = try await DaemonUnderTest(
                speed: 1, storeSection: "[store]\nurl = \"\(database.url())\"")
            defer { daemon.stop() }
            let created = try await daemon.unix.send(
                .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[0]]]
            ).decoded(SessionJSON.self)
            let id = created.id.wire
            let events = EventCollector(daemon.unix, path: "/v1/events?session=\(id)&kinds=all")
            defer { events.cancel() }
            func samplesStored() async throws -> Int {
                Int(
                    try await database.query(
                        "SELECT count(*) FROM sample WHERE workout_id = '\(created.id.uuidString)'"
                    ).first ?? "0") ?? 0
            }
            try await eventually("samples in PostgreSQL") { try await samplesStored() >= 3 }

            database.signalEveryProcess(SIGSTOP)
            // Resumed however the pause ends (a throw in it must not leave PostgreSQL stopped).
            var resumed = false
            defer { if !resumed { database.signalEveryProcess(SIGCONT) } }
            let pausedAt = ContinuousClock.now
            let liveBefore = try events.messages(.sample, as: SampleJSON.self).count
            var slowest: Duration = .zero
            var answers = 0
            // The scenario is the pause itself: 10 s of real time with the server stopped.
            while ContinuousClock.now - pausedAt < .seconds(10) {
                let asked = ContinuousClock.now
                let health = try await daemon.unix.send(.GET, "/v1/health")
                slowest = max(slowest, ContinuousClock.now - asked)
                #expect(health.status == 200)
                answers += 1
                try await Task.sleep(for: .milliseconds(200))
            }
            let liveDuring = try events.messages(.sample, as: SampleJSON.self).count - liveBefore
            let storedWhilePaused = try await daemon.unix.send(.GET, "/v1/sessions/\(id)").decoded(SessionJSON.self)
            database.signalEveryProcess(SIGCONT)
            resumed = true

            // Every request was answered while the database was stopped (SIGCONT comes after the
            // loop). A daemon waiting on the database would answer once or not at all in the pause;
            // no latency bound here (a loaded machine once took 3.04 s for one answer): that is
            // the benchmarks' business.
            #expect(answers >= 5, "\(answers) health answers during the pause, the slowest in \(slowest)")
            // A strap at 1 Hz: about 10 heart rates (and their RR) in 10 s reached the stream.
            #expect(liveDuring >= 8, "live samples during the pause: \(liveDuring)")
            #expect(storedWhilePaused.state == "running")

            // Back: what was held is written, the session ends saved with every sample.
            let stopped = try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop").decoded(SessionJSON.self)
            let heartRates = stopped.summary?.statistics["heartRate"]?.count ?? 0
            let stored = try await database.query(
                "SELECT count(*) FROM sample WHERE type = 'heartRate' AND workout_id = '\(created.id.uuidString)'")
            #expect(Int(stored.first ?? "0") == heartRates, "every heart rate of the session is stored")
            #expect(heartRates >= 12)
        }
    }
}
