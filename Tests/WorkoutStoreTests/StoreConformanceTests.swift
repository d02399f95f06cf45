import Foundation
import GATT
import Samples
import Sensors
import Testing
import Workouts

@testable import WorkoutStore

private let sourceA = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "A")
private let sourceB = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:02", name: "B")
private let origin = Date(timeIntervalSinceReferenceDate: 800_006_400)  // hour-aligned

private struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private func sample(_ type: QuantityType, _ value: Double, _ seconds: Double, _ source: SampleSource) -> QuantitySample
{
    try! QuantitySample(
        type: type, quantity: Quantity(unit: type.canonicalUnit, value: value),
        start: origin.addingTimeInterval(seconds),
        end: origin.addingTimeInterval(seconds + (type.aggregationStyle == .cumulative ? 10 : 0)), source: source)
}

/// Begins `count` running workouts at `origin`; their ids.
private func beginRunningWorkouts(_ count: Int, in store: WorkoutStore) async throws -> [UUID] {
    var workouts: [UUID] = []
    for _ in 0..<count {
        let workout = UUID()
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: workout, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                start: origin, state: .running))
        workouts.append(workout)
    }
    return workouts
}

/// The store's conformance suite: every test runs on each backend (SQLite in a temporary file,
/// PostgreSQL on a server this harness starts), and both must answer alike.
@Suite("Store conformance (SQLite and PostgreSQL)")
struct StoreConformanceTests {
    private let plan = Data(#"{"version": 1, "activity": "running", "singleGoal": {"time": "30 min"}}"#.utf8)

    @Test("queries equal brute force over random samples", arguments: StoreKind.allCases, [1, 2, 3])
    func queriesProperty(_ kind: StoreKind, _ seed: Int) async throws {
        try await kind.withStore { store in
            var generator = Generator(state: UInt64(seed))
            var all: [QuantitySample] = []
            for _ in 0..<Int.random(in: 200...1500, using: &generator) {
                let type: QuantityType = Bool.random(using: &generator) ? .heartRate : .activeEnergyBurned
                let seconds = Double(Int.random(in: 0..<(3 * 86_400), using: &generator))
                all.append(
                    sample(
                        type, Double(Int.random(in: 40...200, using: &generator)), seconds,
                        Bool.random(using: &generator) ? sourceA : sourceB))
            }
            var index = 0
            while index < all.count {
                let end = min(index + Int.random(in: 1...300, using: &generator), all.count)
                try await store.append(Array(all[index..<end]), workout: nil)
                index = end
            }
            let from = origin.addingTimeInterval(Double(Int.random(in: 0..<86_400, using: &generator)))
            let to = from.addingTimeInterval(Double(Int.random(in: 3600...(2 * 86_400), using: &generator)))
            for type in [QuantityType.heartRate, .activeEnergyBurned] {
                let expected = all.filter { $0.type == type && $0.start >= from && $0.start < to }.sorted {
                    $0.start < $1.start
                }
                let fetched = try await store.samples(type: type, from: from, to: to)
                #expect(fetched.count == expected.count)
                #expect(fetched.map(\.start) == expected.map(\.start))
                await #expect(
                    try store.samples(type: type, from: from, to: to, limit: 5, ascending: false).map(\.start)
                        == Array(expected.map(\.start).reversed().prefix(5)))
                await #expect(
                    try store.samples(type: type, from: from, to: to, source: sourceA).count
                        == expected.filter { $0.source == sourceA }.count)
                let statistics = try await store.statistics(type: type, from: from, to: to, separateBySource: true)
                #expect(statistics.sampleCount == expected.count)
                let values = expected.map(\.canonicalValue)
                if type.aggregationStyle == .cumulative {
                    #expect(abs((statistics.sum ?? 0) - values.reduce(0, +)) < 1e-6)
                } else if !values.isEmpty {
                    #expect(statistics.minimum == values.min())
                    #expect(statistics.maximum == values.max())
                    #expect(abs((statistics.average ?? 0) - values.reduce(0, +) / Double(values.count)) < 1e-9)
                }
                #expect(
                    statistics.bySource[sourceB]?.sampleCount ?? 0 == expected.filter { $0.source == sourceB }.count)
                // Buckets: daily through the rollups (hour-aligned), minutes through the samples.
                for interval in [StatisticsInterval.hour, .day] {
                    let buckets = try await store.statisticsCollection(
                        type: type, from: origin, to: origin.addingTimeInterval(3 * 86_400), anchor: origin,
                        interval: interval)
                    var counts: [Int: Int] = [:]
                    var sums: [Int: Double] = [:]
                    for sample in all where sample.type == type {
                        let bucket = Int(sample.start.timeIntervalSince(origin) / interval.seconds)
                        counts[bucket, default: 0] += 1
                        sums[bucket, default: 0] += sample.canonicalValue
                    }
                    #expect(buckets.count == counts.count)
                    for bucket in buckets {
                        let key = Int(bucket.start.timeIntervalSince(origin) / interval.seconds)
                        #expect(bucket.count == counts[key])
                        let total = bucket.sum ?? (bucket.average ?? 0) * Double(bucket.count)
                        #expect(abs(total - (sums[key] ?? 0)) < 1e-6)
                    }
                }
                let minutes = try await store.statisticsCollection(
                    type: type, from: from, to: from.addingTimeInterval(3600), anchor: from, interval: .minute)
                #expect(
                    minutes.map(\.count).reduce(0, +)
                        == all.filter {
                            $0.type == type && $0.start >= from && $0.start < from.addingTimeInterval(3600)
                        }
                        .count)
            }
        }
    }

    @Test(
        "anchored changes: additions, then deletions with the workout, never the same change twice",
        arguments: StoreKind.allCases)
    func anchoredChanges(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let workout = UUID()
            try await store.beginWorkout(
                ActiveSessionRecord(
                    workoutID: workout, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                    start: origin, state: .running))
            try await store.append((0..<10).map { sample(.heartRate, 100, Double($0), sourceA) }, workout: workout)
            try await store.append((0..<5).map { sample(.heartRate, 90, Double(100 + $0), sourceB) }, workout: nil)
            for limit in [0, -1] {
                let none = try await store.changes(type: .heartRate, since: nil, limit: limit)
                #expect(none.added.isEmpty && none.deleted.isEmpty && none.anchor == 0, "limit \(limit)")
            }
            let first = try await store.changes(type: .heartRate, since: nil, limit: 12)
            #expect(first.added.count == 12)
            let second = try await store.changes(type: .heartRate, since: first.anchor)
            #expect(second.added.count == 3)
            #expect(second.deleted.isEmpty)
            try await store.deleteWorkout(workout)
            // Deletions are bounded by the limit too: pages of 4 name the 10 once each.
            var paged: [Int64] = []
            var anchor = second.anchor
            for _ in 0..<4 {
                let page = try await store.changes(type: .heartRate, since: anchor, limit: 4)
                #expect(page.added.isEmpty && page.deleted.count <= 4)
                anchor = page.anchor
                paged += page.deleted
                if page.deleted.isEmpty { break }
            }
            #expect(paged.count == 10 && Set(paged) == Set(first.added.prefix(10).map(\.id)), "\(paged)")
            let third = try await store.changes(type: .heartRate, since: second.anchor)
            #expect(third.added.isEmpty)
            #expect(third.deleted.count == 10)
            #expect(third.anchor == anchor)
            #expect(try await store.changes(type: .heartRate, since: third.anchor).deleted.isEmpty)
            try await store.append([sample(.heartRate, 80, 500, sourceA)], workout: nil)
            let fourth = try await store.changes(type: .heartRate, since: third.anchor)
            #expect(fourth.added.map(\.sample.canonicalValue) == [80])
            #expect(try await store.samples(type: .heartRate).count == 6)
            #expect(try await store.statistics(type: .heartRate).sampleCount == 6)
            let hours = try await store.statisticsCollection(
                type: .heartRate, from: origin, to: origin.addingTimeInterval(3600), anchor: origin, interval: .hour)
            #expect(hours.first?.count == 6, "rollups follow deletions")
            await #expect(throws: StoreError.unknownWorkout(workout)) { try await store.deleteWorkout(workout) }
        }
    }

    @Test("schedule: at most 15 upcoming entries; past or completed ones do not count", arguments: StoreKind.allCases)
    func limit(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.schedule(name: "past", plan: plan, at: origin.addingTimeInterval(-86_400), now: origin)
            for day in 1...15 {
                _ = try await store.schedule(
                    name: "day \(day)", plan: plan, at: origin.addingTimeInterval(Double(day) * 3600), now: origin)
            }
            await #expect(throws: StoreError.scheduleFull(15)) {
                try await store.schedule(
                    name: "16th", plan: plan, at: origin.addingTimeInterval(20 * 3600), now: origin)
            }
            // The entry nearest the workout is the one it completes; that frees a place.
            let done = try await store.completeScheduledPlan(
                plan: plan, workout: UUID(), at: origin.addingTimeInterval(3000))
            #expect(done?.name == "day 1")
            _ = try await store.schedule(
                name: "16th", plan: plan, at: origin.addingTimeInterval(20 * 3600), now: origin)
            #expect(try await store.scheduledPlans(around: origin).count == 17)
        }
    }

    @Test("schedule: entries dated earlier today count toward the 15", arguments: StoreKind.allCases)
    func earlierTodayCounts(_ kind: StoreKind) async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        #expect(calendar.startOfDay(for: origin) < origin.addingTimeInterval(-15 * 60), "origin is not near midnight")
        try await kind.withStore { store in
            for minute in 1...15 {
                _ = try await store.schedule(
                    name: "earlier \(minute)", plan: plan, at: origin.addingTimeInterval(Double(-minute) * 60),
                    now: origin, calendar: calendar)
            }
            await #expect(throws: StoreError.scheduleFull(15)) {
                try await store.schedule(
                    name: "16th", plan: plan, at: origin.addingTimeInterval(3600), now: origin, calendar: calendar)
            }
        }
    }

    @Test(
        "schedule: the list covers 7 days back to 7 days ahead, by date; completion records the workout",
        arguments: StoreKind.allCases)
    func window(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            for day in [-9, -6, 0, 3, 6, 8] {
                _ = try await store.schedule(
                    name: "day \(day)", plan: plan, at: origin.addingTimeInterval(Double(day) * 86_400), now: origin)
            }
            #expect(
                try await store.scheduledPlans(around: origin).map(\.name) == ["day -6", "day 0", "day 3", "day 6"])
            let other = Data(#"{"version": 1, "activity": "cycling", "singleGoal": {"time": "1 h"}}"#.utf8)
            #expect(try await store.completeScheduledPlan(plan: other, workout: UUID(), at: origin) == nil)
            let workout = UUID()
            let done = try #require(try await store.completeScheduledPlan(plan: plan, workout: workout, at: origin))
            #expect(done.name == "day 0")
            let listed = try await store.scheduledPlans(around: origin)
            #expect(listed[1].completedAt == origin && listed[1].workoutID == workout)
            #expect(listed.filter { $0.completedAt != nil }.count == 1)
            // What `plan list` shows: the last 7 days and every later entry; one can be removed.
            #expect(
                try await store.scheduledPlans(since: origin).map(\.name) == [
                    "day -6", "day 0", "day 3", "day 6", "day 8",
                ])
            let last = try #require(try await store.scheduledPlans(since: origin).last)
            #expect(try await store.unschedule(last.id))
            #expect(try await store.unschedule(last.id) == false)
            #expect(try await store.scheduledPlans(since: origin).map(\.name).last == "day 6")
        }
    }

    @Test(
        "a sample is stored once: a repeated batch adds nothing, rollups and statistics unchanged",
        arguments: StoreKind.allCases)
    func idempotentAppend(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let batch = (0..<20).map { sample(.heartRate, Double(100 + $0), Double($0), sourceA) }
            #expect(try await store.append(batch, workout: nil) == 20)
            // A retried batch overlapping the first: only the 5 new ones count.
            let retried =
                Array(batch[10...]) + (20..<25).map { sample(.heartRate, Double(100 + $0), Double($0), sourceA) }
            #expect(try await store.append(retried, workout: nil) == 5)
            #expect(try await store.append(batch, workout: nil) == 0)
            #expect(try await store.samples(type: .heartRate).count == 25)
            let statistics = try await store.statistics(type: .heartRate)
            #expect(statistics.sampleCount == 25 && statistics.maximum == 124)
            let hours = try await store.statisticsCollection(
                type: .heartRate, from: origin, to: origin.addingTimeInterval(3600), anchor: origin, interval: .hour)
            #expect(hours.map(\.count) == [25])
            #expect(hours.first?.minimum == 100 && hours.first?.maximum == 124)
            // Same time, another value or another sensor: a different sample.
            await #expect(
                try store.append(
                    [sample(.heartRate, 99, 0, sourceA), sample(.heartRate, 100, 0, sourceB)], workout: nil) == 2)
        }
    }

    @Test(
        "the recovery journal: begin, update, events, sources, listing; deleting the workout removes it all",
        arguments: StoreKind.allCases)
    func journal(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let id = UUID()
            let profile = UserProfile(id: "ana", name: "Ana")
            var record = ActiveSessionRecord(
                workoutID: id, configuration: WorkoutConfiguration(activityType: .cycling, location: .indoor),
                profile: profile, start: origin, state: .running)
            try await store.beginWorkout(record)
            record.state = .paused
            record.primarySources = ["heartRate": sourceA]
            record.sensors = [sourceB, sourceA]
            try await store.updateJournal(record)
            #expect(try await store.activeSessions() == [record])
            #expect(try await store.activeSessions().first?.sensors == [sourceB, sourceA], "in the session's order")
            try await store.append(
                event: WorkoutEvent(
                    kind: .pause, dateInterval: DateInterval(start: origin.addingTimeInterval(60), duration: 0)),
                workout: id)
            func lap(lasting duration: TimeInterval, _ metadata: [String: String] = [:]) -> WorkoutEvent {
                WorkoutEvent(
                    kind: .lap, dateInterval: DateInterval(start: origin.addingTimeInterval(30), duration: duration),
                    metadata: metadata)
            }
            try await store.append(event: lap(lasting: 0, ["n": "1"]), workout: id)
            // A write retried after its reply was lost adds nothing; another lap does, and so does
            // the same instant with other metadata (two zero-length segments).
            try await store.append(event: lap(lasting: 0, ["n": "1"]), workout: id)
            try await store.append(event: lap(lasting: 5), workout: id)
            try await store.append(event: lap(lasting: 0, ["n": "2"]), workout: id)
            #expect(try await store.events(of: id).map(\.kind) == [.lap, .lap, .lap, .pause])
            #expect(try await store.events(of: id).first?.metadata == ["n": "1"])
            try await store.append((0..<3).map { sample(.heartRate, 120, Double($0), sourceA) }, workout: id)
            try await store.updateSource(sourceA, model: "H10", firmware: "5.0")
            try await store.updateSource(sourceA, model: nil, firmware: "5.1")
            #expect(try await store.sourceDetails(sourceA) == ("H10", "5.1"))
            #expect(try await store.sources() == [sourceA])
            #expect(try await store.samples(type: .heartRate, workout: id).count == 3)
            let listed = try await store.workout(id)
            #expect(listed.isActive && listed.athlete == "ana" && listed.configuration.activityType == .cycling)
            #expect(try await store.workouts(activityType: .running).isEmpty)
            #expect(try await store.workouts(activityType: .cycling).map(\.id) == [id])
            #expect(try await store.unreadableJournalRows().isEmpty)
            let unknown = UUID()
            await #expect(throws: StoreError.unknownWorkout(unknown)) { try await store.workout(unknown) }
            try await store.deleteWorkout(id)
            #expect(try await store.activeSessions().isEmpty)
            #expect(try await store.samples(type: .heartRate).isEmpty)
        }
    }

    @Test(
        "an active workout's DFA α1 windows: stored in order, a window sent again replaces itself, gone after the finish",
        arguments: StoreKind.allCases)
    func alpha1Windows(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let id = UUID()
            let other = UUID()
            for workout in [id, other] {
                try await store.beginWorkout(
                    ActiveSessionRecord(
                        workoutID: workout,
                        configuration: WorkoutConfiguration(activityType: .running, location: .indoor),
                        profile: nil, start: origin, state: .running))
            }
            func window(_ end: Double, beats: Int, power: Double? = nil) -> HRVWindow {
                // Fewer than 100 beats: no α1; one beat out of line: an artefact.
                var raw: [Double] = []
                for beat in 0..<beats {
                    let wave: Double = 37 * sin(Double(beat) / 3 + end)
                    raw.append(800 + wave + (beat == 20 ? 400 : 0))
                }
                var window = HRVAnalysis.window(raw, end: end, power: power)
                window.date = origin.addingTimeInterval(end)
                return window
            }
            let windows = [window(120, beats: 150), window(125, beats: 60), window(130, beats: 160, power: 210.5)]
            #expect(windows[0].alpha1 != nil && windows[1].alpha1 == nil && windows[2].artefacts != nil)
            try await store.upsert(alpha1Windows: [windows[2], windows[0]], workout: id)
            try await store.upsert(alpha1Windows: [window(125, beats: 140)], workout: id)
            try await store.upsert(alpha1Windows: [windows[1]], workout: id)
            try await store.upsert(alpha1Windows: [window(5, beats: 150)], workout: other)
            // Exactly as sent (doubles round-trip), in time order, the latest of a repeated window.
            #expect(try await store.alpha1Windows(of: id) == windows)
            try await store.finish(
                Workout(
                    id: id, configuration: WorkoutConfiguration(activityType: .running, location: .indoor),
                    profile: nil,
                    start: origin, end: origin.addingTimeInterval(140), elapsedTime: 140, events: [], activities: [],
                    statistics: [:], zoneGroups: [],
                    heartRateVariability: HeartRateVariability(
                        rmssd: nil, sdnn: nil, acceptedIntervals: 0, rejectedIntervals: 0),
                    activeEnergy: ActiveEnergy(kilojoules: nil, source: .unavailable), sources: [], metadata: [:],
                    dfaAlpha1: windows))
            #expect(try await store.alpha1Windows(of: id).isEmpty)
            #expect(try await store.workout(id).summary?.dfaAlpha1 == windows)
            #expect(try await store.alpha1Windows(of: other).count == 1)
            try await store.deleteWorkout(other)
            #expect(try await store.alpha1Windows(of: other).isEmpty)
        }
    }

    @Test(
        "a shared write that repeats stored samples and itself: each new sample counted once, for its own workout, in its own hour",
        arguments: StoreKind.allCases)
    func partlyRepeatedBatches(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let workouts = try await beginRunningWorkouts(2, in: store)
            // 400 a workout, across two hours (each strap its own values, so a repeat is exact).
            func series(_ source: SampleSource, _ base: Double) -> [QuantitySample] {
                (0..<400).map { sample(.heartRate, base + Double($0 % 50), 3_000 + Double($0) * 2, source) }
            }
            let first = series(sourceA, 100)
            let second = series(sourceB, 60)
            // Every third stored before, in a write of its own.
            let storedBefore = [
                SampleBatch(
                    workout: workouts[0], samples: first.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)),
                SampleBatch(
                    workout: workouts[1], samples: second.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)),
            ]
            #expect(try await store.backend.append(batches: storedBefore) == [134, 134])
            // All of them, the first workout's with ten of its samples twice: 266 new each, in
            // statements that store all, some and none of their rows.
            let all = [
                SampleBatch(workout: workouts[0], samples: first + first.prefix(10)),
                SampleBatch(workout: workouts[1], samples: second),
            ]
            #expect(try await store.backend.append(batches: all) == [266, 266])
            #expect(try await store.backend.append(batches: all) == [0, 0])
            for (workout, expected) in zip(workouts, [first, second]) {
                #expect(try await store.samples(type: .heartRate, workout: workout).count == expected.count)
            }
            // The hourly rollups took each sample once: the hour buckets equal the samples'.
            let hours = try await store.statisticsCollection(
                type: .heartRate, from: origin, to: origin.addingTimeInterval(2 * 3600), anchor: origin,
                interval: .hour)
            let everything = first + second
            for bucket in hours {
                let inHour = everything.filter { $0.start >= bucket.start && $0.start < bucket.end }
                #expect(bucket.count == inHour.count)
                #expect(
                    abs((bucket.average ?? 0) * Double(bucket.count) - inHour.map(\.canonicalValue).reduce(0, +)) < 1e-6
                )
                #expect(bucket.minimum == inHour.map(\.canonicalValue).min())
                #expect(bucket.maximum == inHour.map(\.canonicalValue).max())
            }
            #expect(hours.map(\.count).reduce(0, +) == 800)
            #expect(hours.count == 2)
            // Deleting one workout recomputes both hours from what is left: the other workout's
            // samples, and its strap's samples outside a workout, in both hours.
            let kept = (0..<400).map { sample(.heartRate, 70, 3_001 + Double($0) * 2, sourceA) }
            #expect(try await store.append(kept, workout: nil) == 400)
            try await store.deleteWorkout(workouts[0])
            let left = try await store.statisticsCollection(
                type: .heartRate, from: origin, to: origin.addingTimeInterval(2 * 3600), anchor: origin,
                interval: .hour)
            #expect(left.count == 2)
            for bucket in left {
                let inHour = (second + kept).filter { $0.start >= bucket.start && $0.start < bucket.end }
                #expect(bucket.count == inHour.count && bucket.count > 0)
                #expect(bucket.minimum == inHour.map(\.canonicalValue).min())
                #expect(bucket.maximum == inHour.map(\.canonicalValue).max())
            }
            #expect(try await store.changes(type: .heartRate, since: nil).deleted.count == 400)
        }
    }

    @Test(
        "sample appends that meet share one transaction, each counted on its own; a refused one refuses only itself",
        arguments: StoreKind.allCases)
    func groupedAppends(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let workouts = try await beginRunningWorkouts(2, in: store)
            try await store.append([sample(.heartRate, 100, 0, sourceA)], workout: workouts[0])
            /// Appends `batches` while the store holds appends back, so that they meet; their answers.
            func appendTogether(_ batches: [(workout: UUID?, samples: [QuantitySample])]) async -> [Result<
                Int, StoreError
            >] {
                store.holdSampleAppends()
                return await withTaskGroup(of: (Int, Result<Int, StoreError>).self) { group in
                    for (index, batch) in batches.enumerated() {
                        group.addTask {
                            do throws(StoreError) {
                                return (index, .success(try await store.append(batch.samples, workout: batch.workout)))
                            } catch {
                                return (index, .failure(error))
                            }
                        }
                    }
                    await store.waitUntilSampleAppendsWait(batches.count)
                    store.releaseSampleAppends()
                    var results = [Result<Int, StoreError>](repeating: .success(-1), count: batches.count)
                    for await (index, result) in group { results[index] = result }
                    return results
                }
            }
            var before = store.sampleTransactions
            let together = await appendTogether([
                // The first is stored already: 3 new.
                (workouts[0], (0..<4).map { sample(.heartRate, 100, Double($0), sourceA) }),
                (workouts[1], (0..<5).map { sample(.heartRate, 120, Double($0), sourceB) }),
                (nil, [sample(.heartRate, 90, 50, sourceB)]),
                // The same workout again: the second sample is the first batch's, so 1 new.
                (workouts[0], [sample(.heartRate, 101, 10, sourceA), sample(.heartRate, 100, 3, sourceA)]),
            ])
            #expect(try together.map { try $0.get() } == [3, 5, 1, 1])
            #expect(store.sampleTransactions == before + 1, "one transaction for all four")
            before = store.sampleTransactions
            let never = UUID()
            let refused = await appendTogether([
                (workouts[1], [sample(.heartRate, 121, 20, sourceB)]),
                // A workout never begun: refused (SQLite's foreign key, PostgreSQL's check per write).
                (never, [sample(.heartRate, 70, 60, sourceB)]),
                (nil, [sample(.heartRate, 91, 70, sourceA)]),
            ])
            #expect(try refused[0].get() == 1)
            #expect(throws: StoreError.self) { try refused[1].get() }
            #expect(try refused[2].get() == 1)
            #expect(
                store.sampleTransactions == before + 1 + 3, "the group's transaction refused, each went again alone")
            // Distinct workouts share statements: each new row still counts for its own batch.
            before = store.sampleTransactions
            let shared = await appendTogether([
                (workouts[0], [sample(.heartRate, 102, 11, sourceA), sample(.heartRate, 100, 1, sourceA)]),
                (workouts[1], [sample(.heartRate, 122, 21, sourceB)]),
                (nil, [sample(.heartRate, 92, 71, sourceA), sample(.heartRate, 93, 72, sourceA)]),
            ])
            #expect(try shared.map { try $0.get() } == [1, 1, 2])
            #expect(store.sampleTransactions == before + 1)
            #expect(try await store.samples(type: .heartRate, workout: workouts[0]).count == 6)
            #expect(try await store.samples(type: .heartRate, workout: workouts[1]).count == 7)
            #expect(try await store.samples(type: .heartRate, workout: never).isEmpty)
            #expect(try await store.samples(type: .heartRate).count == 17)
            #expect(try await store.statistics(type: .heartRate).sampleCount == 17, "rollups count each new row once")
        }
    }

    @Test("every sample keeps how its frame came: a link, a broadcast, or unknown", arguments: StoreKind.allCases)
    func samplesKeepTheirPath(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            func heartRate(_ seconds: Double, via: MeasurementPath?) throws -> QuantitySample {
                try QuantitySample(
                    type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: 100 + seconds),
                    start: origin.addingTimeInterval(seconds), end: origin.addingTimeInterval(seconds), source: sourceA,
                    metadata: SampleMetadata(sensorContact: .detected, via: via))
            }
            let written = [
                try heartRate(0, via: .connection), try heartRate(1, via: .advertisement), try heartRate(2, via: nil),
            ]
            #expect(try await store.append(written, workout: nil) == 3)
            let read = try await store.samples(type: .heartRate)
            #expect(read.map(\.metadata.via) == [.connection, .advertisement, nil])
            #expect(read.allSatisfy { $0.metadata.sensorContact == .detected })
        }
    }

    @Test(
        "a strap first seen in a write the store refused is looked up again: its samples keep their own strap",
        arguments: StoreKind.allCases)
    func sourceOfRefusedWrite(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let workout = UUID()
            try await store.beginWorkout(
                ActiveSessionRecord(
                    workoutID: workout, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                    start: origin, state: .running))
            let first = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:0A", name: "first")
            let second = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:0B", name: "second")
            // A workout never begun: the write, and the strap's new row with it, is rolled back.
            await #expect(throws: StoreError.self) {
                try await store.append([sample(.heartRate, 100, 0, first)], workout: UUID())
            }
            // Another strap now takes the row the rolled-back one had.
            try await store.append([sample(.heartRate, 110, 1, second)], workout: workout)
            try await store.append([sample(.heartRate, 120, 2, first)], workout: workout)
            try await store.append([sample(.heartRate, 121, 3, first)], workout: workout)
            let stored = try await store.samples(type: .heartRate, workout: workout)
            #expect(stored.map(\.source.name) == ["second", "first", "first"])
        }
    }
}
