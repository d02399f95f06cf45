import ServiceLifecycle

/// The session manager as a service: once the sensors are followed it continues the sessions a
/// crash interrupted; it publishes the sessions' figures in rounds; on graceful shutdown it ends
/// every session, saved.
struct SessionService: Service {
    let sessions: SessionManager
    /// Waited for before recovering: a recovered session binds its sensors.
    let sensorsReady: ReadinessSignal
    /// Signalled once interrupted sessions run again.
    let ready: ReadinessSignal

    func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await sessions.figures.run() }
            await sensorsReady.signalled()
            await sessions.recover()
            ready.signal()
            try? await gracefulShutdown()
            await sessions.stopAll()
            group.cancelAll()
        }
    }
}
