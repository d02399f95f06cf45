public import Foundation

/// A gateway's word on its status topic (`hrbridge/<node>/status`, retained: `online`, or
/// `offline` — its Will, or its farewell) or on a strap's availability
/// (`hrbridge/<node>/sensor/<id>/availability`), as Home Assistant and hubs read it.
///
/// A gateway without a key publishes the word alone. One with a key follows it, a space before
/// each, with its boot (``GatewayBoot``), the time it signed (milliseconds since 1970 on its
/// clock, both decimal) and the tag (64 lowercase hexadecimal digits: HMAC-SHA256 with its key
/// over the topic, a zero byte and the text before the tag's space; see ``EnvelopeSigner``):
/// `offline 1767225600000 1767225600123 3fa4…`. Home Assistant reads the first word (the
/// discovery configs' `value_template` says so); a hub holding keys acts on an `offline` only with
/// a valid tag, of the gateway's latest boot.
public struct GatewayStatus: Hashable, Sendable {
    /// What a status says.
    public enum Word: String, Hashable, Sendable {
        case online
        case offline
    }

    public var word: Word
    /// The boot of the gateway that signed it (nil: unsigned), 1 to ``RemoteMeasurement/maximumBoot``.
    public var boot: UInt64?
    /// When its gateway signed it, on its clock (nil: unsigned): 1970 to 2100.
    public var sent: Date?
    /// The tag, ``EnvelopeSigner/tagBytes`` long (nil: unsigned).
    var tag: [UInt8]?

    /// The longest status read: the word, two 13-digit numbers and a tag take 100 bytes.
    public static let maximumBytes = 128
    /// The most digits of a number in a status (2100 in milliseconds has 13).
    static let maximumDigits = 13

    /// An unsigned status.
    public init(word: Word) {
        self.word = word
    }

    /// Reads a payload: the word alone, or the word, boot, time and tag; nil for anything else
    /// (an empty payload, which clears a retained one, included). The tag is not checked here.
    public init?(payload: [UInt8]) {
        guard payload.count <= Self.maximumBytes else { return nil }
        let fields = payload.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard let first = fields.first, let word = Word(rawValue: String(decoding: first, as: UTF8.self)) else {
            return nil
        }
        self.word = word
        if fields.count == 1 { return }
        guard fields.count == 4, let boot = Self.decimal(fields[1]), (1...RemoteMeasurement.maximumBoot).contains(boot),
            let milliseconds = Self.decimal(fields[2]), milliseconds <= RemoteMeasurement.maximumBoot,
            let tag = Self.bytes(hex: fields[3])
        else { return nil }
        self.boot = boot
        sent = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        self.tag = tag
    }

    /// Whether a payload's first word is `offline` (signed or not, well formed or not): what a
    /// hub holding keys refuses unless it verifies.
    public static func saysOffline(_ payload: [UInt8]) -> Bool {
        let word = Array(Word.offline.rawValue.utf8)
        return payload.starts(with: word) && (payload.count == word.count || payload[word.count] == UInt8(ascii: " "))
    }

    /// `date` in milliseconds since 1970, within 0 to 2100's.
    static func milliseconds(_ date: Date) -> UInt64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite, value > 0 else { return 0 }
        return UInt64(min(value, Double(RemoteMeasurement.maximumBoot)))
    }

    /// 1 to ``maximumDigits`` decimal digits, nothing else (no sign, no space).
    static func decimal(_ digits: ArraySlice<UInt8>) -> UInt64? {
        guard (1...maximumDigits).contains(digits.count) else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + UInt64(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// The bytes of exactly ``EnvelopeSigner/tagBytes`` pairs of lowercase hexadecimal digits.
    static func bytes(hex: ArraySlice<UInt8>) -> [UInt8]? {
        guard hex.count == 2 * EnvelopeSigner.tagBytes else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(EnvelopeSigner.tagBytes)
        var high: UInt8?
        for character in hex {
            let nibble: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    /// `bytes` as lowercase hexadecimal digits (ASCII).
    static func hex(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }
}
