public import Foundation

/// A hub asking a gateway to send one strap's frames of a stretch again, on
/// `hrbridge/<node>/cmd/replay` (QoS 1): the stretch is a gap the hub saw that its gateway cannot
/// know of (the hub was off the broker, or frames were lost between them). The gateway answers
/// with `backfill` batches from its journal, which the hub stores only into that gap.
///
/// The payload is text, `<address> <from> <to>` (milliseconds since 1970, the gateway's time, as
/// the frames carry it), and with the gateway's key ` <tag>`: HMAC-SHA256 over the topic, a zero
/// byte and the text, in lowercase hexadecimal, as a signed status is.
public struct ReplayRequest: Hashable, Sendable {
    /// The strap.
    public var address: String
    /// The stretch, in the gateway's time: frames dated strictly inside it are sent.
    public var from: Date
    public var to: Date

    /// Where a hub asks gateway `node`.
    public static func topic(node: String) -> String { "hrbridge/\(node)/cmd/replay" }

    /// The longest stretch asked for: a longer gap is asked for its last 10 minutes (a gateway's
    /// backfill budget at the hub, 30,000 frames a minute by default, holds 10 minutes of 12 straps).
    public static let maximumSpan: TimeInterval = 600
    /// The longest payload read: the address, two 13-digit numbers and a tag take 111 bytes.
    public static let maximumBytes = 128

    /// The stretch `from`–`to` of `address`, at most ``maximumSpan`` long (its end kept).
    public init(address: String, from: Date, to: Date) {
        self.address = address
        self.from = max(from, to.addingTimeInterval(-Self.maximumSpan))
        self.to = to
    }

    /// The text before the tag.
    private var text: [UInt8] {
        Array(
            "\(address) \(GatewayStatus.milliseconds(from)) \(GatewayStatus.milliseconds(to))".utf8)
    }

    /// The payload on `topic`: signed with `signer` when there is one.
    public func payload(topic: String, signer: EnvelopeSigner?) -> [UInt8] {
        let text = text
        guard let signer else { return text }
        return text + [UInt8(ascii: " ")] + GatewayStatus.hex(signer.tag(topic: topic, payload: text))
    }

    /// Reads a payload on `topic`. With `signer` (the gateway's key), only one whose tag is valid;
    /// without, a tag is cut off unchecked. Nil for anything malformed: not an address, times not
    /// numbers, an empty or backward stretch, or one longer than ``maximumSpan``.
    public init?(payload: [UInt8], topic: String, signer: EnvelopeSigner?) {
        guard payload.count <= Self.maximumBytes else { return nil }
        let fields = payload.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard fields.count == 3 || fields.count == 4, JournalRecord.isAddress(fields[0]),
            let from = GatewayStatus.decimal(fields[1]), let to = GatewayStatus.decimal(fields[2]),
            // A millisecond more: each end is rounded on its own.
            from < to, Double(to - from) <= Self.maximumSpan * 1000 + 1
        else { return nil }
        if let signer {
            guard fields.count == 4, let tag = GatewayStatus.bytes(hex: fields[3]),
                let split = payload.lastIndex(of: UInt8(ascii: " ")),
                signer.isValid(tag: tag[...], topic: topic, payload: payload[..<split])
            else { return nil }
        } else if fields.count == 4, GatewayStatus.bytes(hex: fields[3]) == nil {
            return nil
        }
        address = String(decoding: fields[0], as: UTF8.self)
        self.from = Date(timeIntervalSince1970: Double(from) / 1000)
        self.to = Date(timeIntervalSince1970: Double(to) / 1000)
    }

    /// `stretches` sorted by start, overlapping ones joined; each excludes its ends, so two that
    /// only touch stay apart (the frame between them was heard).
    public static func merged(_ stretches: [(from: Date, to: Date)]) -> [(from: Date, to: Date)] {
        var joined: [(from: Date, to: Date)] = []
        for stretch in stretches.sorted(by: { $0.from < $1.from }) {
            if let last = joined.last, stretch.from < last.to {
                joined[joined.count - 1].to = max(last.to, stretch.to)
            } else {
                joined.append(stretch)
            }
        }
        return joined
    }

    /// Whether `time` falls strictly inside one of `merged`'s stretches (a binary search).
    public static func contains(_ merged: [(from: Date, to: Date)], _ time: Date) -> Bool {
        var low = 0
        var high = merged.count
        while low < high {
            let middle = (low + high) / 2
            if merged[middle].from < time { low = middle + 1 } else { high = middle }
        }
        return low > 0 && time < merged[low - 1].to
    }
}
