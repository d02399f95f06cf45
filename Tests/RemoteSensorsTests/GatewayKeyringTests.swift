import Testing

@testable import RemoteSensors

@Suite("A gateway's keys at a hub while its key is rotated")
struct GatewayKeyringTests {
    let topic = "hrbridge/room-1/sensor/c0ffee000001/measurement"
    let payload: [UInt8] = [0x00, 0x01, 0x02, 0x03]

    enum Signer: CustomStringConvertible {
        case old, new, stranger
        var description: String {
            switch self {
            case .old: "old"
            case .new: "new"
            case .stranger: "stranger"
            }
        }
    }

    func key(_ signer: Signer) -> EnvelopeSigner {
        let byte: UInt8 =
            switch signer {
            case .old: 0x31
            case .new: 0x32
            case .stranger: 0x33
            }
        return EnvelopeSigner(key: Array(repeating: byte, count: 32))!
    }

    @Test(
        "messages tagged by a sequence of keys: what each verifies as, and which key signs the hub's requests after each",
        arguments: [
            // No rotation: the one key, and nothing else.
            (false, [Signer.old, .new, .stranger, .old], [GatewayKeyring.Match?.some(.current), nil, nil, .current]),
            // Both read until the next key is first used; then the old one is refused.
            (true, [.old, .old, .new, .old, .new], [.current, .current, .switchedToNext, nil, .next]),
            // A stranger's tag switches nothing.
            (true, [.stranger, .old], [nil, .current]),
            // The next key first: switched at once.
            (true, [.new, .old, .new], [.switchedToNext, nil, .next]),
        ])
    func rotation(withNext: Bool, tags: [Signer], expected: [GatewayKeyring.Match?]) {
        var keyring = GatewayKeyring(current: key(.old), next: withNext ? key(.new) : nil)
        #expect(keyring.signer.tag(topic: topic, payload: payload) == key(.old).tag(topic: topic, payload: payload))
        var switched = false
        for (signer, expectation) in zip(tags, expected) {
            let tag = key(signer).tag(topic: topic, payload: payload)
            let result = keyring.verify { key in
                key.isValid(tag: tag[...], topic: topic, payload: payload[...])
                    ? key.tag(topic: topic, payload: []) : nil
            }
            #expect(result?.match == expectation, "tagged by \(signer)")
            #expect(
                result == nil || result?.value == key(signer).tag(topic: topic, payload: []),
                "the value read with the key that verified")
            if expectation == .switchedToNext { switched = true }
            #expect(keyring.switched == switched)
            let signs = keyring.signer.tag(topic: topic, payload: payload)
            #expect(signs == key(switched ? .new : .old).tag(topic: topic, payload: payload), "after \(signer)")
        }
    }

    @Test("a keyring started as switched reads only the next key; without a next key there is nothing to switch to")
    func startedSwitched() {
        let tag = { (signer: Signer) in key(signer).tag(topic: topic, payload: payload) }
        func read(_ keyring: inout GatewayKeyring, _ signer: Signer) -> GatewayKeyring.Match? {
            let tagged = tag(signer)
            return keyring.verify { key in key.isValid(tag: tagged[...], topic: topic, payload: payload[...]) ? 1 : nil
            }?.match
        }
        var switched = GatewayKeyring(current: key(.old), next: key(.new), switched: true)
        #expect(switched.switchedFingerprint == key(.new).fingerprint)
        #expect(read(&switched, .old) == nil)
        #expect(read(&switched, .new) == .next)
        var alone = GatewayKeyring(current: key(.old), switched: true)
        #expect(alone.switched == false && alone.switchedFingerprint == nil)
        #expect(read(&alone, .old) == .current)
    }
}
