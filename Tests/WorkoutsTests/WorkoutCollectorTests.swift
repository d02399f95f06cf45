import Foundation
import Samples
import Sensors
import Synchronization
import Testing

@testable import Workouts

private let running = WorkoutConfiguration(activityType: .running, location: .indoor)

private func collector(zones: [Double]? = nil, profile: UserProfile? = nil) -> WorkoutCollector {
    var collector = WorkoutCollector(configuration: running, profile: profile)
    if let zones {
        try! collector.setCustomZoneConfiguration(
            try! ZoneConfiguration(quantityType: .heartRate, boundaryValues: zones), for: .heartRate)
    }
    return collector
}

@Suite("Live builder: order, statistics, events, elapsed time")
struct WorkoutCollectorTests {
    @Test("two sensors on one person: energy is the primary source's, never both added; heart rate spans both")
    func oneSourceCountsForAmounts() throws {
        var builder = collector()
        try builder.begin(at: t0)
        builder.setPrimarySource(strapB, for: .activeEnergyBurned)
        var batch: [QuantitySample] = []
        for second in stride(from: 1.0, through: 60, by: 1) {
            batch.append(sample(.activeEnergyBurned, 1.0, at: second, source: strapA))
            batch.append(sample(.activeEnergyBurned, 1.2, at: second, source: strapB))
            batch.append(sample(.heartRate, 120, at: second, source: strapA))
            batch.append(sample(.heartRate, 130, at: second, source: strapB))
        }
        _ = try builder.add(batch)
        let energy = try #require(builder.statistics(for: .activeEnergyBurned))
        #expect(isClose(energy.sum, 72), "60 × 1.2 kJ from the primary, not 132 kJ from both")
        #expect(energy.sampleCount == 60)
        #expect(isClose(energy.bySource[strapA]?.sum, 60), "each source's own amount stays visible")
        #expect(isClose(builder.statistics(for: .heartRate)?.average, 125))
    }

    @Test(
        "the last recorded moment: the latest sample of any type and source, event or activity boundary; the start before any"
    )
    func lastRecordedDate() throws {
        typealias Step = (inout WorkoutCollector) throws -> Void
        let cases: [(what: String, steps: [Step], last: Double?)] = [
            ("not begun", [], nil),
            ("begun only", [{ try $0.begin(at: t0) }], 0),
            (
                "a non-primary source's energy after the primary's",
                [
                    { try $0.begin(at: t0) }, { $0.setPrimarySource(strapA, for: .activeEnergyBurned) },
                    {
                        _ = try $0.add([
                            sample(.activeEnergyBurned, 1, at: 10, source: strapA),
                            sample(.activeEnergyBurned, 1, at: 30, source: strapB),
                        ])
                    },
                ], 30
            ),
            (
                "a lap after the last heart rate",
                [
                    { try $0.begin(at: t0) }, { _ = try $0.add([sample(.heartRate, 120, at: 5, source: strapA)]) },
                    {
                        _ = try $0.add(events: [
                            WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: t0, end: date(40)))
                        ])
                    },
                ], 40
            ),
            (
                "an activity begun after the last sample",
                [
                    { try $0.begin(at: t0) }, { _ = try $0.add([sample(.heartRate, 120, at: 5, source: strapA)]) },
                    { _ = try $0.beginActivity(running, at: date(50)) },
                ], 50
            ),
        ]
        for item in cases {
            var builder = collector()
            for step in item.steps { try step(&builder) }
            #expect(builder.lastRecordedDate == item.last.map(date), "\(item.what)")
        }
    }

    @Test("battery is per device: no mean or range across sensors; the top level is the primary's last value")
    func batteryPerDevice() throws {
        var builder = collector()
        try builder.begin(at: t0)
        builder.setPrimarySource(strapA, for: .batteryLevel)
        _ = try builder.add([
            sample(.batteryLevel, 90, at: 1, source: strapA), sample(.batteryLevel, 20, at: 2, source: strapB),
            sample(.batteryLevel, 88, at: 3, source: strapA), sample(.batteryLevel, 15, at: 4, source: strapB),
        ])
        let battery = try #require(builder.statistics(for: .batteryLevel))
        #expect(battery.average == nil && battery.minimum == nil && battery.maximum == nil)
        #expect(battery.durationWeightedAverage == nil)
        #expect(battery.mostRecent == 88, "the primary's last, not the band's that came later")
        #expect(battery.bySource[strapA]?.mostRecent == 88)
        #expect(battery.bySource[strapB]?.mostRecent == 15)
        #expect(battery.sampleCount == 4)
    }

    @Test(
        "the primary strap heard through another adapter (a gateway's node, another hci) is still the primary: zones, HRV and energy follow it"
    )
    func primaryFollowsTheStrap() throws {
        // A hub's session names the strap under the adapter "mqtt"; its samples come from the node.
        let configured = SampleSource(adapter: "mqtt", address: strapA.address, name: "A")
        let viaRoom1 = SampleSource(adapter: "room-1", address: strapA.address, name: "A")
        var builder = collector(zones: [110, 130, 150, 170])
        for type in [QuantityType.heartRate, .heartbeatSeries, .activeEnergyBurned] {
            builder.setPrimarySource(configured, for: type)
        }
        try builder.begin(at: t0)
        for second in stride(from: 1.0, through: 30, by: 1) {
            _ = try builder.add([
                sample(.heartRate, 120, at: second, source: viaRoom1),
                sample(.heartbeatSeries, 0.5, at: second - 0.5, source: viaRoom1, length: 0.5),
                sample(.heartbeatSeries, 0.5, at: second, source: viaRoom1, length: 0.5),
                sample(.activeEnergyBurned, 1, at: second, source: viaRoom1),
                // Another strap on the same gateway is not the primary.
                sample(.heartRate, 175, at: second, source: SampleSource(adapter: "room-1", address: strapB.address)),
            ])
        }
        try builder.end(at: date(31))
        let workout = try builder.finish()
        let zones = try #require(workout.zoneGroups.first { $0.configuration.quantityType == .heartRate })
        #expect(zones.durations.map(\.duration) == [0, 30, 0, 0, 0], "30 s at 120 bpm in Z2, none at 175")
        #expect(workout.heartRateVariability.acceptedIntervals == 60)
        #expect(workout.activeEnergy.kilojoules == 30)
        #expect(workout.primarySources?[.heartRate] == viaRoom1)
    }

    @Test("a strap that moves to another gateway mid-workout: its energy before the move still counts")
    func energyAcrossAMove() throws {
        let viaRoom1 = SampleSource(adapter: "room-1", address: strapA.address, name: "A")
        let viaRoom2 = SampleSource(adapter: "room-2", address: strapA.address, name: "A")
        var builder = collector()
        builder.setPrimarySource(viaRoom1, for: .activeEnergyBurned)
        try builder.begin(at: t0)
        for second in stride(from: 1.0, through: 20, by: 1) {
            _ = try builder.add([sample(.activeEnergyBurned, 1, at: second, source: second <= 10 ? viaRoom1 : viaRoom2)]
            )
        }
        #expect(builder.activeEnergy.kilojoules == 20, "10 through room-1, then 10 through room-2")
        try builder.end(at: date(21))
        let workout = try builder.finish()
        #expect(workout.activeEnergy.kilojoules == 20)
        #expect(workout.statistics[.activeEnergyBurned]?.sum == 20)
        #expect(workout.statistics[.activeEnergyBurned]?.bySource[viaRoom1]?.sum == 10, "each adapter's share kept")
    }

    @Test("an amount that began before the workout counts in its first activity too: activity and workout sums agree")
    func amountBeforeStartInFirstActivity() throws {
        var builder = collector()
        try builder.begin(at: t0)
        _ = try builder.beginActivity(running, at: t0)
        // Energy since the reading before the start (−2 s … +1 s), then two more increments.
        _ = try builder.add([
            sample(.activeEnergyBurned, 3, at: -2, length: 3), sample(.activeEnergyBurned, 4, at: 1, length: 5),
            sample(.activeEnergyBurned, 5, at: 6, length: 5),
        ])
        try builder.end(at: date(20))
        let workout = try builder.finish()
        #expect(workout.statistics[.activeEnergyBurned]?.sum == 12)
        #expect(workout.activities.first?.statistics[.activeEnergyBurned]?.sum == 12)
        #expect(workout.activeEnergy.kilojoules == 12)
    }

    @Test("a batch is all or nothing: one sample before the start refuses it without counting the rest")
    func atomicBatch() async throws {
        var builder = collector()
        try builder.begin(at: t0)
        // A first frame: its heart rate now, an RR interval of a beat before the start.
        let frame = [sample(.heartRate, 90, at: 1), sample(.heartbeatSeries, 0.7, at: -1, length: 0.7)]
        #expect(throws: WorkoutBuilderError.dateBeforeStart(date(-0.3))) { _ = try builder.add(frame) }
        #expect(builder.statistics(for: .heartRate) == nil, "nothing of the refused batch counted")
        // A live source keeps what is current and leaves out the rest, and every kept sample reaches the sink.
        let received = Mutex<[QuantitySample]>([])
        let live = LiveWorkoutBuilder(
            configuration: WorkoutConfiguration(activityType: .running), clock: ManualWallClock(now: t0),
            sampleSink: { samples in received.withLock { $0 += samples } })
        try await live.beginCollection(at: t0)
        #expect(try await live.addLive(frame) == 1)
        #expect(await live.statistics(for: .heartRate)?.sampleCount == 1)
        #expect(received.withLock { $0 } == [frame[0]])
    }

    @Test("a batch added without reporting `.collected` causes every other update all the same")
    func addWithoutCollected() throws {
        var reporting = collector(zones: [100, 120, 140, 160])
        var quiet = collector(zones: [100, 120, 140, 160])
        try reporting.begin(at: t0)
        try quiet.begin(at: t0)
        var zoneUpdates = 0
        for second in 0..<240 {
            let heartRate = 90 + 80 * abs(sin(Double(second) / 30))
            let batch = [
                sample(.heartRate, heartRate, at: Double(second)),
                sample(.heartbeatSeries, 60 / heartRate, at: Double(second)),
            ]
            let all = try reporting.add(batch)
            let lean = try quiet.add(batch, reportingCollected: false)
            #expect(all.first == .collected([.heartRate, .heartbeatSeries]))
            #expect(lean == Array(all.dropFirst()))
            zoneUpdates += lean.filter { if case .zone = $0 { true } else { false } }.count
        }
        #expect(zoneUpdates > 4, "the walk crosses zones")
        #expect(quiet.statistics(for: .heartRate) == reporting.statistics(for: .heartRate))
    }

    @Test("a builder works out `.collected` once a reader asks for it, from the next batch on")
    func collectedOnceAsked() async throws {
        let live = LiveWorkoutBuilder(
            configuration: WorkoutConfiguration(activityType: .running), clock: ManualWallClock(now: t0))
        let lean = live.updates(includingCollected: false)
        try await live.beginCollection(at: t0)
        _ = try await live.addLive([sample(.heartRate, 90, at: 1)])
        let everything = live.updates()
        _ = try await live.addLive([sample(.heartRate, 91, at: 2), sample(.heartbeatSeries, 0.66, at: 2)])
        try await live.endCollection(at: date(3))
        _ = try await live.finishWorkout()
        var all: [BuilderUpdate] = []
        for await update in everything { all.append(update) }
        #expect(
            all.filter { if case .collected = $0 { true } else { false } } == [
                .collected([.heartRate, .heartbeatSeries])
            ])
        withExtendedLifetime(lean) {}
    }

    @Test("a subscriber that leaves out `.collected` gets every other update, in order")
    func updatesWithoutCollected() async throws {
        let live = LiveWorkoutBuilder(
            configuration: WorkoutConfiguration(activityType: .running), clock: ManualWallClock(now: t0))
        let everything = live.updates()
        let lean = live.updates(includingCollected: false)
        try await live.beginCollection(at: t0)
        _ = try await live.addLive([sample(.heartRate, 90, at: 1)])
        let lap = WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: t0, end: date(2)))
        _ = try await live.addEvents([lap])
        _ = try await live.addLive([sample(.heartRate, 91, at: 3)])
        try await live.endCollection(at: date(4))
        _ = try await live.finishWorkout()
        var all: [BuilderUpdate] = []
        for await update in everything { all.append(update) }
        var kept: [BuilderUpdate] = []
        for await update in lean { kept.append(update) }
        #expect(all.filter { if case .collected = $0 { true } else { false } }.count == 2)
        #expect(kept == all.filter { if case .collected = $0 { false } else { true } })
        #expect(kept.contains(.event(lap)))
    }

    @Test("begin → add → end → finish is enforced with typed errors")
    func order() throws {
        var builder = collector()
        #expect(throws: WorkoutBuilderError.collectionNotStarted) {
            _ = try builder.add([sample(.heartRate, 80, at: 0)])
        }
        #expect(throws: WorkoutBuilderError.collectionNotEnded) { _ = try builder.finish() }
        try builder.begin(at: t0)
        #expect(throws: WorkoutBuilderError.collectionAlreadyStarted) { try builder.begin(at: t0) }
        #expect(throws: WorkoutBuilderError.zonesLockedAfterBeginCollection) {
            try builder.setCustomZoneConfiguration(nil, for: .heartRate)
        }
        #expect(throws: WorkoutBuilderError.dateBeforeStart(date(-5))) {
            _ = try builder.add([sample(.heartRate, 80, at: -5)])
        }
        #expect(throws: WorkoutBuilderError.collectionNotEnded) { _ = try builder.finish() }
        try builder.end(at: date(60))
        #expect(throws: WorkoutBuilderError.collectionEnded) { _ = try builder.add([sample(.heartRate, 80, at: 61)]) }
        #expect(throws: WorkoutBuilderError.collectionEnded) { try builder.end(at: date(70)) }
        let workout = try builder.finish()
        #expect(workout.elapsedTime == 60)
        #expect(throws: WorkoutBuilderError.workoutFinished) { _ = try builder.finish() }
        #expect(throws: WorkoutBuilderError.workoutFinished) { try builder.discard() }

        var discarded = collector()
        try discarded.begin(at: t0)
        try discarded.discard()
        #expect(throws: WorkoutBuilderError.workoutDiscarded) { try discarded.end(at: date(1)) }
        #expect(throws: WorkoutBuilderError.workoutDiscarded) { _ = try discarded.finish() }
    }

    @Test(
        "statistics equal a brute-force recomputation on random streams (cumulative: the primary source's only)",
        arguments: 1...20)
    func statisticsProperty(_ seed: Int) throws {
        var generator = TestGenerator(state: UInt64(seed))
        var builder = collector()
        try builder.begin(at: t0)
        var samples: [QuantitySample] = []
        var batch: [QuantitySample] = []
        var time = 0.0
        let sources = [strapA, strapB]
        for _ in 0..<Int.random(in: 1...400, using: &generator) {
            time += Double.random(in: 0...8, using: &generator)
            let type: QuantityType = [.heartRate, .cyclingPower, .activeEnergyBurned].randomElement(using: &generator)!
            let value = Double(Int.random(in: -20...250, using: &generator))
            let next = sample(type, value, at: time, source: sources.randomElement(using: &generator)!)
            samples.append(next)
            batch.append(next)
            // Random batch sizes: batching must not change the result.
            if Bool.random(using: &generator) {
                _ = try builder.add(batch)
                batch = []
            }
        }
        _ = try builder.add(batch)
        for type in [QuantityType.heartRate, .cyclingPower, .activeEnergyBurned] {
            let ofType = samples.filter { $0.type == type }
            let statistics = builder.statistics(for: type)
            guard !ofType.isEmpty else {
                #expect(statistics == nil)
                continue
            }
            // A cumulative amount is one source's, the primary (here the first to send it), never a
            // sum over sources; discrete figures span every source.
            let counted =
                type.aggregationStyle == .cumulative ? ofType.filter { $0.source == ofType[0].source } : ofType
            let expected = bruteForce(counted, type: type)
            #expect(statistics?.sampleCount == counted.count)
            #expect(isClose(statistics?.sum, expected.sum))
            #expect(isClose(statistics?.minimum, expected.minimum))
            #expect(isClose(statistics?.maximum, expected.maximum))
            #expect(isClose(statistics?.average, expected.average))
            #expect(isClose(statistics?.mostRecent, expected.mostRecent))
            #expect(isClose(statistics?.durationWeightedAverage, expected.weighted))
            for source in sources {
                let perSource = ofType.filter { $0.source == source }
                guard !perSource.isEmpty else { continue }
                let expectedSource = bruteForce(perSource, type: type)
                #expect(statistics?.bySource[source]?.sampleCount == perSource.count)
                #expect(isClose(statistics?.bySource[source]?.average, expectedSource.average))
                #expect(isClose(statistics?.bySource[source]?.sum, expectedSource.sum))
                #expect(isClose(statistics?.bySource[source]?.durationWeightedAverage, expectedSource.weighted))
            }
        }
    }

    /// Recomputes statistics from scratch, the slow and obvious way.
    private func bruteForce(_ samples: [QuantitySample], type: QuantityType) -> (
        sum: Double?, minimum: Double?, maximum: Double?, average: Double?, mostRecent: Double?, weighted: Double?
    ) {
        let values = samples.map(\.quantity.value)
        if type.aggregationStyle == .cumulative { return (values.reduce(0, +), nil, nil, nil, nil, nil) }
        var weightedSum = 0.0
        var weight = 0.0
        for source in Set(samples.map(\.source)) {
            let series = samples.filter { $0.source == source }
            for (previous, next) in zip(series, series.dropFirst()) {
                let hold = min(max(next.start.timeIntervalSince(previous.start), 0), 5)
                weightedSum += previous.quantity.value * hold
                weight += hold
            }
        }
        return (
            nil, values.min(), values.max(), values.reduce(0, +) / Double(values.count), values.last,
            weight > 0 ? weightedSum / weight : nil
        )
    }

    @Test("elapsed time excludes pauses, exactly, with backdated pauses; redundant pauses are ignored")
    func elapsedTime() throws {
        var builder = collector()
        try builder.begin(at: t0)
        #expect(builder.elapsedTime(at: date(100)) == 100)
        _ = try builder.add(events: [WorkoutEvent(kind: .pause, date: date(100))])
        #expect(try builder.add(events: [WorkoutEvent(kind: .pause, date: date(110))]).isEmpty, "pause while paused")
        _ = try builder.add(events: [WorkoutEvent(kind: .resume, date: date(130))])
        #expect(try builder.add(events: [WorkoutEvent(kind: .resume, date: date(140))]).isEmpty, "resume while running")
        #expect(builder.elapsedTime(at: date(120)) == 100)
        #expect(builder.elapsedTime(at: date(200)) == 170)
        // A pause added after the fact, at 40–50: elapsed time can decrease.
        _ = try builder.add(events: [WorkoutEvent(kind: .pause, date: date(40))])
        _ = try builder.add(events: [WorkoutEvent(kind: .resume, date: date(50))])
        #expect(builder.elapsedTime(at: date(200)) == 160)
        #expect(builder.elapsedTime(at: date(45)) == 40)
        #expect(builder.isPaused(at: date(45)))
        #expect(!builder.isPaused(at: date(60)))
        // An open pause runs to the end of collection.
        _ = try builder.add(events: [WorkoutEvent(kind: .pause, date: date(300))])
        try builder.end(at: date(360))
        #expect(builder.elapsedTime(at: date(1000)) == 260)
        #expect(try builder.finish().events.map(\.kind) == [.pause, .resume, .pause, .resume, .pause])
    }

    @Test("laps never overlap; segments may; markers are instants; events keep date order")
    func laps() throws {
        var builder = collector()
        try builder.begin(at: t0)
        _ = try builder.add(events: [
            WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: date(0), end: date(60)))
        ])
        _ = try builder.add(events: [
            WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: date(60), end: date(120)))
        ])
        #expect(throws: WorkoutBuilderError.lapsOverlap(DateInterval(start: date(60), end: date(120)))) {
            _ = try builder.add(events: [
                WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: date(100), end: date(130)))
            ])
        }
        _ = try builder.add(events: [
            WorkoutEvent(kind: .segment, dateInterval: DateInterval(start: date(10), end: date(100))),
            WorkoutEvent(kind: .segment, dateInterval: DateInterval(start: date(20), end: date(90))),
            WorkoutEvent(kind: .marker, date: date(5)),
        ])
        #expect(builder.events.map(\.kind) == [.lap, .marker, .segment, .segment, .lap])
        #expect(throws: WorkoutBuilderError.dateBeforeStart(date(-1))) {
            _ = try builder.add(events: [WorkoutEvent(kind: .marker, date: date(-1))])
        }
    }

    @Test("energy: the primary strap's Energy Expended wins; else Keytel from heart rate; else unavailable")
    func energySources() throws {
        var sensor = collector(profile: UserProfile(id: "a", age: 30, sex: .male, weightKilograms: 70))
        try sensor.begin(at: t0)
        _ = try sensor.add([
            sample(.heartRate, 150, at: 0), sample(.activeEnergyBurned, 10, at: 10),
            sample(.activeEnergyBurned, 99, at: 10, source: strapB),
        ])
        #expect(sensor.activeEnergy == ActiveEnergy(kilojoules: 10, source: .sensor))

        var estimated = collector(profile: UserProfile(id: "a", age: 30, sex: .male, weightKilograms: 70))
        try estimated.begin(at: t0)
        for second in stride(from: 0.0, through: 60, by: 1) {
            _ = try estimated.add([sample(.heartRate, 150, at: second)])
        }
        try estimated.end(at: date(60))
        let rate = -55.0969 + 0.6309 * 150 + 0.1988 * 70 + 0.2017 * 30
        #expect(estimated.activeEnergy.source == .estimatedFromHeartRate)
        #expect(isClose(estimated.activeEnergy.kilojoules, rate, 1e-9), "60 s at 150 bpm is one minute of the rate")

        var none = collector()
        try none.begin(at: t0)
        _ = try none.add([sample(.heartRate, 150, at: 0)])
        #expect(none.activeEnergy == ActiveEnergy(kilojoules: nil, source: .unavailable))
    }
}
