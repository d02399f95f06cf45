import Foundation
import GATT
import Logging
import SensorSimulator
import Sensors
import Synchronization
import Testing

/// What one stepped run delivered: each event with the timeline's reading while it was handled.
private struct Delivery: Hashable {
    let event: SensorEvent
    let handledAt: Date
}

/// Plays `steps` seconds of `scenario` on a stepped adapter, waiting with `pacer` before each step;
/// `duringPacing` runs beside it (a test moving the pacing clock).
private func play(
    _ scenario: Scenario, seed: UInt64? = nil, steps: Int, pacer: SimulationPacer,
    duringPacing: @escaping @Sendable (_ finished: @Sendable () -> Bool) async -> Void = { _ in }
) async throws -> [Delivery] {
    let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)
    let mock = MockSensorAdapter(scenario: scenario, seed: seed, steppingFrom: origin, logger: Logger(label: "test"))
    let events = mock.events()
    let timeline = mock.timeline
    let consumer = Task {
        var deliveries: [Delivery] = []
        for await event in events { deliveries.append(Delivery(event: event, handledAt: timeline.now())) }
        return deliveries
    }
    try await mock.startDiscovery(services: [.heartRate])
    for sensor in mock.sensors { try await mock.connect(sensor) }
    // Connecting is handled at the origin, before the first second plays.
    await mock.waitUntilEventsConsumed()
    let finished = Mutex(false)
    let helper = Task { await duringPacing { finished.withLock { $0 } } }
    var pacer = pacer
    for step in 1...steps {
        try await pacer.waitForNextStep()
        let time = await mock.step()
        #expect(time == origin.addingTimeInterval(Double(step)), "the scenario's own time axis")
    }
    finished.withLock { $0 = true }
    await helper.value
    await mock.finish(at: timeline.now())
    return await consumer.value
}

@Suite("Stepped simulator: the scenario's time, whatever the pace")
struct SteppedSimulationTests {
    @Test("the same scenario and seed give the same events and times at the maximum pace and paced at 60×")
    func sameAtAnyPace() async throws {
        let steps = 900
        let fast = try await play(.default, steps: steps, pacer: SimulationPacer(pace: .maximum))
        let pacingClock = ManualWallClock()
        let pacingStart = pacingClock.now()
        let paced = try await play(
            .default, steps: steps, pacer: SimulationPacer(pace: .speed(60), clock: pacingClock)
        ) { finished in
            // The pacer really waits: each wait ends only when this moves its clock.
            while !finished() {
                if pacingClock.sleeperCount > 0 { pacingClock.advance(by: 1.0 / 60) } else { await Task.yield() }
            }
        }
        #expect(pacingClock.now().timeIntervalSince(pacingStart) >= Double(steps) / 60 - 0.1)
        let firstDifference = fast.indices.first { $0 >= paced.count || fast[$0] != paced[$0] } ?? fast.count
        #expect(fast.count == paced.count)
        #expect(
            firstDifference == fast.count,
            "first difference: \(fast[firstDifference...].first.map(String.init(describing:)) ?? "-")")
        let measurements = fast.compactMap { delivery -> (SensorMeasurement, Date)? in
            guard case .measurement(let measurement) = delivery.event else { return nil }
            return (measurement, delivery.handledAt)
        }
        #expect(measurements.count > 1500, "two straps, 900 s, a few faults")
        #expect(
            measurements.allSatisfy { $0.0.receivedAt == $0.1 },
            "each second is handled while the timeline reads it: consumers never lag")
        #expect(fast.contains { if case .decodingFailed = $0.event { true } else { false } }, "the faults play")
    }

    @Test("another seed gives other frames")
    func seedMatters() async throws {
        let first = try await play(.default, steps: 60, pacer: SimulationPacer(pace: .maximum))
        let again = try await play(.default, steps: 60, pacer: SimulationPacer(pace: .maximum))
        let other = try await play(.default, seed: 7, steps: 60, pacer: SimulationPacer(pace: .maximum))
        let same = first == again
        let different = first != other
        #expect(same)
        #expect(different)
    }

    @Test("a stepped adapter's timeline reads its origin until the first step, then each second played")
    func timeline() async throws {
        let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let mock = MockSensorAdapter(scenario: .default, steppingFrom: origin, logger: Logger(label: "test"))
        #expect(mock.isStepped)
        #expect(mock.timeline.now() == origin)
        await mock.step()
        await mock.step()
        #expect(mock.timeline.now() == origin.addingTimeInterval(2))
        await mock.shutdown()
    }
}

@Suite("Simulator: a strap connecting late")
struct LateConnectionTests {
    @Test("a strap connecting after the clock moved on reports its battery level, as a client reads it on connecting")
    func batteryReportedOnLateConnect() async throws {
        let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let mock = MockSensorAdapter(scenario: .default, steppingFrom: origin, logger: Logger(label: "test"))
        let sensors = mock.sensors
        let late = try #require(sensors.last)
        let events = mock.events()
        // Each step waits until its events are handled: they are collected as they come.
        let consumer = Task {
            var levels: [UInt8] = []
            for await event in events {
                if case .batteryLevel(let sensor, let percent) = event, sensor == late { levels.append(percent) }
            }
            return levels
        }
        try await mock.connect(try #require(sensors.first))
        for _ in 1...5 { await mock.step() }
        try await mock.connect(late)
        await mock.step()
        await mock.finish(at: mock.timeline.now())
        let levels = await consumer.value
        #expect(levels.count == 1, "reported once, on connecting: \(levels)")
        #expect(levels.first.map { (1...100).contains($0) } == true)
        await mock.shutdown()
    }
}
