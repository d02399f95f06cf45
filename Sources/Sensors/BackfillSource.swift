/// A capability an adapter may offer: measurements delivered late, a strap's batch at a time (a
/// gateway's journal sent again after the broker was away). They are for the store, not for the
/// live view.
public protocol BackfillSource: Sendable {
    /// A new subscription to late batches; each call gets every batch from then on.
    func backfill() -> AsyncStream<[SensorMeasurement]>
}
