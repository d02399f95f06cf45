import BusHarness
import Foundation
import GATT
import Logging
import Sensors
import Synchronization
import Testing

@testable import Bridge

/// An adapter with no radio that records the priorities it is given.
private final class PriorityRecorder: SensorAdapter {
    let name = "test"
    let given = Mutex<[String]>([])
    func events() -> AsyncStream<SensorEvent> { AsyncStream { $0.finish() } }
    func startDiscovery(services: Set<GATTService>) throws(SensorAdapterError) {}
    func stopDiscovery() throws(SensorAdapterError) {}
    func connect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func disconnect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func pair(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func trust(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func forget(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func resetEnergyExpended(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func knownDevices() -> [KnownDevice] { [] }
    func availability() -> AdapterAvailability { .ready }
    func adapterStatuses() -> [AdapterStatus] { [] }
    func setPriority(_ priority: Int?, for address: String) {
        given.withLock { $0.append("\(address)=\(priority.map(String.init) ?? "configured")") }
    }
}

@Suite("Sensor manager: a strap recording a session comes first for a link slot")
struct SensorPriorityTests {
    @Test("a session adds 100 to the configured priority; its end gives the configured one back")
    func sessionRaisesPriority() async throws {
        let adapter = PriorityRecorder()
        var instructor = BridgeConfiguration.KnownSensor(address: "C0:FF:EE:00:00:01")
        instructor.priority = 10
        let manager = SensorManager(
            adapter: adapter, known: [instructor, BridgeConfiguration.KnownSensor(address: "C0:FF:EE:00:00:02")],
            hub: LiveHub(), logger: Logger(label: "test"))
        await manager.bind("c0:ff:ee:00:00:01", to: UUID())
        await manager.bind("C0:FF:EE:00:00:02", to: UUID())
        try await eventually("both priorities given") { adapter.given.withLock { $0.count } == 2 }
        #expect(Set(adapter.given.withLock { $0 }) == ["C0:FF:EE:00:00:01=110", "C0:FF:EE:00:00:02=100"])
        await manager.bind("C0:FF:EE:00:00:01", to: nil)
        try await eventually("the session's end") { adapter.given.withLock { $0.count } == 3 }
        #expect(adapter.given.withLock { $0.last } == "C0:FF:EE:00:00:01=configured")
    }
}
