import BusHarness
import Foundation
import GATT
import Logging
import Samples
import Sensors
import Testing

@testable import Workouts

private let routedA = SensorIdentity(adapter: "test", address: "C0:FF:EE:00:00:01", name: "A")
private let routedB = SensorIdentity(adapter: "test", address: "C0:FF:EE:00:00:02", name: "B")

private func frame(_ sensor: SensorIdentity, bpm: UInt8, at seconds: Double) -> SensorEvent {
    .measurement(
        SensorMeasurement(
            sensor: sensor, characteristic: .heartRateMeasurement,
            value: .heartRateMeasurement(HeartRateMeasurement(heartRate: UInt16(bpm))), receivedAt: date(seconds)))
}

/// Collects a stream until it ends.
private func collect(_ stream: AsyncStream<SensorEvent>) -> Task<[SensorEvent], Never> {
    Task {
        var events: [SensorEvent] = []
        for await event in stream { events.append(event) }
        return events
    }
}

@Suite("Events routed by sensor")
struct EventRoutingTests {
    @Test("a keyed subscriber gets its sensors' events and the adapter's own; an open one gets all")
    func broadcaster() async {
        let broadcaster = EventBroadcaster<SensorEvent>(routingKey: \.sensorAddress)
        let onlyA = collect(broadcaster.subscribe(keys: [routedA.address]))
        let both = collect(broadcaster.subscribe(keys: [routedA.address, routedB.address]))
        let all = collect(broadcaster.subscribe())
        #expect(broadcaster.subscriberCount == 3)
        broadcaster.yield(frame(routedB, bpm: 90, at: 1))
        broadcaster.yield(frame(routedA, bpm: 80, at: 1))
        broadcaster.yield(.adapterChanged("test", .ready))
        broadcaster.finish()
        #expect(await onlyA.value == [frame(routedA, bpm: 80, at: 1), .adapterChanged("test", .ready)])
        #expect(await both.value.count == 3)
        #expect(await all.value.count == 3)
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test("a cancelled keyed subscription leaves every key it listened to")
    func unsubscribe() async {
        let broadcaster = EventBroadcaster<SensorEvent>(routingKey: \.sensorAddress)
        let subscription = collect(broadcaster.subscribe(keys: [routedA.address, routedB.address]))
        subscription.cancel()
        _ = await subscription.value
        #expect(broadcaster.subscriberCount == 0)
        let later = collect(broadcaster.subscribe(keys: [routedB.address]))
        broadcaster.yield(frame(routedB, bpm: 70, at: 2))
        broadcaster.finish()
        #expect(await later.value == [frame(routedB, bpm: 70, at: 2)])
    }

    @Test("the consumption-tracking broadcaster routes too, and does not wait on who did not take a value")
    func trackingBroadcaster() async {
        let broadcaster = ConsumptionTrackingBroadcaster<SensorEvent>(routingKey: \.sensorAddress)
        let onlyB = collect(broadcaster.subscribe(keys: [routedB.address]))
        let all = collect(broadcaster.subscribe())
        broadcaster.yield(frame(routedA, bpm: 80, at: 1))
        await broadcaster.waitUntilConsumed()
        broadcaster.yield(frame(routedB, bpm: 90, at: 1))
        broadcaster.finish()
        #expect(await onlyB.value == [frame(routedB, bpm: 90, at: 1)])
        #expect(await all.value.count == 2)
    }

    @Test("a data source for strap A hears none of strap B's frames: nothing is sampled to be dropped")
    func dataSourceHearsItsStraps() async throws {
        let clock = ManualWallClock(now: t0)
        let configuration = WorkoutConfiguration(activityType: .running, location: .indoor)
        let builder = LiveWorkoutBuilder(configuration: configuration, clock: clock)
        try await builder.beginCollection(at: t0)
        let adapter = RadiolessAdapter()
        let source = LiveDataSource(
            builder: builder, adapters: [adapter], configuration: configuration, clock: clock,
            addresses: [routedA.address], logger: Logger(label: "test"))
        await source.attach()
        for second in 1...5 {
            adapter.send(frame(routedB, bpm: 150, at: Double(second)))
            adapter.send(frame(routedA, bpm: 100, at: Double(second)))
        }
        adapter.finish()
        await source.drain()
        let counters = await source.counters
        #expect(counters.measurements == 5)
        #expect(counters.samplesDropped == 0)
        #expect(await builder.statistics(for: .heartRate)?.bySource.keys.map(\.address) == [routedA.address])
    }
}
