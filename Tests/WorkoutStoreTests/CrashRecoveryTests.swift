import BusHarness
import Foundation
import GRDB
import Logging
import Samples
import Sensors
import Testing
import Wire
import Workouts

@testable import WorkoutStore

private let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    .appendingPathComponent("hrbridge").path

private func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// A sample line's identity: type, start (as printed, ms), value.
private func key(_ type: String, _ start: String, _ value: Double) -> String { "\(type)|\(start)|\(value)" }

@Suite("Crash recovery", .serialized)
struct CrashRecoveryTests {
    @Test(
        "SIGKILL at 20 random points: the journal survives, only the last batch (about 1 s) of samples is lost, integrity ok, recovery continues"
    )
    func sigkill() async throws {
        var generator = SystemRandomNumberGenerator()
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        for point in 0..<20 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("store.sqlite").path
            // 120 min at 60× outlasts the 60 s deadline below: the kill always interrupts a running
            // workout (with 30 min, a loaded run could see the workout end first).
            let child = try Spawned(
                binary, ["workout", "run", "--json", "--speed", "60", "--duration", "120m", "--store", path],
                label: "workout")
            let wanted = Int.random(in: 30...900, using: &generator)
            // Note when each sample line arrives, to know which were printed in the last second.
            var seen: [String: Double] = [:]
            var consumed = 0
            var samplesSeen = 0
            let deadline = monotonicSeconds() + 60
            while samplesSeen < wanted, monotonicSeconds() < deadline {
                let lines = child.output
                let now = monotonicSeconds()
                for line in lines[consumed...] where line.contains("\"kind\":\"sample\"") {
                    // (The last line may be cut short by the kill.)
                    guard let sample = try? JSONDecoder().decode(SampleJSON.self, from: Data(line.utf8)) else {
                        continue
                    }
                    seen[key(sample.type, sample.start, sample.value)] = now
                    samplesSeen += 1
                }
                consumed = lines.count
                try await Task.sleep(for: .milliseconds(5))
            }
            kill(child.pid, SIGKILL)
            let killedAt = monotonicSeconds()
            _ = await child.wait()
            for line in child.output[consumed...] where line.contains("\"kind\":\"sample\"") {
                if let sample = try? JSONDecoder().decode(SampleJSON.self, from: Data(line.utf8)) {
                    seen[key(sample.type, sample.start, sample.value)] = killedAt
                }
            }

            let store = try WorkoutStore(path: path)
            #expect(try await store.sqlite?.integrityCheck() == "ok", "point \(point)")
            let sessions = try await store.activeSessions()
            guard let record = sessions.first else {
                // Killed before the session was journaled: nothing may have been stored for it.
                #expect(try await store.workouts().isEmpty, "point \(point): a workout without a journal")
                continue
            }
            #expect(sessions.count == 1)
            var stored: Set<String> = []
            for type in QuantityType.allCases {
                for sample in try await store.samples(type: type, workout: record.workoutID) {
                    stored.insert(key(type.rawValue, sample.start.formatted(style), sample.canonicalValue))
                }
            }
            let missing = seen.filter { !stored.contains($0.key) }
            // At most what arrived since the last batch may be lost: the 1 s flush interval plus
            // the batch's own write and scheduling, which on 2 loaded cores (CI runs Chromium,
            // schemathesis and PostgreSQL servers beside this) reach over a second.
            let stale = missing.filter { killedAt - $0.value > 3.0 }
            #expect(stale.isEmpty, "point \(point): \(stale.count) of \(seen.count) samples older than 3 s were lost")
            let collector = try await WorkoutRecovery.rebuild(record, store: store, logger: Logger(label: "test"))
            let storedHeartRates = try await store.samples(type: .heartRate, workout: record.workoutID).count
            #expect(
                collector.statistics(for: .heartRate)?.sampleCount ?? 0 == storedHeartRates,
                "point \(point): \(collector.statistics(for: .heartRate)?.sampleCount ?? -1) vs \(storedHeartRates)")
            #expect(collector.phase == .collecting)

            if point % 5 == 0 {
                // The session continues: recover runs it to the end and saves it.
                let recover = try Spawned(
                    binary, ["workout", "recover", "--json", "--speed", "max", "--duration", "2m", "--store", path],
                    label: "recover")
                #expect(await recover.wait(timeout: .seconds(60)) == 0, "\(recover.output.suffix(3))")
                let reopened = try WorkoutStore(path: path)
                #expect(try await reopened.activeSessions().isEmpty)
                let finished = try await reopened.workout(record.workoutID)
                #expect(finished.isActive == false)
                let before = collector.statistics(for: .heartRate)?.sampleCount ?? 0
                #expect((finished.summary?.statistics[.heartRate]?.sampleCount ?? 0) > before)
                #expect(try await reopened.sqlite?.integrityCheck() == "ok")
            }
        }
    }

    @Test("a guest workout leaves the store file unchanged")
    func guest() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("guest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let first = try Spawned(
            binary, ["workout", "run", "--json", "--speed", "max", "--duration", "2m", "--store", path])
        #expect(await first.wait() == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let details = try await WorkoutStore(path: path, guest: true).sourceDetails(
            SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01"))
        #expect(details.model == "Virtual Strap")
        #expect(details.firmware == "1.0")
        let guest = try Spawned(
            binary, ["workout", "run", "--json", "--speed", "max", "--duration", "2m", "--store", path, "--guest"])
        #expect(await guest.wait() == 0)
        #expect(guest.output.last?.contains("elapsedTime") == true)
        #expect(guest.output.contains { $0.contains("not saved (guest workout)") })
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(before == after)
        // Reading works for a guest; any save attempt is a typed refusal.
        let guestView = try WorkoutStore(path: path, guest: true)
        #expect(try await guestView.workouts().count == 1)
        await #expect(throws: StoreError.notPermissibleForGuestUser) { try await guestView.deleteWorkout(UUID()) }
        await #expect(throws: StoreError.notPermissibleForGuestUser) {
            try await guestView.append(
                [
                    try QuantitySample(
                        type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: 60), start: Date(),
                        end: Date(), source: SampleSource(adapter: "a", address: "b"))
                ],
                workout: nil)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("one process records into a store: a second recorder and a daemon on it exit 75; a killed holder frees it")
    func oneRecorderPerStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let live = try Spawned(
            binary, ["workout", "run", "--json", "--speed", "1", "--duration", "30m", "--store", path], label: "live")
        defer { live.stop() }
        try await eventually("the live workout to record") {
            live.output.contains { $0.contains("\"kind\":\"sample\"") }
        }
        let second = try Spawned(
            binary, ["workout", "run", "--json", "--speed", "max", "--duration", "1m", "--store", path],
            label: "second")
        #expect(await second.wait() == 75, "\(second.report)")
        #expect(second.output.contains { $0.contains("another hrbridge records into this store (pid \(live.pid)") })
        let config = directory.appendingPathComponent("config.toml")
        try Data("[store]\npath = \"\(path)\"\n[api]\nsocket = \"\(directory.path)/api.sock\"\n".utf8).write(to: config)
        let daemon = try Spawned(binary + "d", ["--config", config.path], label: "daemon")
        #expect(await daemon.wait() == 75, "\(daemon.report)")
        // SIGKILL: the kernel releases the lock with the process; recovery can take it.
        kill(live.pid, SIGKILL)
        _ = await live.wait()
        let recover = try Spawned(
            binary, ["workout", "recover", "--json", "--speed", "max", "--duration", "1m", "--store", path],
            label: "recover")
        #expect(await recover.wait() == 0, "\(recover.report)")
    }

    @Test(
        "Ctrl-C and SIGTERM are a stop, not a crash: the workout ends where it stands, is saved, exit 0, nothing to recover",
        arguments: [SIGINT, SIGTERM])
    func interruptSaves(signal: Int32) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let run = try Spawned(
            binary, ["workout", "run", "--json", "--speed", "60", "--duration", "120m", "--store", path], label: "run")
        defer { run.stop() }
        try await eventually("the workout to record") { run.output.contains { $0.contains("\"kind\":\"sample\"") } }
        kill(run.pid, signal)
        #expect(await run.wait() == 0, "\(run.report)")
        let summary = try JSONDecoder().decode(WorkoutJSON.Summary.self, from: Data(try #require(run.output.last).utf8))
        let elapsed = summary.elapsedTime
        #expect(elapsed > 0 && elapsed < 1800, "ended where it stood: \(elapsed) s")
        let store = try WorkoutStore(path: path, guest: true)
        #expect(try await store.activeSessions().isEmpty, "nothing left for --recover")
        let workouts = try await store.workouts()
        #expect(workouts.count == 1)
        #expect(workouts.first?.isActive == false)
        #expect(workouts.first?.summary != nil)
    }

    @Test("an unreadable journal row is reported, not skipped silently")
    func unreadableJournalRow() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        // A crashed workout leaves its journal row; then the row is damaged.
        let crashed = try Spawned(
            binary, ["workout", "run", "--json", "--speed", "60", "--duration", "120m", "--store", path],
            label: "crashed")
        try await eventually("the workout to record") { crashed.output.contains { $0.contains("\"kind\":\"sample\"") } }
        kill(crashed.pid, SIGKILL)
        _ = await crashed.wait()
        let store = try WorkoutStore(path: path)
        let id = try #require(try await store.activeSessions().first?.workoutID)
        try await #require(store.sqlite).write { db in
            try db.execute(sql: "UPDATE journal SET configuration = 'not json', sessionState = 'flying'")
        }
        #expect(try await store.activeSessions().isEmpty)
        #expect(
            try await store.unreadableJournalRows().first?.hasPrefix("workout \(id.uuidString): unreadable") == true)
        let run = try Spawned(
            binary, ["workout", "run", "--json", "--speed", "max", "--duration", "1m", "--store", path], label: "run")
        #expect(await run.wait() == 0, "\(run.report)")
        #expect(run.output.contains { $0.contains("cannot recover from the journal: workout \(id.uuidString)") })
    }
}
