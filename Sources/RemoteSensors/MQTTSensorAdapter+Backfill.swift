public import FoundationEssentials
public import Sensors

/// A hub hears what gateways kept in their journals while the broker was away.
extension MQTTSensorAdapter: BackfillSource {
    public nonisolated var backfillSource: (any BackfillSource)? { self }

    /// What the hub missed of a recovered session's strap while it was down is asked of its
    /// gateway (``RemoteStrapTracker/Input/resumed(address:node:storedUntil:firstLive:)``).
    public func resumeRecording(_ address: String, adapter node: String, storedUntil: Date, firstLive: Date) {
        feed(.resumed(address: address, node: node, storedUntil: storedUntil, firstLive: firstLive))
    }
}
