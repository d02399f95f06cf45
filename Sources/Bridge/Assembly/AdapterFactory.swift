import Logging
import WorkoutStore

/// Makes the adapter of one kind (`[adapter] kind = "mock" | "bluez" | "mqtt"`).
protocol AdapterFactory: Sendable {
    /// The adapter and what comes with it; a failure is the daemon's exit status 69. `store` is
    /// the daemon's, open already (the simulator starts its clock after what it holds).
    func make(
        _ configuration: BridgeConfiguration, store: WorkoutStore, logger: Logger
    ) async throws(DaemonError) -> AdapterAssembly
}

extension BridgeConfiguration.AdapterKind {
    /// The factory of this kind.
    var factory: any AdapterFactory {
        switch self {
        case .mock(let scenario, let seed, let speed):
            SimulatorAdapterFactory(scenario: scenario, seed: seed, speed: speed)
        case .bluez(let adapters, let repairOnKeyLoss):
            BlueZAdapterFactory(adapters: adapters, repairOnKeyLoss: repairOnKeyLoss)
        case .mqtt(let settings): RemoteAdapterFactory(settings: settings)
        }
    }
}
