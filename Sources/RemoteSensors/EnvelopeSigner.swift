import Crypto
public import Foundation
import Wire

/// A gateway's key, and the tags it puts on what it publishes for hubs: HMAC-SHA256 over the
/// topic (which names the gateway) and the payload (whose frames carry their sequence numbers
/// and times, so a tag is never valid for another strap, gateway or frame).
///
/// A signed measurement envelope sets flag bit 1 and ends with the 32-byte tag (before it, with
/// flag bit 3, the gateway's boot); a signed backfill batch ends with the marker `FF FF` and the
/// tag (no frame is that long); a signed status is its word, the boot, the time and the tag in
/// hexadecimal, as text (``GatewayStatus``).
public struct EnvelopeSigner: Sendable {
    /// Bytes in a tag.
    public static let tagBytes = 32
    /// The fewest bytes a key holds (`openssl rand -hex 32` writes 64).
    public static let minimumKeyBytes = 32
    /// The HMAC with the key already mixed in, made once and copied per message (the key's pads
    /// are hashed once, not per frame). Never changed after init; copies are copy-on-write.
    private final class KeyBox: @unchecked Sendable {
        let keyed: HMAC<SHA256>
        init(_ bytes: [UInt8]) { keyed = HMAC<SHA256>(key: SymmetricKey(data: bytes)) }
    }
    private let box: KeyBox

    /// A signer with `key`, at least ``minimumKeyBytes`` long.
    public init?(key: [UInt8]) {
        guard key.count >= Self.minimumKeyBytes else { return nil }
        box = KeyBox(key)
    }

    /// The most bytes a key file may hold (`openssl rand -hex 32` writes 65).
    public static let maximumKeyFileBytes = 4096

    /// The key in a file: its text, without surrounding white space; nil when it is too short,
    /// too long, unreadable or no regular file.
    public init?(keyFile path: String) {
        // Read no further than the limit: a FIFO or a device named as the key must not hang
        // startup or fill memory.
        guard let data = try? BoundedFile.read(path, limit: Self.maximumKeyFileBytes, regularOnly: true) else {
            return nil
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        self.init(key: Array(text.utf8))
    }

    /// Names the key without giving it away: the tag of a fixed label under it, in hexadecimal
    /// (HMAC is a pseudorandom function: its outputs tell nothing of the key).
    public var fingerprint: String {
        String(decoding: GatewayStatus.hex(tag(topic: "hrbridge key fingerprint", payload: [])), as: UTF8.self)
    }

    /// Whether `other` holds the same key (their tags of one message agree; the key itself is
    /// not kept).
    public func hasSameKey(as other: EnvelopeSigner?) -> Bool {
        guard let other else { return false }
        return tag(topic: "", payload: []) == other.tag(topic: "", payload: [])
    }

    /// The tag of `payload` on `topic`.
    public func tag(topic: String, payload: ArraySlice<UInt8>) -> [UInt8] {
        Array(code(topic: topic, payload: payload))
    }

    /// The tag of `payload` on `topic`.
    public func tag(topic: String, payload: [UInt8]) -> [UInt8] { tag(topic: topic, payload: payload[...]) }

    /// Whether `tag` is `payload`'s on `topic` (compared in constant time).
    public func isValid(tag: ArraySlice<UInt8>, topic: String, payload: ArraySlice<UInt8>) -> Bool {
        code(topic: topic, payload: payload) == tag
    }

    private func code(topic: String, payload: ArraySlice<UInt8>) -> HashedAuthenticationCode<SHA256> {
        var hmac = box.keyed
        var topic = topic
        topic.withUTF8 { hmac.update(data: UnsafeRawBufferPointer($0)) }
        hmac.update(data: [0])
        payload.withUnsafeBytes { hmac.update(data: $0) }
        return hmac.finalize()
    }

    /// A measurement envelope, signed: flag bit 1 set, the tag appended; with `boot` (this
    /// gateway's, see ``GatewayBoot``), flag bit 3 set and the boot before the tag.
    public func signMeasurement(_ envelope: [UInt8], topic: String, boot: UInt64? = nil) -> [UInt8] {
        var signed = envelope
        signed[1] |= RemoteMeasurement.signedFlag
        if let boot {
            signed[1] |= RemoteMeasurement.bootFlag
            withUnsafeBytes(of: boot.littleEndian) { signed.append(contentsOf: $0) }
        }
        signed += tag(topic: topic, payload: signed[...])
        return signed
    }

    /// A status word on `topic` (a gateway's status or a strap's availability), signed: `<word>
    /// <boot> <time> <tag>`, the tag over the topic and the text before its space.
    public func signStatus(_ word: GatewayStatus.Word, topic: String, boot: UInt64, at date: Date) -> [UInt8] {
        let text = Array("\(word.rawValue) \(boot) \(GatewayStatus.milliseconds(date))".utf8)
        return text + [UInt8(ascii: " ")] + GatewayStatus.hex(tag(topic: topic, payload: text))
    }

    /// The status of a signed status payload on `topic` when its tag is valid (nil: unsigned,
    /// malformed, or a wrong tag).
    public func verifiedStatus(_ payload: [UInt8], topic: String) -> GatewayStatus? {
        guard let status = GatewayStatus(payload: payload), let tag = status.tag,
            let split = payload.lastIndex(of: UInt8(ascii: " ")),
            isValid(tag: tag[...], topic: topic, payload: payload[..<split])
        else { return nil }
        return status
    }

    /// A backfill batch, signed: the marker and the tag appended.
    public func signBatch(_ batch: [UInt8], topic: String) -> [UInt8] {
        var signed = batch
        signed += RemoteBackfill.tagMarker
        signed += tag(topic: topic, payload: signed[...])
        return signed
    }

    /// The envelope of a signed measurement when its tag is valid (flag and tag included).
    public func verifiedMeasurement(_ payload: [UInt8], topic: String) -> [UInt8]? {
        guard payload.count > RemoteMeasurement.headerBytes + Self.tagBytes,
            payload[1] & RemoteMeasurement.signedFlag != 0
        else { return nil }
        let split = payload.count - Self.tagBytes
        guard isValid(tag: payload[split...], topic: topic, payload: payload[..<split]) else { return nil }
        return payload
    }

    /// The batch of a signed backfill message when its tag is valid (without marker and tag).
    public func verifiedBatch(_ payload: [UInt8], topic: String) -> [UInt8]? {
        let trailer = RemoteBackfill.tagMarker.count + Self.tagBytes
        guard payload.count >= trailer else { return nil }
        let split = payload.count - Self.tagBytes
        let markerAt = split - RemoteBackfill.tagMarker.count
        guard payload[markerAt..<split].elementsEqual(RemoteBackfill.tagMarker),
            isValid(tag: payload[split...], topic: topic, payload: payload[..<split])
        else { return nil }
        return Array(payload[..<markerAt])
    }
}
