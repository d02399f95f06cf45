import BlueZ
import BridgeOut
import DBus
import Logging
import Sensors
import WorkoutStore

/// Straps through bluetoothd on the system bus; zero adapters (or no bluetoothd yet) is a state,
/// not a failure.
struct BlueZAdapterFactory: AdapterFactory {
    /// The adapters to hold straps on (nil: every adapter, less the peripheral's when another can).
    let adapters: [String]?
    let repairOnKeyLoss: Bool

    func make(
        _ configuration: BridgeConfiguration, store: WorkoutStore, logger: Logger
    ) async throws(DaemonError) -> AdapterAssembly {
        let clock = SystemWallClock()
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(bus: .system, logger: logger)
        } catch {
            throw DaemonError.adapter("cannot reach the system D-Bus: \(error)")
        }
        // The adapter that serves apps holds no straps when another adapter can.
        var names = adapters
        var placement: PeripheralPlacement?
        var available: [String] = []
        if let settings = configuration.peripheral {
            available = (try? await BlueZAdapter.adapterNames(on: connection)) ?? []
            placement = PeripheralPlacement.choose(
                available: available, requested: settings.adapter, strapAdapters: names ?? [])
            if names == nil, let straps = placement?.straps { names = straps }
        }
        var options = BlueZAdapter.Options()
        // The daemon comes up saying "waiting: no Bluetooth adapter"; the pool starts working
        // when one appears.
        options.waitsForAdapter = true
        options.repairsOnAuthenticationFailure = repairOnKeyLoss
        options.connectsUnknownDevices = true
        options.followsAdvertisements = configuration.followsAdvertisements
        for sensor in configuration.sensors {
            if let bound = sensor.adapter { options.bindings[sensor.address] = bound }
            if sensor.priority != 0 { options.priorities[sensor.address] = sensor.priority }
            if let type = sensor.addressType { options.addressTypes[sensor.address] = type }
        }
        do {
            let adapter = try await BlueZAdapter.open(
                adapters: names, connection: connection, options: options, clock: clock, logger: logger)
            var assembly = AdapterAssembly(
                adapter: adapter, clock: clock, offersKnown: true, dbus: connection, placement: placement,
                availableAdapters: available)
            assembly.stop = { await adapter.shutdown() }
            return assembly
        } catch {
            throw DaemonError.adapter("\(error)")
        }
    }
}
