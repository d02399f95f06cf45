/// A gateway's keys at a hub: the key it signs with and, while the key is being rotated, its next
/// one. Until the gateway's first message tagged with the next key, both are read; from then on
/// only the next one, so the old key (perhaps the leaked one) stops working as soon as the gateway
/// has moved on, before anyone removes its file.
public struct GatewayKeyring: Sendable {
    /// Which of the keys a message was tagged with.
    public enum Match: Sendable, Equatable {
        /// The gateway's key.
        case current
        /// Its next key, for the first time: the old one is refused from now on.
        case switchedToNext
        /// Its next key, once it has switched.
        case next
    }

    private let current: EnvelopeSigner
    private let upcoming: EnvelopeSigner?
    /// Whether the gateway has tagged a message with its next key.
    public private(set) var switched = false

    /// The keys of one gateway; `next` while it is being given a new key, and `switched` when it
    /// was already heard signing with it (``KeySwitchRecord``).
    public init(current: EnvelopeSigner, next: EnvelopeSigner? = nil, switched: Bool = false) {
        self.current = current
        self.upcoming = next
        self.switched = switched && next != nil
    }

    /// The next key's fingerprint once the gateway has switched to it (what ``KeySwitchRecord`` keeps).
    public var switchedFingerprint: String? { switched ? upcoming?.fingerprint : nil }

    /// The key that signs what the hub sends this gateway (its replay requests): the one it was
    /// last heard signing with.
    public var signer: EnvelopeSigner { switched ? upcoming ?? current : current }

    /// What `read` makes of a message with the key that tagged it, and which key that was; nil
    /// when no key the gateway may use verifies it. The current key is tried first (one HMAC per
    /// message in the steady state), then the next; once switched, only the next.
    public mutating func verify<Value>(_ read: (EnvelopeSigner) -> Value?) -> (value: Value, match: Match)? {
        if switched, let upcoming { return read(upcoming).map { ($0, .next) } }
        if let value = read(current) { return (value, .current) }
        guard let upcoming, let value = read(upcoming) else { return nil }
        switched = true
        return (value, .switchedToNext)
    }
}
