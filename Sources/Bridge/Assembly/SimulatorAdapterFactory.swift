import Foundation
import Logging
import SensorSimulator
import Sensors
import WorkoutStore

/// The mock adapter: the scenario file (or the default scenario) on an accelerated clock that
/// starts after every sample the store holds.
struct SimulatorAdapterFactory: AdapterFactory {
    let scenario: String?
    let seed: UInt64?
    let speed: Double

    func make(
        _ configuration: BridgeConfiguration, store: WorkoutStore, logger: Logger
    ) async throws(DaemonError) -> AdapterAssembly {
        // A run faster than real time leaves samples ahead of the wall clock: the next run (a
        // restart, a recovered session) starts after them, or it would share their moments.
        let now = Date()
        let clock = AcceleratedWallClock(origin: await store.endOfSamples(after: now) ?? now, speed: speed)
        var loaded = Scenario.default
        if let scenario {
            do {
                loaded = try ScenarioParser.load(path: scenario)
            } catch {
                throw DaemonError.adapter("\(error)")
            }
        }
        let adapter = MockSensorAdapter(
            scenario: loaded, seed: seed, clock: clock, followsAdvertisements: configuration.followsAdvertisements,
            logger: logger)
        var assembly = AdapterAssembly(adapter: adapter, clock: clock, offersKnown: configuration.sensors.isEmpty)
        assembly.stop = { await adapter.shutdown() }
        return assembly
    }
}
