import Logging
import SensorSimulator
import Sensors

/// The mock adapter: the scenario file (or the default scenario) on an accelerated clock.
struct SimulatorAdapterFactory: AdapterFactory {
    let scenario: String?
    let seed: UInt64?
    let speed: Double

    func make(_ configuration: BridgeConfiguration, logger: Logger) async throws(DaemonError) -> AdapterAssembly {
        let clock = AcceleratedWallClock(speed: speed)
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
