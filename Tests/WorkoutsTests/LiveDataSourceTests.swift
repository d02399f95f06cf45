import BusHarness
import Foundation
import GATT
import Logging
import Samples
import Sensors
import Testing

@testable import Workouts

private let sensorA = SensorIdentity(adapter: "test", address: "C0:FF:EE:00:00:01", name: "A")
private let sensorB = SensorIdentity(adapter: "test", address: "C0:FF:EE:00:00:02", name: "B")

private func heartRate(_ sensor: SensorIdentity, _ bytes: [UInt8], at seconds: Double) throws -> SensorEvent {
    .measurement(
        SensorMeasurement(
            sensor: sensor, characteristic: .heartRateMeasurement,
            value: try GATTValue(characteristic: .heartRateMeasurement, bytes: bytes), receivedAt: date(seconds)))
}

@Suite("Live data source")
struct LiveDataSourceTests {
    let clock = ManualWallClock(now: t0)
    let configuration = WorkoutConfiguration(activityType: .running, location: .indoor)

    private func make() async throws -> (LiveDataSource, LiveWorkoutBuilder) {
        let builder = LiveWorkoutBuilder(configuration: configuration, clock: clock)
        try await builder.beginCollection(at: t0)
        let source = LiveDataSource(
            builder: builder, adapters: [RadiolessAdapter()], configuration: configuration, clock: clock,
            logger: Logger(label: "test"))
        await source.attach()
        return (source, builder)
    }

    @Test("measurements become samples: HR, back-dated RR; HR 0 dropped; failures counted, stream goes on")
    func measurements() async throws {
        let (source, builder) = try await make()
        await source.handle(try heartRate(sensorA, [0x16, 0x42, 0x18, 0x04, 0x70, 0x01], at: 1))
        await source.handle(try heartRate(sensorA, [0x06, 0x00], at: 2))
        let error = GATTDecodingError(
            characteristic: .heartRateMeasurement, field: "rrIntervals", offset: 4, frameLength: 5,
            reason: .trailingBytes(count: 1))
        await source.handle(.decodingFailed(sensorA, error, bytes: [0x10, 0x48, 0x2C, 0x03, 0x01]))
        await source.handle(try heartRate(sensorA, [0x06, 0x50], at: 3))
        let statistics = try #require(await builder.statistics(for: .heartRate))
        #expect(statistics.sampleCount == 2)
        #expect(statistics.mostRecent == 80)
        #expect(await builder.statistics(for: .heartbeatSeries)?.sampleCount == 2)
        let counters = await source.counters
        #expect(counters.measurements == 3)
        #expect(counters.decodingFailures == 1)
        #expect(counters.samplesDelivered == 4)
    }

    @Test("disabled types and predicates filter samples; several straps are kept per source")
    func filtering() async throws {
        let (source, builder) = try await make()
        await source.disableCollection(for: .heartbeatSeries)
        await source.enableCollection(for: .heartRate) { $0.address != sensorB.address }
        await source.handle(try heartRate(sensorA, [0x16, 0x42, 0x18, 0x04], at: 1))
        await source.handle(try heartRate(sensorB, [0x16, 0x64, 0x18, 0x04], at: 1))
        #expect(await builder.statistics(for: .heartbeatSeries) == nil)
        #expect(await builder.statistics(for: .heartRate)?.bySource.keys.map(\.address) == [sensorA.address])
        #expect(await source.counters.samplesDropped == 3)
        await source.enableCollection(for: .heartRate)
        await source.handle(try heartRate(sensorB, [0x06, 0x64], at: 2))
        #expect(await builder.statistics(for: .heartRate)?.bySource.count == 2)
    }

    @Test("attached, an adapter's frames reach the builder; detached, its subscription ends and nothing more is fed")
    func attachAndDetach() async throws {
        let builder = LiveWorkoutBuilder(configuration: configuration, clock: clock)
        try await builder.beginCollection(at: t0)
        let adapter = RadiolessAdapter()
        let source = LiveDataSource(
            builder: builder, adapters: [adapter], configuration: configuration, clock: clock,
            logger: Logger(label: "test"))
        var seen = source.sensorEvents().makeAsyncIterator()
        await source.attach()
        await source.attach()
        #expect(adapter.subscriberCount == 1, "attaching twice subscribes once")
        adapter.send(try heartRate(sensorA, [0x06, 0x50], at: 1))
        _ = await seen.next()
        // The builder runs on the data source's executor: by the time it answers, the frame is in.
        #expect(await builder.statistics(for: .heartRate)?.sampleCount == 1)
        await source.detach()
        #expect(adapter.subscriberCount == 0)
        await source.handle(try heartRate(sensorA, [0x06, 0x51], at: 2))
        #expect(await builder.statistics(for: .heartRate)?.sampleCount == 1, "a detached source feeds nothing")
        #expect(await source.counters.measurements == 2)
    }

    @Test("a disconnect resets the sensor's counters: no energy spike after reconnect")
    func resetOnDisconnect() async throws {
        let (source, builder) = try await make()
        await source.handle(try heartRate(sensorA, [0x08, 0x46, 0x0A, 0x00], at: 1))
        await source.handle(try heartRate(sensorA, [0x08, 0x46, 0x0E, 0x00], at: 2))
        #expect(await builder.statistics(for: .activeEnergyBurned)?.sum == 4)
        await source.handle(.connectionChanged(sensorA, .disconnected(.linkLost)))
        await source.handle(try heartRate(sensorA, [0x08, 0x46, 0xF4, 0x01], at: 30))
        #expect(
            await builder.statistics(for: .activeEnergyBurned)?.sum == 4,
            "the first frame after reconnect is a baseline")
        #expect(await source.counters.disconnections == 1)
    }
}
