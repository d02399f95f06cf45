import BridgeClient
import Foundation
import GATT
import JSONSupport
import Logging
import SensorSimulator
import Sensors
import Testing
import Wire

@testable import Bridge

@Suite("Sensor manager: what it follows is bounded")
struct SensorManagerTests {
    func manager() -> SensorManager {
        let adapter = MockSensorAdapter(scenario: .default, clock: SystemWallClock(), logger: Logger(label: "test"))
        return SensorManager(
            adapter: adapter, known: [BridgeConfiguration.KnownSensor(address: "C0:FF:EE:00:00:01")], hub: LiveHub(),
            logger: Logger(label: "test"))
    }

    func fake(_ index: Int) -> SensorIdentity {
        SensorIdentity(
            adapter: "mock",
            address: String(format: "AA:BB:CC:%02X:%02X:%02X", index >> 16, (index >> 8) & 0xFF, index & 0xFF),
            name: "fake \(index)")
    }

    @Test("5,000 straps appearing and vanishing leave only the configured one")
    func appearingAndVanishing() async {
        let manager = manager()
        for index in 0..<5_000 {
            // Shares CI's two pool threads with the tests that wait (see WaitBudget).
            if index % 250 == 0 { await Task.yield() }
            await manager.handle(
                .discovered(DiscoveredSensor(identity: fake(index), rssi: -70, services: [.heartRate])))
            await manager.handle(.lost(fake(index)))
        }
        #expect(await manager.list().map(\.address) == ["C0:FF:EE:00:00:01"])
    }

    @Test("5,000 straps that stay in range: at most seenLimit followed besides the configured ones")
    func stayingInRange() async {
        let manager = manager()
        for index in 0..<5_000 {
            if index % 250 == 0 { await Task.yield() }
            await manager.handle(
                .discovered(DiscoveredSensor(identity: fake(index), rssi: -70, services: [.heartRate])))
        }
        let listed = await manager.list().map(\.address)
        #expect(listed.count == SensorManager.seenLimit + 1)
        #expect(listed.contains("C0:FF:EE:00:00:01"), "a configured sensor is never evicted")
    }

    @Test(
        "a heart-rate change alone is published at most once a second of frame time, and the last value always goes out"
    )
    func heartRateStatusIsPaced() async throws {
        let hub = LiveHub()
        let manager = SensorManager(
            adapter: MockSensorAdapter(scenario: .default, clock: SystemWallClock(), logger: Logger(label: "test")),
            known: [BridgeConfiguration.KnownSensor(address: "C0:FF:EE:00:00:01")], hub: hub,
            logger: Logger(label: "test"))
        let messages = hub.subscribe(sensor: "C0:FF:EE:00:00:01")
        let strap = SensorIdentity(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "Strap")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func frame(_ heartRate: UInt16, at seconds: Double) async {
            await manager.handle(
                .measurement(
                    SensorMeasurement(
                        sensor: strap, characteristic: .heartRateMeasurement,
                        value: .heartRateMeasurement(HeartRateMeasurement(heartRate: heartRate)),
                        receivedAt: start.addingTimeInterval(seconds))))
        }
        // 10 s at 4 Hz, a new heart rate every frame; then the last one held for 2 s.
        for index in 0..<40 { await frame(UInt16(100 + index), at: Double(index) * 0.25) }
        for index in 40..<48 { await frame(139, at: Double(index) * 0.25) }
        // A marker the manager never sends: the end of what the test published.
        hub.publish(LiveMessage(kind: .error, session: nil, sensor: "C0:FF:EE:00:00:01", json: "{}"))
        var statuses: [SensorStatus] = []
        var measurements = 0
        for await message in messages {
            if message.kind == .error { break }
            if message.kind == .measurement { measurements += 1 }
            if message.kind == .sensor {
                statuses.append(try JSONText.decode(SensorStatus.self, from: Data(message.json.utf8)))
            }
        }
        #expect(measurements == 48, "every frame's heart rate is on the stream as a measurement")
        #expect((10...12).contains(statuses.count), "about one status a second, not one a frame: \(statuses.count)")
        #expect(statuses.last?.heartRate == 139, "the last heart rate went out")
    }

    @Test(
        "a heart rate no heart beats at (65535) is not the strap's status: the last plausible one stays, the frame still goes out"
    )
    func implausibleHeartRateLeavesTheStatus() async throws {
        let manager = manager()
        let strap = SensorIdentity(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "Strap")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for (index, heartRate) in [UInt16(120), 65535, 19].enumerated() {
            await manager.handle(
                .measurement(
                    SensorMeasurement(
                        sensor: strap, characteristic: .heartRateMeasurement,
                        value: .heartRateMeasurement(HeartRateMeasurement(heartRate: heartRate)),
                        receivedAt: start.addingTimeInterval(Double(index) * 2))))
        }
        let status = try #require(await manager.list().first { $0.address == strap.address })
        #expect(status.heartRate == 120)
        #expect(status.framesDecoded == 3, "every frame was decoded and counted")
    }
}
