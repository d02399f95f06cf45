import BusHarness
import Foundation
import GATT
import Logging
import Sensors
import Testing

@testable import Bridge

@Suite("Sensor manager: a strap recording a session comes first for a link slot")
struct SensorPriorityTests {
    @Test("a session adds 100 to the configured priority; its end gives the configured one back")
    func sessionRaisesPriority() async throws {
        let adapter = RadiolessAdapter()
        var instructor = BridgeConfiguration.KnownSensor(address: "C0:FF:EE:00:00:01")
        instructor.priority = 10
        let manager = SensorManager(
            adapter: adapter, known: [instructor, BridgeConfiguration.KnownSensor(address: "C0:FF:EE:00:00:02")],
            hub: LiveHub(), logger: Logger(label: "test"))
        await manager.bind("c0:ff:ee:00:00:01", to: UUID())
        await manager.bind("C0:FF:EE:00:00:02", to: UUID())
        try await eventually("both priorities given") { adapter.givenPriorities.count == 2 }
        #expect(Set(adapter.givenPriorities) == ["C0:FF:EE:00:00:01=110", "C0:FF:EE:00:00:02=100"])
        await manager.bind("C0:FF:EE:00:00:01", to: nil)
        try await eventually("the session's end") { adapter.givenPriorities.count == 3 }
        #expect(adapter.givenPriorities.last == "C0:FF:EE:00:00:01=configured")
    }
}
