import Foundation
import Logging
import Samples
import Sensors
import Testing
import Workouts

@testable import WorkoutStore

/// The streamer's timer on a clock the test moves: a batch is written when the interval has
/// passed on the injected clock, not before, and without any real wait.
@Suite struct SampleStreamerTests {
    let strap = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "Strap")
    let origin = Date(timeIntervalSinceReferenceDate: 800_006_400)

    func heartRates(_ count: Int, from offset: Int = 0) throws -> [QuantitySample] {
        try (offset..<offset + count).map { index in
            let date = origin.addingTimeInterval(Double(index) / 4)
            return try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: 120), start: date, end: date,
                source: strap)
        }
    }

    /// A store in a directory of its own with one running workout.
    func storeWithWorkout() async throws -> (store: WorkoutStore, workout: UUID, directory: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("streamer-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try WorkoutStore(path: directory + "/store.sqlite")
        let workout = UUID()
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: workout, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                start: origin, state: .running))
        return (store, workout, directory)
    }

    @Test func aBatchIsWrittenExactlyWhenTheClockPassesTheInterval() async throws {
        let (store, workout, directory) = try await storeWithWorkout()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualWallClock()
        let streamer = SampleStreamer(
            store: store, workout: workout, interval: .seconds(2), spillDirectory: directory, clock: clock,
            logger: Logger(label: "test"))
        await clock.waitUntilSleeping()
        streamer.submit(try heartRates(8))

        clock.advance(by: 1.999)
        #expect(clock.sleeperCount == 1, "the timer still waits")
        #expect(streamer.health.waiting == 8)
        #expect(try await store.samples(type: .heartRate, workout: workout).isEmpty)

        clock.advance(by: 0.001)
        // Asleep again means the flush is done.
        await clock.waitUntilSleeping()
        #expect(streamer.health.waiting == 0)
        #expect(try await store.samples(type: .heartRate, workout: workout).count == 8)

        // The next interval counts from that flush.
        streamer.submit(try heartRates(4, from: 8))
        clock.advance(by: 1.5)
        #expect(streamer.health.waiting == 4)
        clock.advance(by: 0.5)
        await clock.waitUntilSleeping()
        #expect(streamer.health.waiting == 0)
        #expect(try await store.samples(type: .heartRate, workout: workout).count == 12)

        // finish() stops the timer and waits for it: nothing sleeps on the clock after it.
        streamer.submit(try heartRates(1, from: 12))
        try await streamer.finish()
        #expect(clock.sleeperCount == 0)
        #expect(try await store.samples(type: .heartRate, workout: workout).count == 13)
        clock.advance(by: 60)
        #expect(clock.sleeperCount == 0, "no timer after finish")
    }

    @Test(
        "flushes fall on whole multiples of the interval",
        arguments: [
            (1_000.0, 1.0, 1_001.0), (1_000.25, 1.0, 1_001.0), (1_000.999, 1.0, 1_001.0), (1_001.0, 2.0, 1_002.0),
            (1_002.0, 2.0, 1_004.0), (1_000.1, 0.5, 1_000.5),
        ])
    func nextFlush(now: Double, interval: Double, expected: Double) {
        #expect(
            SampleStreamer.nextFlush(after: Date(timeIntervalSince1970: now), every: interval)
                == Date(timeIntervalSince1970: expected))
    }

    @Test func streamersStartedApartFlushTogetherInOneTransaction() async throws {
        let (store, workout, directory) = try await storeWithWorkout()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let other = UUID()
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: other, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                start: origin, state: .running))
        let clock = ManualWallClock(now: Date(timeIntervalSince1970: 1_000.2))
        let first = SampleStreamer(
            store: store, workout: workout, spillDirectory: directory, clock: clock, logger: Logger(label: "test"))
        await clock.waitUntilSleeping()
        clock.advance(by: 0.5)
        let second = SampleStreamer(
            store: store, workout: other, spillDirectory: directory, clock: clock, logger: Logger(label: "test"))
        await clock.waitUntilSleeping(2)
        first.submit(try heartRates(4))
        second.submit(try heartRates(4, from: 100))
        let before = store.sampleTransactions
        // Both wake at 1,001 s, not 1,001.2 and 1,001.7; the store holds appends so that the
        // first cannot be written before the second arrives.
        store.holdSampleAppends()
        clock.advance(by: 0.3)
        await store.waitUntilSampleAppendsWait(2)
        store.releaseSampleAppends()
        await clock.waitUntilSleeping(2)
        #expect(first.health.waiting == 0 && second.health.waiting == 0)
        #expect(store.sampleTransactions == before + 1)
        #expect(try await store.samples(type: .heartRate, workout: workout).count == 4)
        #expect(try await store.samples(type: .heartRate, workout: other).count == 4)
        try await first.finish()
        try await second.finish()
    }
}
