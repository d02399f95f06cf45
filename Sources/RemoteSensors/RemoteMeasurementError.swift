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
        }
    }
}
