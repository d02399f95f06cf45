import Foundation
import Samples
import Sensors
import Testing
import WorkoutStore
import Workouts

/// What a store migrated from Foundation's epoch must read back, on either backend: the seeded
/// workout (start `start`, one activity 0–60 s, an event at 30 s, the journal, a plan scheduled at
/// 3600 s, one heart-rate sample at 0 s and its hourly rollup in the hour from `hour`) at the same
/// dates within `tolerance`, and the same sample sent again not stored twice.
func expectMigratedDates(
    _ store: WorkoutStore, workout: UUID, start: Date, hour: Date, tolerance: Double
) async throws {
    func near(_ dates: [Date?], _ expected: [Double]) -> Bool {
        dates.count == expected.count
            && zip(dates, expected).allSatisfy { date, offset in
                date.map { abs($0.timeIntervalSince(start) - offset) <= tolerance } ?? false
            }
    }
    await #expect(near([try store.workout(workout).start], [0]))
    await #expect(near(try store.activeSessions().map(\.start), [0]))
    let intervals = try await store.activityIntervals(of: workout)
    #expect(near(intervals.map(\.1) + intervals.map(\.2), [0, 60]))
    await #expect(near(try store.events(of: workout).map(\.dateInterval.start), [30]))
    await #expect(near(try store.scheduledPlans(around: start).map(\.date), [3600]))
    await #expect(near(try store.samples(type: .heartRate).map(\.start), [0]))
    let buckets = try await store.statisticsCollection(
        type: .heartRate, from: hour, to: hour.addingTimeInterval(3600), anchor: hour, interval: .hour)
    #expect(buckets.map(\.count) == [1])
    // The same sample again, as a gateway's backfill would send it: not stored twice.
    let again = try QuantitySample(
        type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 120), start: start,
        end: start, source: SampleSource(adapter: "mock", address: "X", name: nil))
    #expect(try await store.append([again], workout: workout) == 0)
    #expect(try await store.statistics(type: .heartRate).sampleCount == 1)
}
