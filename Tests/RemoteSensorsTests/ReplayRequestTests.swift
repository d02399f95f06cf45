import Foundation
import Testing

@testable import RemoteSensors

@Suite("A hub's replay request: its text, its tag, its bounds")
struct ReplayRequestTests {
    let topic = ReplayRequest.topic(node: "room-1")
    let from = Date(timeIntervalSince1970: 1_800_000_000.25)

    @Test(
        "round trip, unsigned and signed; a signed one reads only with its key on its topic; a hub's tag is cut off by a gateway without a key"
    )
    func roundTrip() throws {
        let request = ReplayRequest(address: "C0:FF:EE:00:00:01", from: from, to: from.addingTimeInterval(30))
        #expect(topic == "hrbridge/room-1/cmd/replay")
        let plain = request.payload(topic: topic, signer: nil)
        #expect(String(decoding: plain, as: UTF8.self) == "C0:FF:EE:00:00:01 1800000000250 1800000030250")
        #expect(ReplayRequest(payload: plain, topic: topic, signer: nil) == request)
        let key = try #require(EnvelopeSigner(key: Array(repeating: 0x31, count: 32)))
        let other = try #require(EnvelopeSigner(key: Array(repeating: 0x32, count: 32)))
        let signed = request.payload(topic: topic, signer: key)
        #expect(signed.count == plain.count + 65 && signed.count <= ReplayRequest.maximumBytes)
        #expect(ReplayRequest(payload: signed, topic: topic, signer: key) == request)
        #expect(ReplayRequest(payload: signed, topic: topic, signer: nil) == request)
        #expect(ReplayRequest(payload: signed, topic: topic, signer: other) == nil, "another key")
        #expect(
            ReplayRequest(payload: signed, topic: "hrbridge/room-2/cmd/replay", signer: key) == nil, "another topic")
        #expect(ReplayRequest(payload: plain, topic: topic, signer: key) == nil, "unsigned, to a gateway with a key")
        for index in signed.indices.dropLast(65) {
            var tampered = signed
            tampered[index] = tampered[index] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
            #expect(ReplayRequest(payload: tampered, topic: topic, signer: key) != request, "byte \(index) changed")
        }
    }

    @Test(
        "malformed requests are nothing",
        arguments: [
            "", "C0:FF:EE:00:00:01", "C0:FF:EE:00:00:01 1800000000000", "C0:FF:EE:00:00:0G 1800000000000 1800000001000",
            "C0:FF:EE:00:00:01/# 1800000000000 1800000001000", "C0:FF:EE:00:00:01 1800000001000 1800000000000",
            "C0:FF:EE:00:00:01 1800000000000 1800000000000", "C0:FF:EE:00:00:01 -1 1800000001000",
            "C0:FF:EE:00:00:01 1800000000000 1800000601000", "C0:FF:EE:00:00:01 18000000000000 18000000001000",
            "C0:FF:EE:00:00:01  1800000000000 1800000001000", "C0:FF:EE:00:00:01 1800000000000 1800000001000 zz",
            "C0:FF:EE:00:00:01 1800000000000 1800000001000 " + String(repeating: "a", count: 64) + " x",
            String(repeating: "C", count: 200),
        ])
    func malformed(_ text: String) {
        #expect(ReplayRequest(payload: Array(text.utf8), topic: topic, signer: nil) == nil)
    }

    @Test("a longer stretch is asked for its last 10 minutes")
    func clamped() {
        let request = ReplayRequest(address: "C0:FF:EE:00:00:01", from: from, to: from.addingTimeInterval(3_600))
        #expect(request.to.timeIntervalSince(request.from) == ReplayRequest.maximumSpan)
        #expect(request.to == from.addingTimeInterval(3_600))
    }

    /// A stretch asked for, what the gateway's own replay sent (seconds), and what is left.
    struct Trim: Sendable, CustomTestStringConvertible {
        var asked: [Double]
        var sent: [Double]?
        var left: [[Double]]
        var testDescription: String { "\(asked) less \(sent.map { "\($0)" } ?? "nothing") → \(left)" }
    }

    @Test(
        "what the gateway's own replay sent is taken out of a request",
        arguments: [
            Trim(asked: [10, 20], sent: nil, left: [[10, 20]]),
            Trim(asked: [10, 20], sent: [0, 5], left: [[10, 20]]),
            Trim(asked: [10, 20], sent: [25, 30], left: [[10, 20]]),
            Trim(asked: [10, 20], sent: [0, 30], left: []),
            Trim(asked: [10, 20], sent: [10, 20], left: []),
            Trim(asked: [10, 20], sent: [0, 15], left: [[15, 20]]),
            Trim(asked: [10, 20], sent: [15, 30], left: [[10, 15]]),
            Trim(asked: [10, 20], sent: [12, 14], left: [[10, 12], [14, 20]]),
        ])
    func less(_ trim: Trim) {
        func date(_ seconds: Double) -> Date { from.addingTimeInterval(seconds) }
        let result = ReplayRequest.stretch(
            (date(trim.asked[0]), date(trim.asked[1])), less: trim.sent.map { (date($0[0]), date($0[1])) })
        #expect(result.map { [$0.from, $0.to] } == trim.left.map { $0.map(date) })
    }
}
