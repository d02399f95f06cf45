import BusHarness
import Foundation
import GATT
import Logging
import Sensors
import Testing
import Wire

@testable import Bridge

/// An adapter whose traffic starts by itself, as a hub's broker connection does: ``start()``
/// reports a strap ready and its first frame to whoever listens at that moment.
final class SelfStartingAdapter: SensorAdapter {
    let name = "hub"
    let strap = SensorIdentity(adapter: "room-1", address: "C0:FF:EE:01:00:01", name: "Room 1 strap 1")
    private let broadcaster = EventBroadcaster<SensorEvent>()

    func start() {
        broadcaster.yield(.connectionChanged(strap, .connected))
        broadcaster.yield(.connectionChanged(strap, .ready))
        broadcaster.yield(
            .measurement(
                SensorMeasurement(
                    sensor: strap, characteristic: .heartRateMeasurement,
                    value: .heartRateMeasurement(HeartRateMeasurement(heartRate: 120)), receivedAt: Date())))
    }

    func events() -> AsyncStream<SensorEvent> { broadcaster.subscribe() }
    func events(from addresses: Set<String>) -> AsyncStream<SensorEvent> { broadcaster.subscribe() }
    func finish() { broadcaster.finish() }
    func startDiscovery(services: Set<GATTService>) throws(SensorAdapterError) {}
    func stopDiscovery() throws(SensorAdapterError) {}
    func connect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func disconnect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func pair(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func trust(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func forget(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    func knownDevices() -> [KnownDevice] { [] }
    func availability() -> AdapterAvailability { .ready }
    func adapterStatuses() -> [AdapterStatus] { [] }
    func setPriority(_ priority: Int?, for address: String) {}
    func startWaveform(_ request: WaveformRequest, for sensor: SensorIdentity) throws(SensorAdapterError) {
        throw .waveformUnavailable(sensor, request.kind, "none here")
    }
    func stopWaveform(_ kind: WaveformKind, for sensor: SensorIdentity) throws(SensorAdapterError) {}
}

@Suite("The adapter starts once the sensor manager listens")
struct AdapterStartOrderTests {
    @Test(
        "a strap an adapter reports as it starts is shown ready, not merely seen (the hub's broker connection starts after the manager subscribed)"
    )
    func startedAfterSubscribing() async throws {
        let adapter = SelfStartingAdapter()
        let hub = LiveHub()
        let manager = SensorManager(adapter: adapter, known: [], hub: hub, logger: Logger(label: "test"))
        let ready = ReadinessSignal()
        let running = Task {
            try await manager.run(ready: ready, startAdapter: { adapter.start() })
        }
        // The strap's frame reached the manager (its heart rate is shown): every event the start
        // produced before it was handled too.
        try await eventually("the strap's frame handled") {
            await manager.status(adapter.strap.address)?.heartRate == 120
        }
        #expect(await manager.status(adapter.strap.address)?.state == .ready, "ready, not merely seen")
        #expect(await manager.readyCount == 1)
        adapter.finish()
        try await running.value
    }

}
