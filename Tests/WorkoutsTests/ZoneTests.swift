import Foundation
import Samples
import Testing

@testable import Workouts

private let running = WorkoutConfiguration(activityType: .running, location: .indoor)

@Suite("Zones: configuration, preferred zones, time in zone, live updates")
struct ZoneTests {
    @Test("3–9 zones, ascending positive boundaries, units checked")
    func validation() throws {
        #expect(throws: ZoneConfigurationError.tooFewZones(2)) {
            _ = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [120])
        }
        #expect(throws: ZoneConfigurationError.tooManyZones(10)) {
            _ = try ZoneConfiguration(
                quantityType: .heartRate, boundaryValues: Array(stride(from: 100.0, to: 190, by: 10)))
        }
        #expect(throws: ZoneConfigurationError.notAscending(index: 2, value: 130, previous: 140)) {
            _ = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [120, 140, 130])
        }
        #expect(throws: ZoneConfigurationError.notPositive(index: 0, value: -1)) {
            _ = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [-1, 140])
        }
        #expect(throws: ZoneConfigurationError.unsupportedType(.distance)) {
            _ = try ZoneConfiguration(quantityType: .distance, boundaryValues: [1, 2])
        }
        #expect(throws: ZoneConfigurationError.wrongUnit(index: 0, unit: .watt, expected: .countPerMinute)) {
            _ = try ZoneConfiguration(quantityType: .heartRate, boundaries: [Quantity(unit: .watt, value: 100)])
        }
        let power = try ZoneConfiguration(
            quantityType: .cyclingPower,
            boundaries: [Quantity(unit: .watt, value: 150), Quantity(unit: .watt, value: 250)])
        #expect(
            power.zones == [
                WorkoutZone(index: 1, lower: nil, upper: 150), WorkoutZone(index: 2, lower: 150, upper: 250),
                WorkoutZone(index: 3, lower: 250, upper: nil),
            ])
        #expect(power.position(of: 149.9) == 0)
        #expect(power.position(of: 150) == 1, "a boundary value belongs to the zone above")
        #expect(power.position(of: 1000) == 2)
    }

    @Test("preferred zones: heart-rate reserve with a resting rate, else % of max; max from 208 − 0.7 × age")
    func preferred() {
        let reserve = UserProfile(id: "a", restingHeartRate: 50, maximumHeartRate: 190)
        #expect(reserve.preferredZoneConfiguration(for: .heartRate)?.boundaries == [134, 148, 162, 176])
        let percent = UserProfile(id: "b", age: 40)
        #expect(percent.effectiveMaximumHeartRate == 180)
        #expect(percent.preferredZoneConfiguration(for: .heartRate)?.boundaries == [108, 126, 144, 162])
        #expect(UserProfile(id: "c").preferredZoneConfiguration(for: .heartRate) == nil)
        #expect(
            UserProfile(id: "d", functionalThresholdPower: 200).preferredZoneConfiguration(for: .cyclingPower)?
                .boundaries
                == [110, 150, 180, 210, 240, 300])
    }

    @Test("custom zones override preferred ones for this workout; nil restores them")
    func customZones() throws {
        var builder = WorkoutCollector(configuration: running, profile: UserProfile(id: "a", age: 40))
        let custom = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [100, 150])
        try builder.setCustomZoneConfiguration(custom, for: .heartRate)
        #expect(builder.zoneConfiguration(for: .heartRate) == custom)
        try builder.setCustomZoneConfiguration(nil, for: .heartRate)
        #expect(builder.zoneConfiguration(for: .heartRate)?.boundaries == [108, 126, 144, 162])
    }

    @Test("zone updates only when the zone changes, with current and previous")
    func updatesOnChange() throws {
        var builder = WorkoutCollector(configuration: running)
        try builder.setCustomZoneConfiguration(
            try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [120, 140]), for: .heartRate)
        try builder.begin(at: t0)
        var updates: [ZoneUpdate] = []
        for (second, value) in [100.0, 105, 130, 131, 139, 100, 101].enumerated() {
            for case .zone(let update) in try builder.add([sample(.heartRate, value, at: Double(second))]) {
                updates.append(update)
            }
        }
        #expect(updates.map(\.current.zone.index) == [1, 2, 1])
        #expect(updates.map { $0.previous?.zone.index } == [nil, 1, 2])
        #expect(updates.map(\.lastSampleProcessedDate) == [date(0), date(2), date(5)])
        #expect(updates[1].previous?.duration == 2, "zone 1 held 0–2 s")
        #expect(updates[2].previous?.duration == 3, "zone 2 held 2–5 s")
    }

    @Test("samples dated after the end (a fast clock ran ahead of the stop) add no time in zone")
    func samplesAfterTheEnd() throws {
        var builder = WorkoutCollector(configuration: running)
        try builder.setCustomZoneConfiguration(
            try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [110, 130, 150, 170]), for: .heartRate)
        try builder.begin(at: t0)
        for second in 0..<20 { _ = try builder.add([sample(.heartRate, 140, at: Double(second))]) }
        try builder.end(at: date(10))
        let group = try #require(builder.zoneGroups.first { $0.configuration.quantityType == .heartRate })
        #expect(group.totalDuration == 10, "only [0, 10) is covered")
        #expect(group.durations.first { $0.zone.index == 3 }?.duration == 10)
    }

    @Test(
        "time in zone equals a brute-force attribution, sums to covered time, with random and backdated pauses",
        arguments: 1...25)
    func timeInZoneProperty(_ seed: Int) throws {
        var generator = TestGenerator(state: UInt64(seed) &* 7919)
        let boundaries = [110.0, 130, 150, 170]
        var builder = WorkoutCollector(configuration: running)
        try builder.setCustomZoneConfiguration(
            try ZoneConfiguration(quantityType: .heartRate, boundaryValues: boundaries), for: .heartRate)
        try builder.begin(at: t0)
        var series: [(Double, Double)] = []
        var time = 0.0
        var pauseMarks: [(Double, Bool)] = []
        for _ in 0..<Int.random(in: 5...300, using: &generator) {
            time += [0.5, 1, 1, 1, 2, 7, 12].randomElement(using: &generator)!
            let value = Double.random(in: 90...190, using: &generator).rounded()
            series.append((time, value))
            _ = try builder.add([sample(.heartRate, value, at: time)])
            // Sometimes a pause or resume, sometimes dated in the past.
            if Int.random(in: 0..<15, using: &generator) == 0 {
                let when = max(0, time - Double.random(in: 0...30, using: &generator))
                let isPause = Bool.random(using: &generator)
                if !(try builder.add(events: [WorkoutEvent(kind: isPause ? .pause : .resume, date: date(when))]))
                    .isEmpty
                {
                    pauseMarks.append((when, isPause))
                }
            }
            // Other sources never count for zones.
            _ = try builder.add([sample(.heartRate, 60, at: time, source: strapB)])
        }
        let end = time + Double.random(in: 0...10, using: &generator)
        try builder.end(at: date(end))

        // Brute force: paused intervals from the accepted marks, sorted by date.
        var paused: [(Double, Double)] = []
        var openSince: Double?
        for (when, isPause) in pauseMarks.sorted(by: { $0.0 < $1.0 }) {
            if isPause, openSince == nil {
                openSince = when
            } else if !isPause, let start = openSince {
                paused.append((start, when))
                openSince = nil
            }
        }
        if let openSince { paused.append((openSince, .infinity)) }
        func active(_ a: Double, _ b: Double) -> Double {
            guard b > a else { return 0 }
            return (b - a) - paused.reduce(0) { $0 + max(0, min($1.1, b) - max($1.0, a)) }
        }
        var expected = Array(repeating: 0.0, count: boundaries.count + 1)
        for (index, (start, value)) in series.enumerated() {
            let next = index + 1 < series.count ? series[index + 1].0 : end
            let position = boundaries.firstIndex { value < $0 } ?? boundaries.count
            expected[position] += active(start, min(next, start + 5, end))
        }
        let group = try #require(builder.zoneGroups.first)
        for (duration, want) in zip(group.durations, expected) {
            #expect(
                abs(duration.duration - want) < 1e-6, "zone \(duration.zone.index): \(duration.duration) vs \(want)")
        }
        #expect(abs(group.totalDuration - builder.coveredTime(for: .heartRate)) < 1e-6)
        #expect(group.totalDuration <= builder.elapsedTime(at: date(end)) + 1e-6)
    }

    @Test(
        "a short replay horizon gives the same zones, activities and energy as an unbounded one, in bounded memory",
        arguments: 1...8)
    func replayHorizon(_ seed: Int) throws {
        var generator = TestGenerator(state: UInt64(seed) &* 104_729)
        let profile = UserProfile(id: "p", age: 40, sex: .female, weightKilograms: 62, restingHeartRate: 50)
        let zones = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [110, 130, 150, 170])
        var bounded = WorkoutCollector(configuration: running, profile: profile)
        bounded.zoneReplayHorizon = 60
        var unbounded = WorkoutCollector(configuration: running, profile: profile)
        unbounded.zoneReplayHorizon = .infinity
        for index in [0, 1] {
            var builder = index == 0 ? bounded : unbounded
            try builder.setCustomZoneConfiguration(zones, for: .heartRate)
            try builder.begin(at: t0)
            _ = try builder.beginActivity(running, at: t0)
            if index == 0 { bounded = builder } else { unbounded = builder }
        }
        var time = 0.0
        var largestKept = 0
        for _ in 0..<3000 {
            time += [0.25, 0.5, 1, 1, 2, 7].randomElement(using: &generator)!
            var samples = [sample(.heartRate, Double.random(in: 90...190, using: &generator).rounded(), at: time)]
            // Late samples, and changes dated up to 30 s back: inside the 60 s horizon.
            if Int.random(in: 0..<20, using: &generator) == 0 {
                samples.append(sample(.heartRate, 150, at: max(0, time - Double.random(in: 0...30, using: &generator))))
            }
            var events: [WorkoutEvent] = []
            if Int.random(in: 0..<25, using: &generator) == 0 {
                let when = max(0, time - Double.random(in: 0...30, using: &generator))
                events.append(WorkoutEvent(kind: Bool.random(using: &generator) ? .pause : .resume, date: date(when)))
            }
            let splitsActivity = Int.random(in: 0..<400, using: &generator) == 0
            for index in [0, 1] {
                var builder = index == 0 ? bounded : unbounded
                _ = try builder.add(samples)
                _ = try builder.add(events: events)
                if splitsActivity {
                    _ = try builder.endActivity(at: date(time))
                    _ = try builder.beginActivity(running, at: date(time))
                }
                if index == 0 { bounded = builder } else { unbounded = builder }
            }
            largestKept = max(largestKept, bounded.keptZoneSampleCount(for: .heartRate))
        }
        try bounded.end(at: date(time + 3))
        try unbounded.end(at: date(time + 3))
        #expect(unbounded.keptZoneSampleCount(for: .heartRate) > 3000)
        #expect(largestKept <= 60 * 4 + ZoneSeries.settleBatch + 1, "kept \(largestKept)")
        func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-6 * max(1, abs(b)) }
        let left = try bounded.finish()
        let right = try unbounded.finish()
        for (a, b) in zip(left.zoneGroups[0].durations, right.zoneGroups[0].durations) {
            #expect(close(a.duration, b.duration), "zone \(a.zone.index): \(a.duration) vs \(b.duration)")
        }
        #expect(left.activities.count == right.activities.count)
        for (a, b) in zip(left.activities, right.activities) {
            for (x, y) in zip(a.zoneGroups[0].durations, b.zoneGroups[0].durations) {
                #expect(close(x.duration, y.duration), "activity zone \(x.zone.index): \(x.duration) vs \(y.duration)")
            }
        }
        let energy = try #require(right.activeEnergy.kilojoules)
        #expect(energy > 0)
        #expect(close(try #require(left.activeEnergy.kilojoules), energy))
        #expect(close(bounded.coveredTime(for: .heartRate), unbounded.coveredTime(for: .heartRate)))
        #expect(left.statistics[.heartRate]?.sampleCount == right.statistics[.heartRate]?.sampleCount)
    }

    @Test(
        "late samples are attributed where they fall, without a replay: zones, activities and energy equal those of the same samples in order, with pauses",
        arguments: 1...10)
    func lateSamples(_ seed: Int) throws {
        var generator = TestGenerator(state: UInt64(seed) &* 15_485_863)
        let profile = UserProfile(id: "p", age: 35, sex: .male, weightKilograms: 80, restingHeartRate: 55)
        let zones = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [110, 130, 150, 170])
        var arrivals: [(Double, Double)] = []
        var time = 0.0
        for _ in 0..<800 {
            time += [0.25, 0.5, 1, 1, 2, 7].randomElement(using: &generator)!
            let value = Double.random(in: 90...190, using: &generator).rounded()
            if Int.random(in: 0..<8, using: &generator) == 0 {
                arrivals.append((max(0.01, time - Double.random(in: 0...40, using: &generator)), value))
            } else {
                arrivals.append((time, value))
            }
        }
        func collected(_ samples: [(Double, Double)]) throws -> Workout {
            var builder = WorkoutCollector(configuration: running, profile: profile)
            try builder.setCustomZoneConfiguration(zones, for: .heartRate)
            try builder.begin(at: t0)
            _ = try builder.beginActivity(running, at: t0)
            _ = try builder.add(events: [WorkoutEvent(kind: .pause, date: date(100))])
            _ = try builder.add(events: [WorkoutEvent(kind: .resume, date: date(130))])
            for (index, (at, value)) in samples.enumerated() {
                _ = try builder.add([sample(.heartRate, value, at: at)])
                if index == samples.count / 2 {
                    _ = try builder.endActivity(at: date(at))
                    _ = try builder.beginActivity(running, at: date(at))
                }
            }
            try builder.end(at: date(time + 2))
            return try builder.finish()
        }
        let late = try collected(arrivals)
        let inOrder = try collected(arrivals.sorted { $0.0 < $1.0 })
        func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-6 * max(1, abs(b)) }
        for (a, b) in zip(late.zoneGroups[0].durations, inOrder.zoneGroups[0].durations) {
            #expect(close(a.duration, b.duration), "zone \(a.zone.index): \(a.duration) vs \(b.duration)")
        }
        #expect(late.zoneGroups[0].totalDuration > 100)
        #expect(close(try #require(late.activeEnergy.kilojoules), try #require(inOrder.activeEnergy.kilojoules)))
    }

    @Test("a sample older than the kept ones counts in the statistics, not in the zones")
    func sampleBeforeHorizon() throws {
        var builder = WorkoutCollector(configuration: running)
        builder.zoneReplayHorizon = 10
        try builder.setCustomZoneConfiguration(
            try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [110, 130, 150, 170]), for: .heartRate)
        try builder.begin(at: t0)
        let count = ZoneSeries.settleBatch + 100
        for second in 0..<count { _ = try builder.add([sample(.heartRate, 100, at: Double(second))]) }
        #expect(builder.keptZoneSampleCount(for: .heartRate) < count)
        let covered = builder.coveredTime(for: .heartRate)
        #expect(covered == Double(count - 1))
        _ = try builder.add([sample(.heartRate, 180, at: 5.5)])
        #expect(builder.coveredTime(for: .heartRate) == covered)
        #expect(builder.statistics(for: .heartRate)?.sampleCount == count + 1)
        #expect(builder.statistics(for: .heartRate)?.maximum == 180)
        try builder.end(at: date(Double(count)))
        #expect(builder.zoneGroups[0].durations.map(\.duration) == [Double(count), 0, 0, 0, 0])
    }

    @Test("per-activity time in zone splits at the activity boundary")
    func perActivity() throws {
        var builder = WorkoutCollector(configuration: running)
        try builder.setCustomZoneConfiguration(
            try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [120, 140]), for: .heartRate)
        try builder.begin(at: t0)
        _ = try builder.beginActivity(running, at: t0)
        for second in 0..<10 { _ = try builder.add([sample(.heartRate, 100, at: Double(second))]) }
        _ = try builder.endActivity(at: date(10))
        _ = try builder.beginActivity(running, at: date(10))
        for second in 10..<20 { _ = try builder.add([sample(.heartRate, 150, at: Double(second))]) }
        try builder.end(at: date(20))
        let workout = try builder.finish()
        #expect(workout.zoneGroups[0].durations.map(\.duration) == [10, 0, 10])
        #expect(workout.activities[0].zoneGroups[0].durations.map(\.duration) == [10, 0, 0])
        #expect(workout.activities[1].zoneGroups[0].durations.map(\.duration) == [0, 0, 10])
        #expect(workout.activities.map(\.elapsedTime) == [10, 10])
    }
}
