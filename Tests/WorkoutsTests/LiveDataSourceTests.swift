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

    @Test("a 65535 bpm frame: no HR sample, its RR kept, counted as implausible; the next good frame is a sample")
    func implausibleHeartRate() async throws {
        let (source, builder) = try await make()
        // Flags 0x11: a uint16 heart rate (0xFFFF, a field of noise) and one RR interval of 1 s.
        await source.handle(try heartRate(sensorA, [0x11, 0xFF, 0xFF, 0x00, 0x04], at: 5))
        await source.handle(try heartRate(sensorA, [0x06, 0x50], at: 6))
        let statistics = try #require(await builder.statistics(for: .heartRate))
        #expect(statistics.sampleCount == 1)
        #expect(statistics.mostRecent == 80)
        #expect(await builder.statistics(for: .heartbeatSeries)?.sampleCount == 1)
        let counters = await source.counters
        #expect(counters.implausibleHeartRates == 1)
        #expect(counters.measurements == 2)
        #expect(counters.decodingFailures == 0)
        #expect(counters.samplesDelivered == 2)
        #expect(counters.samplesDropped == 0)
    }

    @Test("an implausible heart rate is logged with address and value, never the strap's name; first at warning")
    func implausibleHeartRateLogged() async throws {
        let records = LogRecords()
        let builder = LiveWorkoutBuilder(configuration: configuration, clock: clock)
        try await builder.beginCollection(at: t0)
        let source = LiveDataSource(
            builder: builder, adapters: [RadiolessAdapter()], configuration: configuration, clock: clock,
            logger: Logger(label: "test") { _ in records })
        await source.attach()
        for second in 1...3 {
            // Flags 0x01: a uint16 heart rate, 0xFFFF.
            await source.handle(try heartRate(sensorA, [0x01, 0xFF, 0xFF], at: Double(second)))
        }
        let logged = records.events.filter { $0.message == "implausible heart rate refused" }
        #expect(logged.map(\.level) == [.warning, .debug, .debug], "a strap stuck on 65535 warns once")
        #expect(logged.first?.metadata == ["sensor": sensorA.address, "bpm": "65535", "refused": "1"])
        #expect(await source.counters.implausibleHeartRates == 3)
    }

    @Test("counters written before implausible heart rates were counted decode with 0 of them; new ones round-trip")
    func countersFromOldJSON() throws {
        let old =
            #"{"measurements":3,"samplesDelivered":4,"samplesDropped":0,"decodingFailures":1,"#
            + #""disconnections":0,"waveformFrames":0}"#
        let decoded = try JSONDecoder().decode(LiveDataSource.Counters.self, from: Data(old.utf8))
        #expect(decoded.measurements == 3 && decoded.samplesDelivered == 4 && decoded.decodingFailures == 1)
        #expect(decoded.implausibleHeartRates == 0)
        var current = LiveDataSource.Counters()
        current.measurements = 5
        current.implausibleHeartRates = 2
        let again = try JSONDecoder().decode(LiveDataSource.Counters.self, from: try JSONEncoder().encode(current))
        #expect(again == current)
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
