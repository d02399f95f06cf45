import ServiceLifecycle

/// The sensor manager as a service: it follows the adapter for the daemon's life and is the
/// last to stop (sessions end while their straps still stream).
struct SensorService: Service {
    let sensors: SensorManager
    /// Whether the adapter's own straps (paired, simulated) are kept connected too.
    let offersKnown: Bool
    /// Signalled once the sensors are followed and the first connections asked for.
    let ready: ReadinessSignal
    /// Starts the adapter's own traffic once the manager listens (``AdapterAssembly/start``).
    var startAdapter: @Sendable () async throws(DaemonError) -> Void = {}

    func run() async throws {
        try await sensors.run(offersKnown: offersKnown, ready: ready, startAdapter: startAdapter)
    }
}
