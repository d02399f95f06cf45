import Foundation
import GATT
import Logging
import Sensors
import Testing

@testable import SensorSimulator

private func strap(faults: [Fault] = [], segments: [WorkloadSegment] = [.steady(duration: 600, intensity: 0.5)])
    -> StrapScenario
{
    StrapScenario(
        name: "S", address: "C0:FF:EE:00:00:09", restingHeartRate: 60, maximumHeartRate: 180, battery: 80,
        segments: segments, faults: faults)
}

private func frames(_ outputs: [SimulationOutput]) -> [(time: Double, bytes: [UInt8])] {
    outputs.compactMap { if case .frame(let time, _, let bytes) = $0 { (time, bytes) } else { nil } }
}

/// Plays one strap on the mock adapter for `seconds` of a manual clock (`whilePlaying` runs before
/// it shuts down): every event, the strap, and the clock.
private func play(
    _ strap: StrapScenario, seconds: Int, discover: Bool = false, followsAdvertisements: Bool = true,
    whilePlaying: (MockSensorAdapter) async throws -> Void = { _ in }
) async throws -> (events: [SensorEvent], sensor: SensorIdentity, clock: ManualWallClock) {
    let clock = ManualWallClock()
    let mock = MockSensorAdapter(
        scenario: Scenario(seed: 5, straps: [strap]), clock: clock, followsAdvertisements: followsAdvertisements,
        logger: Logger(label: "test"))
    let events = mock.events()
    let collector = Task {
        var received: [SensorEvent] = []
        for await event in events { received.append(event) }
        return received
    }
    if discover { try await mock.startDiscovery(services: [.heartRate]) }
    let sensor = try #require(mock.sensors.first)
    try await mock.connect(sensor)
    for _ in 0..<seconds {
        while clock.sleeperCount == 0 { await Task.yield() }
        clock.advance(by: 1)
    }
    while clock.sleeperCount == 0 { await Task.yield() }
    try await whilePlaying(mock)
    await mock.shutdown()
    return (await collector.value, sensor, clock)
}

@Suite("Simulator: physiology, determinism, faults")
struct SimulatorTests {
    @Test("same seed → byte-identical frames; another seed → different frames")
    func determinism() {
        var first = StrapSimulation(scenario: strap(), seed: 42)
        var second = StrapSimulation(scenario: strap(), seed: 42)
        var third = StrapSimulation(scenario: strap(), seed: 43)
        let a = first.advance(to: 300)
        #expect(a == second.advance(to: 300))
        #expect(a != third.advance(to: 300))
        #expect(frames(a).count == 300)
    }

    @Test("advancing in steps or at once gives the same frames")
    func stepping() {
        var once = StrapSimulation(scenario: strap(), seed: 7)
        var stepped = StrapSimulation(scenario: strap(), seed: 7)
        var steps: [SimulationOutput] = []
        for second in 1...120 { steps += stepped.advance(to: Double(second)) }
        #expect(once.advance(to: 120) == steps)
    }

    @Test("every frame decodes; RR values agree with the heart rate; HR follows the workload")
    func physiology() throws {
        var simulation = StrapSimulation(
            scenario: strap(segments: [.steady(duration: 300, intensity: 0), .steady(duration: 300, intensity: 0.8)]),
            seed: 3)
        let outputs = frames(simulation.advance(to: 600))
        var restingRates: [Double] = []
        var workRates: [Double] = []
        for (time, bytes) in outputs {
            let frame = try HeartRateMeasurement(bytes: bytes)
            #expect(frame.sensorContact == .detected)
            #expect(frame.rrIntervals.count <= 9)
            if !frame.rrIntervals.isEmpty {
                let fromRR = 60 / (frame.rrIntervals.map(\.seconds).reduce(0, +) / Double(frame.rrIntervals.count))
                #expect(abs(fromRR - Double(frame.heartRate)) <= 1, "HR field matches its RR values")
            }
            if time > 200 && time <= 300 { restingRates.append(Double(frame.heartRate)) }
            if time > 500 { workRates.append(Double(frame.heartRate)) }
        }
        let resting = restingRates.reduce(0, +) / Double(restingRates.count)
        let working = workRates.reduce(0, +) / Double(workRates.count)
        #expect(abs(resting - 60) < 5)
        #expect(abs(working - (60 + 0.8 * 120)) < 8, "after 3+ time constants HR is near the 0.8 target")
        #expect(outputs.contains { (try? HeartRateMeasurement(bytes: $0.bytes).energyExpended) != nil })
    }

    @Test("faults appear exactly as the scenario says")
    func faults() throws {
        var simulation = StrapSimulation(
            scenario: strap(faults: [
                .dropout(at: 10, duration: 5), .contactLost(at: 30, duration: 10), .disconnect(at: 60, duration: 20),
                .malformedFrame(at: 100), .batteryDrain(at: 110, to: 20, duration: 30),
            ]), seed: 1)
        let outputs = simulation.advance(to: 150)
        let frameTimes = Set(frames(outputs).map(\.time))
        #expect((11...15).allSatisfy { !frameTimes.contains(Double($0)) }, "dropout: no frames 10–15 s")
        #expect(frameTimes.contains(10) && frameTimes.contains(16))
        for (time, bytes) in frames(outputs) where time > 30 && time <= 40 {
            let frame = try HeartRateMeasurement(bytes: bytes)
            #expect(frame.sensorContact == .notDetected)
            #expect(frame.rrIntervals.isEmpty)
        }
        #expect(outputs.contains(.disconnected(time: 61)))
        #expect(outputs.contains(.reconnected(time: 81)))
        #expect((61...80).allSatisfy { !frameTimes.contains(Double($0)) }, "no frames while disconnected")
        let malformed = frames(outputs).filter { $0.time == 101 }
        #expect(malformed.count == 1)
        #expect(throws: GATTDecodingError.self) { _ = try HeartRateMeasurement(bytes: malformed[0].bytes) }
        #expect((try? HeartRateMeasurement(bytes: frames(outputs).first { $0.time == 102 }!.bytes)) != nil)
        let batteries = outputs.compactMap {
            if case .battery(let time, let percent) = $0 { (time, percent) } else { nil }
        }
        #expect(batteries.first?.1 == 80)
        #expect(batteries.last?.1 == 20)
        #expect(batteries.last!.0 <= 141)
    }

    @Test("the mock adapter streams decoded frames on a manual clock, and reports faults as events")
    func adapter() async throws {
        let (received, sensor, clock) = try await play(
            strap(faults: [.malformedFrame(at: 3), .disconnect(at: 6, duration: 2)]), seconds: 12, discover: true)
        let measurements = received.compactMap { if case .measurement(let m) = $0 { m } else { nil } }
        #expect(measurements.count == 12 - 1 - 2, "12 s, one malformed frame, 2 s disconnected")
        #expect(measurements.allSatisfy { $0.sensor == sensor })
        #expect(measurements.first?.receivedAt == clock.now().addingTimeInterval(-11))
        #expect(received.contains { if case .decodingFailed(sensor, _, _) = $0 { true } else { false } })
        #expect(received.contains(.connectionChanged(sensor, .disconnected(.linkLost))))
        #expect(
            received.contains(
                .discovered(
                    DiscoveredSensor(identity: sensor, rssi: -52, services: [.heartRate, .battery, .deviceInformation]))
            ))
        #expect(received.filter { $0 == .connectionChanged(sensor, .ready) }.count == 2, "ready again after reconnect")
    }

    @Test("a broadcast-only strap takes no link: heart rate via advertisement, no RR or battery, silent out of range")
    func broadcastOnly() async throws {
        var broadcasting = strap(faults: [.malformedFrame(at: 3), .disconnect(at: 6, duration: 2)])
        broadcasting.broadcastOnly = true
        let (received, sensor, _) = try await play(broadcasting, seconds: 12) { mock in
            #expect(await mock.adapterStatuses().first?.linksInUse == 0, "following an advertisement holds no link")
            #expect(await mock.knownDevices().first?.connected == false)
        }
        let measurements = received.compactMap { if case .measurement(let m) = $0 { m } else { nil } }
        #expect(measurements.count == 12 - 1 - 2, "12 s, one refused broadcast, 2 s out of range")
        #expect(measurements.allSatisfy { $0.via == .advertisement })
        for measurement in measurements {
            guard case .heartRateMeasurement(let frame) = measurement.value else {
                Issue.record("not a heart-rate value")
                continue
            }
            #expect(frame.rrIntervals.isEmpty && frame.energyExpended == nil)
            #expect((60...180).contains(frame.heartRate))
        }
        let refused = received.compactMap { if case .advertisementRefused(_, let error) = $0 { error } else { nil } }
        #expect(refused.map(\.reason) == [.unknownLength(2, known: PolarHeartRateBroadcast.knownLengths)])
        #expect(!received.contains { if case .connectionChanged = $0 { true } else { false } }, "never linked")
        #expect(received.first == .discovered(DiscoveredSensor(identity: sensor, rssi: -70, services: [])), "its name")
        #expect(!received.contains { if case .batteryLevel = $0 { true } else { false } })
    }

    @Test("without following advertisements, a broadcast-only strap is never heard; a linked one streams as before")
    func advertisementsNotFollowed() async throws {
        var broadcasting = strap(faults: [])
        broadcasting.broadcastOnly = true
        let silent = try await play(broadcasting, seconds: 5, followsAdvertisements: false).events
        #expect(!silent.contains { if case .measurement = $0 { true } else { false } })
        let linked = try await play(strap(faults: []), seconds: 5, followsAdvertisements: false).events
        #expect(linked.filter { if case .measurement = $0 { true } else { false } }.count == 5)
    }

    @Test(
        "forgotten: a linked strap is not found again until paired; a broadcast-only one is, with its next advertisement"
    )
    func forgettingFollowsBlueZ() async throws {
        var linked = strap()
        linked.address = "C0:FF:EE:00:00:08"
        var broadcasting = strap()
        broadcasting.broadcastOnly = true
        let clock = ManualWallClock()
        let mock = MockSensorAdapter(
            scenario: Scenario(seed: 5, straps: [linked, broadcasting]), clock: clock, logger: Logger(label: "test"))
        let events = mock.events()
        let collector = Task {
            var received: [SensorEvent] = []
            for await event in events { received.append(event) }
            return received
        }
        let sensors = mock.sensors
        for sensor in sensors { try await mock.connect(sensor) }
        while clock.sleeperCount == 0 { await Task.yield() }
        clock.advance(by: 1)
        while clock.sleeperCount == 0 { await Task.yield() }
        // The broadcaster forgotten while the linked strap plays on: found again in the next second.
        try await mock.forget(sensors[1])
        clock.advance(by: 1)
        while clock.sleeperCount == 0 { await Task.yield() }
        try await mock.forget(sensors[0])
        #expect(await mock.knownDevices().map(\.identity) == [sensors[1]])
        await #expect(throws: SensorAdapterError.unknownSensor(sensors[0])) { try await mock.connect(sensors[0]) }
        try await mock.connect(sensors[1])
        await mock.shutdown()
        let received = await collector.value
        // Found by an advertisement (its services), not only by being followed (none).
        let advertised = received.compactMap { event -> SensorIdentity? in
            guard case .discovered(let found) = event, !found.services.isEmpty else { return nil }
            return found.identity
        }
        #expect(advertised == [sensors[1]], "\(received)")
    }
}
