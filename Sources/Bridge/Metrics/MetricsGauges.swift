import Metrics
import Sensors
import Synchronization
import Wire
import Workouts

/// The gauges read at scrape time rather than counted as they change: sessions by state, live
/// subscribers, adapters and the links in use on each.
enum MetricsGauges {
    static func refresh(_ core: BridgeCore) async {
        var byState: [String: Int] = ["running": 0, "paused": 0]
        for session in await core.sessions.active {
            byState[await session.state.rawValue, default: 0] += 1
        }
        for (state, count) in byState {
            Gauge(label: "hrbridge_sessions", dimensions: [("state", state)]).record(count)
        }
        Gauge(label: "hrbridge_live_subscribers").record(core.hub.subscriberCount)
        Gauge(label: "hrbridge_sensors_streaming").record(await core.sensors.readyCount)
        let adapters = await core.sensors.adapter.adapterStatuses()
        Gauge(label: "hrbridge_adapters").record(adapters.count)
        AdapterLinkSeries.shared.record(adapters)
        if let peripheral = await core.outputs.peripheral?.snapshot() { record(peripheral) }
    }

    /// The peripheral's counters as last recorded, so each scrape adds what happened since.
    private static let peripheralCounted = Mutex<[String: Int]>([:])

    static func record(_ peripheral: PeripheralJSON) {
        let adapter = [("adapter", peripheral.adapter)]
        Gauge(label: "hrbridge_peripheral_advertising", dimensions: adapter).record(peripheral.advertising ? 1 : 0)
        Gauge(label: "hrbridge_peripheral_centrals", dimensions: adapter).record(peripheral.centrals)
        Gauge(label: "hrbridge_peripheral_subscribed", dimensions: adapter).record(peripheral.notifying ? 1 : 0)
        // Labels written out: the metrics lint reads them from the sources.
        let sent = Counter(label: "hrbridge_peripheral_frames_sent_total", dimensions: adapter)
        let unsubscribed = Counter(label: "hrbridge_peripheral_frames_unsubscribed_total", dimensions: adapter)
        let refused = Counter(label: "hrbridge_peripheral_writes_refused_total", dimensions: adapter)
        for (counter, key, total) in [
            (sent, "sent", peripheral.framesSent), (unsubscribed, "unsubscribed", peripheral.framesDropped),
            (refused, "refused", peripheral.refusedWrites),
        ] {
            let key = key + "|" + peripheral.adapter
            let since = peripheralCounted.withLock { counted in
                defer { counted[key] = max(counted[key] ?? 0, total) }
                return max(total - (counted[key] ?? 0), 0)
            }
            // Incremented even by 0, so the family is there from the first scrape.
            counter.increment(by: since)
        }
    }
}
