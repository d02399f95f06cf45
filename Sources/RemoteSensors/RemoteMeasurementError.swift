public import FoundationEssentials

/// Why a gateway's measurement message was refused (the envelope; the value inside goes through
/// the GATT decoder and its own errors).
public enum RemoteMeasurementError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooShort(Int)
    case unknownVersion(UInt8)
    case unknownFlags(UInt8)
    case valueTooLong(Int)
    case timeOutOfRange(Int64)
    case unknownCharacteristic(UInt16)
    /// The topic names no sensor address (`hrbridge/<node>/sensor/<12 hex digits>/measurement`).
    case badTopic(String)
    /// A backfill batch whose frames do not add up to its length, or holds more than 512 frames.
    case badBatch(Int)
    /// A frame dated this many seconds ahead of the hub's clock, beyond the skew allowed: a
    /// gateway's clock (or a forger) must not date a strap's frames into the future.
    case aheadOfHub(TimeInterval)
    /// A live frame dated this many seconds behind the hub's clock, beyond the skew allowed: it
    /// is no longer live (a late one comes again as backfill, into the gap the hub saw).
    case behindHub(TimeInterval)
    /// The strap belongs to another gateway (bound by configuration, or streaming through it).
    case foreignNode(owner: String)
    /// A live frame no later than the strap's last, in sequence and time: a replay.
    case replayed(UInt32)
    /// A backfill frame outside every gap the hub saw in the strap's live stream.
    case outsideGap
    /// A backfill frame carrying more RR intervals than a frame holds, or one outside 0.2–3 s.
    case implausibleRR
    /// A backfill frame whose value the GATT decoder refuses.
    case badValue
    /// The gateway sent more backfill frames in the last minute than its budget allows.
    case overBudget
    /// A message without the tag its gateway's key requires, or with a wrong one.
    case badSignature
    /// A signed message of a gateway's boot older than one the hub has heard from it since: sent
    /// before the gateway restarted, and sent again (its sequence numbers started over).
    case staleBoot(UInt64)
    /// A signed measurement without its gateway's boot (nil: a gateway older than the hub), or
    /// with one out of range.
    case badBoot(UInt64?)
    /// A signed `offline` no later than one its gateway said before in the same boot (a Will is
    /// signed when the gateway starts), or, for a strap, dated before the strap's last frame.
    case replayedOffline

    public var description: String {
        switch self {
        case .tooShort(let count): "\(count) bytes: shorter than the 16-byte header"
        case .unknownVersion(let version): "envelope version \(version); this hub reads version 1"
        case .unknownFlags(let flags): "unknown flags 0x\(String(flags, radix: 16))"
        case .valueTooLong(let count): "a \(count)-byte value; a GATT value holds at most 512"
        case .timeOutOfRange(let milliseconds): "time \(milliseconds) ms since 1970 is no clock reading"
        case .unknownCharacteristic(let uuid): "characteristic 0x\(String(uuid, radix: 16)) is not forwarded"
        case .badTopic(let topic): "topic '\(topic.prefix(120))' names no sensor"
        case .badBatch(let count): "a \(count)-byte backfill batch that is not whole frames (at most 512)"
        case .aheadOfHub(let seconds):
            "dated \((seconds * 10).rounded() / 10) s ahead of the hub's clock (max_clock_skew allows less)"
        case .behindHub(let seconds):
            "dated \((seconds * 10).rounded() / 10) s behind the hub's clock: not live (max_clock_skew allows less)"
        case .foreignNode(let owner): "the strap belongs to gateway \(owner)"
        case .replayed(let sequence): "frame \(sequence) is no later than the strap's last: a replay"
        case .outsideGap: "a backfill frame outside every gap the hub saw in the strap's stream"
        case .implausibleRR: "a backfill frame with more than 32 RR intervals, or one outside 0.2–3 s"
        case .badValue: "a backfill frame whose value the GATT decoder refuses"
        case .overBudget: "more backfill frames than the gateway's budget per minute"
        case .badSignature: "no valid tag from the gateway's key"
        case .staleBoot(let boot):
            "boot \(boot) is older than one the gateway sent since: a message from before it restarted, sent again"
        case .badBoot(nil): "signed without the gateway's boot: a gateway older than this hub (upgrade it)"
        case .badBoot(let boot?): "boot \(boot) is out of range (1 to \(RemoteMeasurement.maximumBoot))"
        case .replayedOffline:
            "an offline no later than one the gateway said before, or than the strap's last frame: a replay"
        }
    }

    /// A label value from a fixed set.
    public var metricName: String {
        switch self {
        case .tooShort: "too_short"
        case .unknownVersion: "unknown_version"
        case .unknownFlags: "unknown_flags"
        case .valueTooLong: "value_too_long"
        case .timeOutOfRange: "time_out_of_range"
        case .unknownCharacteristic: "unknown_characteristic"
        case .badTopic: "bad_topic"
        case .badBatch: "bad_batch"
        case .aheadOfHub: "ahead_of_hub"
        case .behindHub: "behind_hub"
        case .foreignNode: "foreign_node"
        case .replayed: "replayed"
        case .outsideGap: "outside_gap"
        case .implausibleRR: "implausible_rr"
        case .badValue: "bad_value"
        case .overBudget: "over_budget"
        case .badSignature: "bad_signature"
        case .staleBoot: "stale_boot"
        case .badBoot: "bad_boot"
        case .replayedOffline: "replayed"
        }
    }
}
