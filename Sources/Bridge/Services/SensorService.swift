import ServiceLifecycle

/// The sensor manager and its adapter as a service: it starts the adapter's own traffic once the
/// manager listens, follows it for the daemon's life, is the last to stop (sessions end while
/// their straps still stream) and then ends the adapter.
struct SensorService: Service {
    let sensors: SensorManager
    /// Whether the adapter's own straps (paired, simulated) are kept connected too.
    let offersKnown: Bool
    /// Signalled once the sensors are followed and the first connections asked for.
    let ready: ReadinessSignal
    /// Starts the adapter's own traffic once the manager listens (``AdapterAssembly/start``).
    let startAdapter: @Sendable () async throws(DaemonError) -> Void
    /// Ends the adapter (``AdapterAssembly/stop``).
    let stopAdapter: @Sendable () async -> Void

    /// The service of `sensors` on `assembly`'s adapter.
    init(sensors: SensorManager, assembly: AdapterAssembly, ready: ReadinessSignal) {
        self.sensors = sensors
        offersKnown = assembly.offersKnown
        self.ready = ready
        startAdapter = assembly.start
        stopAdapter = assembly.stop
    }

    func run() async throws {
        do {
            try await sensors.run(offersKnown: offersKnown, ready: ready, startAdapter: startAdapter)
        } catch {
            await stopAdapter()
            throw error
        }
        await stopAdapter()
    }
}
