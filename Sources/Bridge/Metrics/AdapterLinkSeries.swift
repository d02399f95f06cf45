import CoreMetrics
import Sensors
import Synchronization

/// The `hrbridge_adapter_links` series. A hub's adapters are its gateways, named by whoever
/// publishes: at most ``maximum`` series (the adapters holding most links), and a gateway's
/// series goes when it does, so made-up node names cannot grow `/metrics` without bound.
final class AdapterLinkSeries: Sendable {
    /// The series the daemon's scrapes keep.
    static let shared = AdapterLinkSeries()

    /// Series at most.
    let maximum: Int
    /// Where the gauges go (nil: the bootstrapped metrics system, read at each record).
    private let factory: (any MetricsFactory)?
    /// The adapters with a series now.
    private let current = Mutex<Set<String>>([])

    init(maximum: Int = 64, factory: (any MetricsFactory)? = nil) {
        self.maximum = maximum
        self.factory = factory
    }

    /// Records each shown adapter's links and removes the series of adapters no longer shown.
    func record(_ adapters: [AdapterStatus]) {
        let factory = factory ?? MetricsSystem.factory
        let shown = adapters.sorted { ($0.linksInUse, $1.name) > ($1.linksInUse, $0.name) }.prefix(maximum)
        for adapter in shown {
            Gauge(label: "hrbridge_adapter_links", dimensions: [("adapter", adapter.name)], factory: factory)
                .record(adapter.linksInUse)
        }
        let names = Set(shown.map(\.name))
        let gone = current.withLock { series in
            defer { series = names }
            return series.subtracting(names)
        }
        for name in gone {
            Gauge(label: "hrbridge_adapter_links", dimensions: [("adapter", name)], factory: factory).destroy()
        }
    }
}
