import Foundation
import Samples
import Sensors
import Testing
import WorkoutStore
import Workouts

@testable import Bridge

@Suite("GET /v1/workouts/{id}/samples pages: every sample once, in order, whatever shares a start")
struct SamplePagesTests {
    @Test("three straps at the same instants, pages of 1 to 7: the pages together are the samples, once each")
    func pagesCoverEverySampleOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try WorkoutStore(path: directory.appendingPathComponent("store.sqlite").path)
        let workout = UUID()
        let start = Date(timeIntervalSince1970: 1_800_000_000.123_456)
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: workout, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                start: start, state: .running))
        let straps = (1...3).map { SampleSource(adapter: "hci0", address: "C0:FF:EE:00:00:0\($0)", name: nil) }
        var samples: [QuantitySample] = []
        for second in 0..<6 {
            // Every strap at each instant, and one more a quarter second later from the first.
            for strap in straps {
                samples.append(try beat(at: start.addingTimeInterval(Double(second)), from: strap))
            }
            samples.append(try beat(at: start.addingTimeInterval(Double(second) + 0.25), from: straps[0]))
        }
        #expect(try await store.append(samples, workout: workout) == samples.count)
        let all = try await store.samples(type: .heartRate, workout: workout)
        #expect(all.count == 24)
        for size in 1...7 {
            var pages = SamplePages(type: .heartRate, workout: workout, store: store, size: size)
            var read: [QuantitySample] = []
            while let page = try await pages.next() { read += page }
            #expect(read.count == all.count && Set(read) == Set(all), "pages of \(size): each sample once")
            #expect(zip(read, read.dropFirst()).allSatisfy { $0.start <= $1.start }, "pages of \(size): in order")
        }
    }

    private func beat(at date: Date, from source: SampleSource) throws -> QuantitySample {
        try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 120),
            start: date, end: date, source: source)
    }
}
