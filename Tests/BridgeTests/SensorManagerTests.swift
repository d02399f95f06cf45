import Foundation
import GATT
import Logging
import SensorSimulator
import Sensors
import Testing

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
            await manager.handle(
                .discovered(DiscoveredSensor(identity: fake(index), rssi: -70, services: [.heartRate])))
        }
        let listed = await manager.list().map(\.address)
        #expect(listed.count == SensorManager.seenLimit + 1)
        #expect(listed.contains("C0:FF:EE:00:00:01"), "a configured sensor is never evicted")
    }
}
