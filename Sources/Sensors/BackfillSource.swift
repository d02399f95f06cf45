public import FoundationEssentials

/// A capability an adapter may offer: measurements delivered late, a strap's batch at a time (a
/// gateway's journal sent again after the broker was away). They are for the store, not for the
/// live view.
public protocol BackfillSource: Sendable {
    /// A new subscription to late batches; each call gets every batch from then on.
    func backfill() -> AsyncStream<[SensorMeasurement]>

    /// A session recovered after the process stopped without warning records the strap at
    /// `address` again: the store holds its frames heard through `adapter` until `storedUntil`,
    /// and the first the session recorded since came at `firstLive` (this process's times, as
    /// samples are dated). What was sent between is asked for again and comes as backfill.
    func resumeRecording(_ address: String, adapter: String, storedUntil: Date, firstLive: Date) async
}
