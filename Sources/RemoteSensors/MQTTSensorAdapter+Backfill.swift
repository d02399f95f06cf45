public import Sensors

/// A hub hears what gateways kept in their journals while the broker was away.
extension MQTTSensorAdapter: BackfillSource {
    public nonisolated var backfillSource: (any BackfillSource)? { self }
}
