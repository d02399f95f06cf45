import Bridge
import Metrics
import Prometheus

/// `GET /metrics` through swift-prometheus: the backend the library modules' swift-metrics
/// counters, gauges and timers record into.
struct PrometheusExposition: MetricsExposition {
    let registry: PrometheusCollectorRegistry

    func render() -> String { registry.emitToString() }

    /// Makes Prometheus the process's metrics backend (once per process: the daemon's).
    static func bootstrap() -> PrometheusExposition {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = [
            "hrbridge_reconnect_gap_seconds": [0.5, 1, 2, 5, 10, 30, 60, 300].map { .milliseconds(Int($0 * 1000)) },
            "hrbridge_notification_to_api_seconds": [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5].map {
                .microseconds(Int($0 * 1_000_000))
            },
            "hrbridge_store_write_seconds": [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1].map {
                .microseconds(Int($0 * 1_000_000))
            },
        ]
        MetricsSystem.bootstrap(factory)
        return PrometheusExposition(registry: registry)
    }
}
