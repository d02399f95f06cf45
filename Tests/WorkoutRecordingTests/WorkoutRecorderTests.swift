import BusHarness
import Foundation
import Logging
import Samples
import SensorSimulator
import Sensors
import Testing
import WorkoutPlans
import WorkoutRecording
import WorkoutStore
import Workouts

/// The recorder both the CLI and the daemon use, on the simulator and a real SQLite store.
@Suite("WorkoutRecorder: one way to record a workout")
struct WorkoutRecorderTests {
    func temporaryStore() throws -> (WorkoutStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recorder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (try WorkoutStore(path: directory.appendingPathComponent("store.sqlite").path), directory)
    }

    @Test(
        "begin journals the workout, pause and resume keep the journal's state, laps and samples are stored, finish saves once"
    )
    func recordsAndSaves() async throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = Logger(label: "test")
        // Simulated time only: each step plays a second and returns once the recorder has taken it.
        let adapter = MockSensorAdapter(
            scenario: .default, seed: 1, steppingFrom: Date(timeIntervalSinceReferenceDate: 800_000_000),
            logger: logger)
        let clock = adapter.timeline
        let strap = try #require(adapter.sensors.first)
        let recorder = try await WorkoutRecorder(
            WorkoutRecorder.Setup(
                configuration: WorkoutConfiguration(activityType: .running, location: .indoor),
                profile: UserProfile(id: "runner", age: 35), sensors: [strap], store: store),
            adapter: adapter, clock: clock, registry: WorkoutSessionRegistry(), logger: logger)
        await recorder.attach()
        try await adapter.connect(strap)
        let start = clock.now()
        _ = try await recorder.begin(at: start)
        #expect(try await store.activeSessions().map(\.workoutID) == [recorder.id], "journaled as it begins")

        for _ in 0..<60 { await adapter.step() }
        try await recorder.lap(at: clock.now())
        try await recorder.pause(at: clock.now())
        #expect(try await store.activeSessions().first?.state == .paused, "the journal follows a pause")
        try await recorder.resume(at: clock.now())
        #expect(try await store.activeSessions().first?.state == .running)
        for _ in 0..<60 { await adapter.step() }

        let end = clock.now()
        let workout = try await recorder.finish(
            at: end, settle: .drain(deliver: { stop in await adapter.finish(at: stop) }))
        await recorder.streamsEnded()
        #expect(try await store.activeSessions().isEmpty, "the journal entry goes once saved")
        let stored = try await store.workout(recorder.id)
        #expect(stored.summary != nil)
        #expect(workout.elapsedTime == 120)
        #expect(workout.events.contains { $0.kind == .lap })
        #expect(workout.events.contains { $0.kind == .pause })
        let heartRates = try await store.samples(type: .heartRate, workout: recorder.id)
        #expect(heartRates.count == workout.statistics[.heartRate]?.sampleCount, "every counted heart rate stored")
        #expect(heartRates.allSatisfy { $0.source.address == strap.address }, "only the chosen strap")
        let again = try await recorder.finish(at: end)
        #expect(again.id == workout.id, "finishing twice returns the saved workout")
    }

    @Test("the activity begun with the workout waits for the workout's row: nothing refused, nothing logged")
    func firstActivityWaitsForTheWorkoutRow() async throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let records = LogRecords()
        let logger = Logger(label: "test") { _ in records }
        let adapter = MockSensorAdapter(
            scenario: .default, seed: 2, steppingFrom: Date(timeIntervalSinceReferenceDate: 800_000_000),
            logger: logger)
        let strap = try #require(adapter.sensors.first)
        let recorder = try await begunRecorder(store: store, adapter: adapter, strap: strap, logger: logger)
        await recorder.waitUntilHandlersCaughtUp()
        // Before, the update handler wrote the activity's begin while `begin` was still writing
        // the workout's row: refused by the foreign key, and logged as the store refusing it.
        let warnings = records.events.filter { $0.level >= .warning }.map(\.message)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(try await store.activityIntervals(of: recorder.id).count == 1, "the activity is stored as it begins")
        for _ in 0..<5 { await adapter.step() }
        _ = try await recorder.finish(
            at: adapter.timeline.now(), settle: .drain(deliver: { stop in await adapter.finish(at: stop) }))
        await recorder.streamsEnded()
        #expect(records.events.filter { $0.level >= .warning }.isEmpty)
    }

    let profile = UserProfile(id: "runner", age: 35)
    let configuration = WorkoutConfiguration(activityType: .running, location: .indoor)

    /// The default scenario, stepped by hand, and its first strap.
    func simulatedStrap(seed: UInt64) throws -> (MockSensorAdapter, SensorIdentity, Logger) {
        let logger = Logger(label: "test")
        let adapter = MockSensorAdapter(
            scenario: .default, seed: seed, steppingFrom: Date(timeIntervalSinceReferenceDate: 800_000_000),
            logger: logger)
        return (adapter, try #require(adapter.sensors.first), logger)
    }

    /// A recorder on the simulated strap, storing into `store`: attached, the strap connected,
    /// the workout begun at the simulator's now.
    func begunRecorder(
        store: WorkoutStore, adapter: MockSensorAdapter, strap: SensorIdentity, logger: Logger
    ) async throws -> WorkoutRecorder {
        let recorder = try await WorkoutRecorder(
            WorkoutRecorder.Setup(configuration: configuration, profile: profile, sensors: [strap], store: store),
            adapter: adapter, clock: adapter.timeline, registry: WorkoutSessionRegistry(), logger: logger)
        await recorder.attach()
        try await adapter.connect(strap)
        _ = try await recorder.begin(at: adapter.timeline.now())
        return recorder
    }

    /// The process dies: nothing more is taken, and what the streamer holds reaches the store as a
    /// restart finds it.
    func crash(_ recorder: WorkoutRecorder) async throws {
        await recorder.waitUntilHandlersCaughtUp()
        await recorder.dataSource.detach()
        await recorder.stopStreams()
        try await recorder.streamer?.finish()
    }

    /// What a restart makes of the journal's first record: a recorder continuing it, attached.
    func recovered(
        store: WorkoutStore, adapter: MockSensorAdapter, strap: SensorIdentity, logger: Logger
    ) async throws -> (WorkoutRecorder, ActiveSessionRecord) {
        let record = try #require(try await store.activeSessions().first)
        let recorder = try await WorkoutRecorder(
            WorkoutRecorder.Setup(
                configuration: configuration, profile: profile, sensors: [strap], store: store, recovering: record),
            adapter: adapter, clock: adapter.timeline, registry: WorkoutSessionRegistry(), logger: logger)
        await recorder.attach()
        return (recorder, record)
    }

    /// What a collector that keeps everything computes from the samples stored for `id`.
    func referenceWorkout(_ id: UUID, store: WorkoutStore, start: Date, end: Date) async throws -> Workout {
        var collector = WorkoutCollector(configuration: configuration, profile: profile)
        try collector.begin(at: start)
        var samples: [QuantitySample] = []
        for type in QuantityType.allCases { samples += try await store.samples(type: type, workout: id) }
        _ = try collector.add(samples.sorted { $0.start < $1.start })
        try collector.end(at: end)
        return try collector.finish()
    }

    @Test(
        "with a store the DFA α1 series waits in the store, not in the builder; the finished workout has all of it, as a collector over the stored beats computes it"
    )
    func alpha1SeriesInTheStore() async throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (adapter, strap, logger) = try simulatedStrap(seed: 3)
        let clock = adapter.timeline
        let recorder = try await WorkoutRecorder(
            WorkoutRecorder.Setup(configuration: configuration, profile: profile, sensors: [strap], store: store),
            adapter: adapter, clock: clock, registry: WorkoutSessionRegistry(), logger: logger)
        await recorder.attach()
        try await adapter.connect(strap)
        let start = clock.now()
        _ = try await recorder.begin(at: start)
        for _ in 0..<300 { await adapter.step() }
        await recorder.waitUntilHandlersCaughtUp()
        let live = try #require(await recorder.builder.latestAlpha1, "α1 windows are computed live")
        #expect(await recorder.builder.snapshot.alpha1Windows.isEmpty, "the builder keeps no series")
        let stored = try await store.alpha1Windows(of: recorder.id)
        #expect(stored.count > 20)
        #expect(stored.last == live)

        let workout = try await recorder.finish(
            at: clock.now(), settle: .drain(deliver: { stop in await adapter.finish(at: stop) }))
        await recorder.streamsEnded()
        let series = try #require(workout.dfaAlpha1)
        #expect(Array(series.prefix(stored.count)) == stored)
        #expect(try await store.alpha1Windows(of: recorder.id).isEmpty, "the summary holds them now")
        #expect(try await store.workout(recorder.id).summary?.dfaAlpha1 == series)

        // The same beats through a collector that keeps its series: the same windows and thresholds.
        let reference = try await referenceWorkout(recorder.id, store: store, start: start, end: workout.end)
        #expect(series == reference.dfaAlpha1)
        #expect(workout.hrvThresholds == reference.hrvThresholds)
    }

    @Test(
        "an event the store refuses (a full disk) is kept, in order, and stored at the finish once there is room: recovery and rebuilds read it there",
        .enabled(if: SmallDisk.isAvailable, "mounting a tmpfs needs root")
    )
    func eventRefusedThenStored() async throws {
        let disk = try SmallDisk(size: 4 << 20)
        defer { disk.remove() }
        let store = try WorkoutStore(path: disk.path + "/store.sqlite")
        let (adapter, strap, logger) = try simulatedStrap(seed: 6)
        let clock = adapter.timeline
        let recorder = try await begunRecorder(store: store, adapter: adapter, strap: strap, logger: logger)
        for _ in 0..<20 { await adapter.step() }
        await recorder.waitUntilHandlersCaughtUp()
        try disk.fill()
        let lapEnd = clock.now()
        try await recorder.lap(at: lapEnd)
        await recorder.waitUntilHandlersCaughtUp()
        #expect(try await store.events(of: recorder.id).isEmpty, "the full disk refused the lap")
        for _ in 0..<5 { await adapter.step() }
        let end = clock.now()
        await #expect(throws: StoreError.self, "not saved while the disk is full") {
            try await recorder.finish(at: end, settle: .drain(deliver: { stop in await adapter.finish(at: stop) }))
        }
        disk.free()
        let workout = try await recorder.finish(at: end)
        await recorder.streamsEnded()
        let stored = try await store.events(of: recorder.id).filter { $0.kind == .lap }.map(\.dateInterval.end)
        #expect(stored == [lapEnd])
        #expect(workout.events.filter { $0.kind == .lap }.map(\.dateInterval.end) == [lapEnd])
    }

    @Test("a lap after a crash starts where the last stored lap ended: it is not refused as overlapping them")
    func lapAfterRecovery() async throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (adapter, strap, logger) = try simulatedStrap(seed: 5)
        let clock = adapter.timeline
        let first = try await begunRecorder(store: store, adapter: adapter, strap: strap, logger: logger)
        for _ in 0..<60 { await adapter.step() }
        let firstLapEnd = clock.now()
        try await first.lap(at: firstLapEnd)
        try await crash(first)

        let (second, record) = try await recovered(store: store, adapter: adapter, strap: strap, logger: logger)
        for _ in 0..<60 { await adapter.step() }
        let secondLapEnd = clock.now()
        try await second.lap(at: secondLapEnd)
        let workout = try await second.finish(
            at: clock.now(), settle: .drain(deliver: { stop in await adapter.finish(at: stop) }))
        await second.streamsEnded()
        let laps = workout.events.filter { $0.kind == .lap }.map(\.dateInterval)
        #expect(
            laps == [
                DateInterval(start: record.start, end: firstLapEnd),
                DateInterval(start: firstLapEnd, end: secondLapEnd),
            ])
    }

    @Test(
        "a workout recovered after a crash finishes with the α1 series and figures a collector over all its stored samples computes"
    )
    func alpha1SeriesAfterRecovery() async throws {
        let (store, directory) = try temporaryStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (adapter, strap, logger) = try simulatedStrap(seed: 4)
        let clock = adapter.timeline
        let first = try await begunRecorder(store: store, adapter: adapter, strap: strap, logger: logger)
        for _ in 0..<200 { await adapter.step() }
        try await crash(first)
        let beforeCrash = try await store.alpha1Windows(of: first.id)
        #expect(beforeCrash.count > 10)
        // A window stored from beats the crash lost (their batch never reached the store).
        var orphan = try #require(beforeCrash.last)
        orphan.end += 2.5
        orphan.alpha1 = 0.123
        try await store.upsert(alpha1Windows: [orphan], workout: first.id)

        let (second, record) = try await recovered(store: store, adapter: adapter, strap: strap, logger: logger)
        #expect(await second.builder.snapshot.alpha1Windows.isEmpty, "the recovered series went to the store")
        for _ in 0..<120 { await adapter.step() }
        let workout = try await second.finish(
            at: clock.now(), settle: .drain(deliver: { stop in await adapter.finish(at: stop) }))
        await second.streamsEnded()
        #expect(workout.id == first.id)

        let reference = try await referenceWorkout(workout.id, store: store, start: record.start, end: workout.end)
        let series = try #require(workout.dfaAlpha1)
        #expect(series.count > beforeCrash.count)
        #expect(series == reference.dfaAlpha1)
        #expect(!series.contains(orphan))
        #expect(workout.hrvThresholds == reference.hrvThresholds)
        #expect(workout.statistics[.heartRate]?.sampleCount == reference.statistics[.heartRate]?.sampleCount)
        #expect(try await store.workout(workout.id).summary?.dfaAlpha1 == series)
    }

    @Test("a plan the zones in force cannot judge is refused before anything is recorded")
    func planNeedsZones() async throws {
        let clock = ManualWallClock()
        let logger = Logger(label: "test")
        let adapter = MockSensorAdapter(scenario: .default, clock: clock, logger: logger)
        let plan = try PlanFormat.decode(
            Data(
                #"{"version":1,"activity":"running","custom":{"blocks":[{"steps":[{"goal":{"time":"1 min"},"alert":{"heartRateZone":2}}]}]}}"#
                    .utf8),
            context: PlanContext(
                zones: [.heartRate: try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [120, 140])]))
        await #expect(throws: PlanError.self) {
            _ = try await WorkoutRecorder(
                WorkoutRecorder.Setup(
                    configuration: WorkoutConfiguration(activityType: .running, location: .indoor),
                    profile: UserProfile(id: "no-zones"), sensors: adapter.sensors, plan: plan),
                adapter: adapter, clock: clock, registry: WorkoutSessionRegistry(), logger: logger)
        }
    }
}
