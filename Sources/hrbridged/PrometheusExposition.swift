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
        MetricsSystem.bootstrap(DescribedMetricsFactory(base: factory))
        return PrometheusExposition(registry: registry)
    }
}

/// swift-prometheus's factory, except that each family is registered with its `# HELP` text from
/// ``MetricsCatalog`` (swift-prometheus's own registers every swift-metrics metric without one).
struct DescribedMetricsFactory: MetricsFactory {
    /// The registry, the timers' buckets and the defaults; it also unregisters.
    let base: PrometheusMetricsFactory

    /// The name as it is, and its help text ("" for a name not in the catalog: no `# HELP` line).
    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(
            metricName: label, unitName: "", helpText: MetricsCatalog.family(named: label)?.help ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        base.registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        base.registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else { return base.registry.makeGauge(descriptor: descriptor(label), labels: dimensions) }
        return base.registry.makeValueHistogram(
            descriptor: descriptor(label), labels: dimensions,
            buckets: base.valueHistogramBuckets[label] ?? base.defaultValueHistogramBuckets)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        base.registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        base.registry.makeDurationHistogram(
            descriptor: descriptor(label), labels: dimensions,
            buckets: base.durationHistogramBuckets[label] ?? base.defaultDurationHistogramBuckets)
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        base.destroyFloatingPointCounter(handler)
    }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
