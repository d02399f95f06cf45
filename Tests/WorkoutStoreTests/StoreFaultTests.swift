import BusHarness
import Foundation
import GRDB
import Logging
import Samples
import Sensors
import Testing
import Workouts

@testable import WorkoutStore

private let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    .appendingPathComponent("hrbridge").path
private let strap = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "Strap")
private let origin = Date(timeIntervalSinceReferenceDate: 800_006_400)

/// `count` heart rates at 4 Hz.
private func heartRates(_ count: Int, from offset: Int = 0) -> [QuantitySample] {
    (offset..<offset + count).map { (index: Int) -> QuantitySample in
        let date = origin.addingTimeInterval(Double(index) / 4)
        let value = Double(100 + index % 60)
        return try! QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: value), start: date, end: date,
            source: strap)
    }
}

private func temporaryDirectory(_ name: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A store with one running workout.
private func storeWithWorkout(at path: String) async throws -> (WorkoutStore, UUID) {
    let store = try WorkoutStore(path: path)
    let id = UUID()
    try await store.beginWorkout(
        ActiveSessionRecord(
            workoutID: id, configuration: WorkoutConfiguration(activityType: .running), profile: nil, start: origin,
            state: .running))
    return (store, id)
}

private func storedStarts(_ store: WorkoutStore, _ workout: UUID) async throws -> [Date] {
    try await store.samples(type: .heartRate, workout: workout).map(\.start).sorted()
}

/// A store with one running workout on a small disk filled to its last byte, and a spill
/// directory elsewhere.
private final class FullDisk {
    let disk: SmallDisk
    let spill: String
    let store: WorkoutStore
    let workout: UUID

    /// `beforeFilling` runs while there is still room (to leave files on the disk).
    init(beforeFilling: (String) throws -> Void = { _ in }) async throws {
        disk = try SmallDisk(size: 4 << 20)
        spill = try temporaryDirectory("spill")
        (store, workout) = try await storeWithWorkout(at: disk.path + "/store.sqlite")
        try beforeFilling(disk.path)
        try disk.fill()
    }

    func remove() {
        disk.remove()
        try? FileManager.default.removeItem(atPath: spill)
    }
}

@Suite("Store faults: a full disk, a corrupt file, a row of the wrong type", .serialized)
struct StoreFaultTests {
    let logger = Logger(label: "test")

    @Test(
        "a full disk: nothing is dropped (memory up to its limit, the rest spilled), finish fails until space is freed, then every sample is stored",
        .enabled(if: SmallDisk.isAvailable, "mounting a tmpfs needs root")
    )
    func diskFull() async throws {
        let full = try await FullDisk()
        defer { full.remove() }
        let (disk, spill, store, workout) = (full.disk, full.spill, full.store, full.workout)
        #expect(disk.available == 0)

        let streamer = SampleStreamer(
            store: store, workout: workout, memoryLimit: 1000, spillDirectory: spill, clock: ManualWallClock(),
            logger: logger)
        let samples = heartRates(10_000)
        streamer.submit(samples)
        let health = await streamer.flush()
        #expect(health.lastError == .diskFull(path: store.sqlite!.path))
        #expect(health.waiting == 1000, "memory holds its limit")
        #expect(health.spilled == 9000, "the older samples went to the spill file")
        #expect(health.lost == 0)
        #expect(FileManager.default.fileExists(atPath: streamer.spillPath))
        await #expect(throws: StoreError.diskFull(path: store.sqlite!.path)) { try await streamer.finish() }
        await #expect(throws: StoreError.diskFull(path: store.sqlite!.path)) { try await streamer.finish() }
        #expect(try await storedStarts(store, workout).isEmpty, "a refused batch leaves nothing half-written")

        disk.free()
        try await streamer.finish()
        #expect(streamer.health.isCaughtUp)
        #expect(streamer.health.lastError == nil)
        #expect(try await storedStarts(store, workout) == samples.map(\.start), "every sample, once")
        #expect(!FileManager.default.fileExists(atPath: streamer.spillPath), "the spill file is gone once stored")
        #expect(try await store.sqlite?.integrityCheck() == "ok")
    }

    @Test(
        "samples are dropped only when the spill file cannot be written either, and then they are counted",
        .enabled(if: SmallDisk.isAvailable, "mounting a tmpfs needs root")
    )
    func spillUnwritable() async throws {
        // A directory that cannot exist: its parent is a file.
        let full = try await FullDisk { try Data("x".utf8).write(to: URL(fileURLWithPath: $0 + "/not-a-directory")) }
        defer { full.remove() }
        let (disk, store, workout) = (full.disk, full.store, full.workout)
        let blocker = disk.path + "/not-a-directory"
        let streamer = SampleStreamer(
            store: store, workout: workout, memoryLimit: 500, spillDirectory: blocker + "/spill",
            clock: ManualWallClock(), logger: logger)
        streamer.submit(heartRates(2000))
        let health = await streamer.flush()
        #expect(health.waiting == 500)
        #expect(health.spilled == 0)
        #expect(health.lost == 1500)
        disk.free()
        try await streamer.finish()
        #expect(
            try await storedStarts(store, workout) == heartRates(500, from: 1500).map(\.start), "the newest 500 kept")
    }

    @Test(
        "a full disk: raw-signal frames wait in memory up to their limit, the oldest beyond it are counted as lost, the rest stored once space is freed",
        .enabled(if: SmallDisk.isAvailable, "mounting a tmpfs needs root")
    )
    func waveformsOnAFullDisk() async throws {
        let full = try await FullDisk()
        defer { full.remove() }
        let (disk, spill, store, workout) = (full.disk, full.spill, full.store, full.workout)
        let h10 = SensorIdentity(adapter: "hci0", address: "A0:9E:1A:00:00:01")
        let streamer = SampleStreamer(
            store: store, workout: workout, waveformMemoryLimit: 30, spillDirectory: spill, clock: ManualWallClock(),
            logger: logger)
        let frames = (0..<50).map { waveformFrame(h10, .ecg, $0) }
        streamer.submit(heartRates(8))
        streamer.submit(waveforms: frames)
        var health = await streamer.flush()
        #expect(health.lastError == .diskFull(path: store.sqlite!.path))
        #expect(health.waveformsWaiting == 30 && health.waveformFramesLost == 20)
        #expect(!health.isCaughtUp)
        await #expect(throws: StoreError.diskFull(path: store.sqlite!.path)) { try await streamer.finish() }
        disk.free()
        try await streamer.finish()
        health = streamer.health
        #expect(health.isCaughtUp && health.waveformFramesLost == 20)
        #expect(
            sameFrames(try await store.waveforms(WaveformQuery(workout: workout)), Array(frames.suffix(30))),
            "the newest 30")
        #expect(try await storedStarts(store, workout).count == 8)
    }

    @Test(
        "a process that stops while the disk is full leaves its samples in the spill file; recovery stores them first",
        .enabled(if: SmallDisk.isAvailable, "mounting a tmpfs needs root")
    )
    func spillSurvivesTheProcess() async throws {
        let full = try await FullDisk()
        defer { full.remove() }
        let (disk, spill, store, workout) = (full.disk, full.spill, full.store, full.workout)
        do {
            let streamer = SampleStreamer(
                store: store, workout: workout, spillDirectory: spill, clock: ManualWallClock(), logger: logger)
            streamer.submit(heartRates(3000))
            #expect(await streamer.flush().lastError == .diskFull(path: store.sqlite!.path))
            try await streamer.spillWaiting()
            #expect(streamer.health.spilled == 3000)
            let lines = try String(contentsOfFile: streamer.spillPath, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 3000)
            #expect(streamer.health.waiting == 0)
        }
        let record = try #require(try await store.activeSessions().first)
        await #expect(throws: StoreError.diskFull(path: store.sqlite!.path)) {
            try await WorkoutRecovery.rebuild(record, store: store, spillDirectory: spill, logger: logger)
        }
        disk.free()
        let collector = try await WorkoutRecovery.rebuild(record, store: store, spillDirectory: spill, logger: logger)
        #expect(collector.statistics(for: .heartRate)?.sampleCount == 3000)
        #expect(try await storedStarts(store, workout) == heartRates(3000).map(\.start))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: spill)
        #expect(leftovers.isEmpty)
    }

    @Test("a row of the wrong type is a typed error from the library and exit 73 from the CLI, never a trap")
    func wrongTypeRow() async throws {
        let (path, workout) = try await corruptStore()
        for arguments in [
            ["workouts", "list"], ["samples", "--type", "heart-rate"], ["workouts", "show", workout.uuidString],
        ] {
            let run = try Spawned(binary, arguments + ["--store", path], label: arguments.joined(separator: " "))
            #expect(await run.wait() == 73, "\(arguments): \(run.output.suffix(3))")
            let errors = run.output.filter { $0.hasPrefix("hrbridge: ") }
            #expect(errors.count == 1, "one clear line: \(run.output.suffix(3))")
            #expect(errors.first?.contains("unreadable") == true, "\(errors)")
        }
    }

    @Test("a file that is not a database: one line and exit 73 from the CLI and the daemon")
    func notADatabase() async throws {
        let directory = try temporaryDirectory("garbage")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/store.sqlite"
        try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: path))
        let list = try Spawned(binary, ["workouts", "list", "--store", path], label: "workouts list")
        #expect(await list.wait() == 73)
        #expect(list.output.contains { $0.hasPrefix("hrbridge: cannot open the store") }, "\(list.output.suffix(3))")
        try Data(
            """
            [adapter]
            kind = "mock"

            [store]
            path = "\(path)"

            [api]
            socket = "\(directory)/api.sock"
            """.utf8
        ).write(to: URL(fileURLWithPath: directory + "/config.toml"))
        let daemon = try Spawned(binary + "d", ["--config", directory + "/config.toml"], label: "daemon")
        #expect(await daemon.wait() == 73, "\(daemon.output.suffix(3))")
        #expect(daemon.output.contains { $0.contains("cannot open the store") }, "\(daemon.output.suffix(3))")
    }

    /// A store with text where numbers belong, as another program (or a damaged page) may leave;
    /// the library throws a typed error for it.
    func corruptStore() async throws -> (String, UUID) {
        let directory = try temporaryDirectory("corrupt")
        let path = directory + "/store.sqlite"
        let (store, workout) = try await storeWithWorkout(at: path)
        try await store.append(heartRates(10), workout: workout)
        // What another program (or a damaged page) may leave: text where a number belongs.
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            try db.execute(sql: "UPDATE sample SET value = 'high' WHERE id = (SELECT MIN(id) FROM sample)")
            // A path code this version never writes: refused with its sample, not read as a link.
            try db.execute(sql: "UPDATE sample SET via = 7 WHERE id = (SELECT MAX(id) FROM sample)")
            try db.execute(sql: "UPDATE workout SET athlete = x'ff'")
        }
        try queue.close()
        await #expect {
            try await store.samples(type: .heartRate, workout: workout)
        } throws: { error in
            guard case .corrupt(let what) = error as? StoreError else { return false }
            return what.contains("value")
        }
        await #expect {
            try await store.workouts()
        } throws: { error in
            guard case .corrupt = error as? StoreError else { return false }
            return true
        }
        await #expect {
            try await store.samples(type: .heartRate, workout: workout, limit: 1, ascending: false)
        } throws: { error in
            guard case .corrupt(let what) = error as? StoreError else { return false }
            return what.contains("via 7 is not 0 (link) or 1 (broadcast)")
        }

        return (path, workout)
    }
}
