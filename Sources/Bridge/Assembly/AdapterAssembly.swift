import BridgeOut
import DBus
import Sensors

/// What one adapter kind brings to the daemon: the adapter, the clock its time runs on, and
/// what the rest of the assembly needs from it.
struct AdapterAssembly {
    var adapter: any SensorAdapter
    var clock: any WallClock
    /// Straps to keep connected besides the configured ones: the simulator's when none is
    /// configured; on BlueZ, the user's own (paired or trusted heart-rate straps).
    var offersKnown: Bool
    /// The system bus, when the adapter uses it (the peripheral and the watchdog share it).
    var dbus: DBusConnection?
    /// Where `[peripheral]` goes, when it was decided with the straps' adapters.
    var placement: PeripheralPlacement?
    /// BlueZ's adapters when the assembly asked.
    var availableAdapters: [String] = []
    /// What starts the adapter's own traffic, run once the sensor manager listens to its events
    /// (a hub's broker connection: straps heard before anyone listened would be lost).
    var start: @Sendable () async throws(DaemonError) -> Void = {}
    /// What ends the adapter when the sensors stop, last of all: notifications released, the
    /// broker left cleanly, the simulator stopped.
    var stop: @Sendable () async -> Void = {}
}
