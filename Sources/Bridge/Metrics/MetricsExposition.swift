/// Renders the process's metrics as `GET /metrics` serves them (the Prometheus text format).
///
/// The library modules record through swift-metrics only; the daemon command supplies the backend
/// (swift-prometheus) and this view of it.
public protocol MetricsExposition: Sendable {
    /// Every metric, in the exposition format.
    func render() -> String
}
