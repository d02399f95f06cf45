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
        // Its ends are rounded to milliseconds each: whatever the fractions, a gateway reads it.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let end = from.addingTimeInterval(Double.random(in: 0..<86_400, using: &generator))
            let longest = ReplayRequest(address: "C0:FF:EE:00:00:01", from: .distantPast, to: end)
            let payload = longest.payload(topic: topic, signer: nil)
            #expect(ReplayRequest(payload: payload, topic: topic, signer: nil) != nil, "\(end.timeIntervalSince1970)")
        }
    }

    @Test(
        "stretches asked for are merged per strap and searched: a frame strictly inside one is sent, one at an end is not"
    )
    func mergedAndSearched() {
        func date(_ seconds: Double) -> Date { from.addingTimeInterval(seconds) }
        let asked: [(from: Date, to: Date)] = [
            (date(30), date(40)), (date(0), date(10)), (date(5), date(12)), (date(12), date(20)), (date(35), date(38)),
        ]
        let merged = ReplayRequest.merged(asked)
        #expect(
            merged.map { [$0.from, $0.to] } == [[date(0), date(12)], [date(12), date(20)], [date(30), date(40)]])
        let inside: [Double] = [0.001, 6, 11.999, 12.001, 19, 31, 39.5]
        let outside: [Double] = [-1, 0, 12, 20, 25, 30, 40, 41]
        #expect(inside.allSatisfy { ReplayRequest.contains(merged, date($0)) })
        #expect(!outside.contains { ReplayRequest.contains(merged, date($0)) })
        #expect(!ReplayRequest.contains([], date(1)))
    }
}
