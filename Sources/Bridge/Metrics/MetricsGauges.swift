import Metrics
import Sensors

/// The gauges read at scrape time rather than counted as they change: sessions by state, live
/// subscribers, adapters and the links in use on each.
enum MetricsGauges {
    static func refresh(_ core: BridgeCore) async {
        var byState: [String: Int] = ["running": 0, "paused": 0]
        for session in await core.sessions.active {
            byState[await session.snapshot().state, default: 0] += 1
        }
        for (state, count) in byState {
            Gauge(label: "hrbridge_sessions", dimensions: [("state", state)]).record(count)
        }
        Gauge(label: "hrbridge_live_subscribers").record(core.hub.subscriberCount)
        Gauge(label: "hrbridge_sensors_streaming").record(await core.sensors.readyCount)
        let adapters = await core.sensors.adapter.adapterStatuses()
        Gauge(label: "hrbridge_adapters").record(adapters.count)
        for adapter in adapters {
            Gauge(label: "hrbridge_adapter_links", dimensions: [("adapter", adapter.name)]).record(adapter.linksInUse)
        }
    }
}
