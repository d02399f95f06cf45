import Sensors
import ServiceLifecycle

/// Stores what an adapter delivers late (a gateway's journal sent again after the broker was
/// away), for as long as the daemon runs.
struct BackfillService: Service {
    let source: any BackfillSource
    let sessions: SessionManager

    func run() async {
        for await batch in source.backfill().cancelOnGracefulShutdown() { _ = await sessions.backfill(batch) }
    }
}
