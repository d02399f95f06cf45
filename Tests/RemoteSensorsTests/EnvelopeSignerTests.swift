import Foundation
import GATT
import Sensors
import Testing

@testable import RemoteSensors

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Gateways' signed envelopes: HMAC-SHA256 over topic and payload")
struct EnvelopeSignerTests {
    let key = Array("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".utf8)
    let topic = "hrbridge/room-1/sensor/c0ffee000001/measurement"

    func frame(_ sequence: UInt32) -> RemoteMeasurement {
        RemoteMeasurement(
            sequence: sequence, receivedAt: Date(timeIntervalSince1970: 1_800_000_000), via: .connection,
            characteristic: .heartRateMeasurement, bytes: [0x00, 120])
    }

    @Test("a key has at least 32 bytes; a key file's surrounding white space is not part of it")
    func keys() throws {
        #expect(EnvelopeSigner(key: Array(repeating: 1, count: 31)) == nil)
        #expect(EnvelopeSigner(key: Array(repeating: 1, count: 32)) != nil)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(("  " + String(decoding: key, as: UTF8.self) + "\n").utf8).write(to: URL(fileURLWithPath: path))
        let fromFile = try #require(EnvelopeSigner(keyFile: path))
        let signer = try #require(EnvelopeSigner(key: key))
        #expect(
            fromFile.tag(topic: topic, payload: [UInt8]([1, 2])) == signer.tag(topic: topic, payload: [UInt8]([1, 2])))
        try Data("short\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(EnvelopeSigner(keyFile: path) == nil)
    }

    @Test(
        "a key file is read no further than 4 KiB: one byte more, a FIFO or a device is refused at once",
        .timeLimit(.minutes(1)))
    func boundedKeyFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("room-1.key").path
        let limit = EnvelopeSigner.maximumKeyFileBytes
        // The key, then white space up to the limit: read; one byte more is refused.
        let padded = key + Array(repeating: UInt8(ascii: "\n"), count: limit - key.count)
        try Data(padded).write(to: URL(fileURLWithPath: path))
        #expect(EnvelopeSigner(keyFile: path) != nil)
        try Data(padded + [UInt8(ascii: "\n")]).write(to: URL(fileURLWithPath: path))
        #expect(EnvelopeSigner(keyFile: path) == nil)
        // A FIFO no one writes: opening it for reading would wait for a writer forever.
        let fifo = directory.appendingPathComponent("fifo.key").path
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(EnvelopeSigner(keyFile: fifo) == nil)
        // A device that never ends.
        #expect(EnvelopeSigner(keyFile: "/dev/zero") == nil)
        #expect(EnvelopeSigner(keyFile: directory.path + "/none") == nil)
    }

    @Test("a signed measurement verifies with its key and topic only; any changed byte, another topic or key fails")
    func measurements() throws {
        let signer = try #require(EnvelopeSigner(key: key))
        let signed = signer.signMeasurement(frame(7).encoded(), topic: topic)
        #expect(signed.count == frame(7).encoded().count + 32)
        #expect(signer.verifiedMeasurement(signed, topic: topic) == signed)
        #expect(try RemoteMeasurement(payload: signed) == frame(7), "a hub without keys reads it, tag cut off")
        for index in signed.indices {
            var changed = signed
            changed[index] ^= 0x01
            #expect(signer.verifiedMeasurement(changed, topic: topic) == nil, "byte \(index)")
        }
        #expect(
            signer.verifiedMeasurement(signed, topic: topic.replacingOccurrences(of: "room-1", with: "room-2")) == nil)
        let other = try #require(EnvelopeSigner(key: Array(repeating: 7, count: 32)))
        #expect(other.verifiedMeasurement(signed, topic: topic) == nil)
        #expect(signer.verifiedMeasurement(frame(7).encoded(), topic: topic) == nil, "unsigned")
        #expect(signer.verifiedMeasurement(Array(signed.prefix(40)), topic: topic) == nil, "torn")
    }

    @Test(
        "a signed measurement with its gateway's boot: the boot is read back and covered by the tag; without a tag, or out of range, it is refused"
    )
    func measurementsWithBoot() throws {
        let signer = try #require(EnvelopeSigner(key: key))
        let boot: UInt64 = 1_767_225_600_000
        let signed = signer.signMeasurement(frame(7).encoded(), topic: topic, boot: boot)
        #expect(signed.count == frame(7).encoded().count + 8 + 32)
        #expect(signed[1] & RemoteMeasurement.bootFlag != 0)
        #expect(signer.verifiedMeasurement(signed, topic: topic) == signed)
        var expected = frame(7)
        expected.boot = boot
        #expect(try RemoteMeasurement(payload: signed) == expected)
        for index in (signed.count - 40)..<(signed.count - 32) {
            var changed = signed
            changed[index] ^= 0x01
            #expect(signer.verifiedMeasurement(changed, topic: topic) == nil, "boot byte \(index)")
        }
        // A boot without a tag is no envelope of ours.
        var unsigned = frame(7).encoded()
        unsigned[1] |= RemoteMeasurement.bootFlag
        unsigned += [1, 0, 0, 0, 0, 0, 0, 0]
        #expect(throws: RemoteMeasurementError.unknownFlags(RemoteMeasurement.bootFlag)) {
            try RemoteMeasurement(payload: unsigned)
        }
        #expect(throws: RemoteMeasurementError.badBoot(0)) {
            try RemoteMeasurement(payload: signer.signMeasurement(frame(7).encoded(), topic: topic, boot: 0))
        }
        let beyond = RemoteMeasurement.maximumBoot + 1
        #expect(throws: RemoteMeasurementError.badBoot(beyond)) {
            try RemoteMeasurement(payload: signer.signMeasurement(frame(7).encoded(), topic: topic, boot: beyond))
        }
    }

    @Test(
        "a signed status: the word Home Assistant reads first, then boot, time and tag; verified with its key and topic only; anything malformed is no status"
    )
    func statuses() throws {
        let signer = try #require(EnvelopeSigner(key: key))
        let status = "hrbridge/room-1/status"
        let boot: UInt64 = 1_767_225_600_000
        let date = Date(timeIntervalSince1970: 1_767_225_601.234)
        let signed = signer.signStatus(.offline, topic: status, boot: boot, at: date)
        let text = String(decoding: signed, as: UTF8.self)
        #expect(text.hasPrefix("offline 1767225600000 1767225601234 "))
        #expect(signed.count == 100 && signed.count <= GatewayStatus.maximumBytes)
        let verified = try #require(signer.verifiedStatus(signed, topic: status))
        #expect(verified.word == .offline && verified.boot == boot && verified.sent == date)
        #expect(GatewayStatus.saysOffline(signed) && GatewayStatus.saysOffline(Array("offline".utf8)))
        #expect(!GatewayStatus.saysOffline(Array("offlineX".utf8)) && !GatewayStatus.saysOffline([]))
        #expect(signer.verifiedStatus(signed, topic: "hrbridge/room-2/status") == nil, "another topic")
        let other = try #require(EnvelopeSigner(key: Array(repeating: 7, count: 32)))
        #expect(other.verifiedStatus(signed, topic: status) == nil, "another key")
        for index in signed.indices {
            var changed = signed
            changed[index] ^= 0x01
            #expect(signer.verifiedStatus(changed, topic: status) == nil, "byte \(index)")
        }
        #expect(signer.verifiedStatus(Array("offline".utf8), topic: status) == nil, "unsigned")
        #expect(GatewayStatus(payload: Array("offline".utf8)) == GatewayStatus(word: .offline))
        #expect(GatewayStatus(payload: Array("online".utf8))?.boot == nil)
        let tag = String(repeating: "a", count: 64)
        for malformed in [
            "", "off", "offline ", "offline 1 2", "offline 0 2 \(tag)", "offline +1 2 \(tag)",
            "offline 4102444800001 2 \(tag)", "offline 1 4102444800001 \(tag)", "offline 1 2 \(tag.uppercased())",
            "offline 1 2 \(tag)a", "offline 1 2 \(tag) ", "offline  1 2 \(tag)", "maybe 1 2 \(tag)",
            "offline 00000000000001 2 \(tag)",
        ] {
            #expect(GatewayStatus(payload: Array(malformed.utf8)) == nil, "'\(malformed)'")
        }
        #expect(GatewayStatus(payload: Array("offline 1 2 \(tag)".utf8))?.boot == 1)
        #expect(GatewayStatus(payload: Array(repeating: UInt8(ascii: "x"), count: 4096)) == nil)
    }

    @Test(
        "a gateway's boot grows at every start: the start's time, raised past the last one kept; a bad file is ignored"
    )
    func boots() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("boot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state/gateway-room-1.boot").path
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        let first = GatewayBoot.next(keptAt: path, now: now)
        #expect(first.boot == 1_767_225_600_000 && first.notKept == nil, "the directory is made")
        #expect(GatewayBoot.next(keptAt: path, now: now.addingTimeInterval(5)).boot == 1_767_225_605_000)
        // The clock set back (no battery), or standing still: still later.
        #expect(GatewayBoot.next(keptAt: path, now: now).boot == 1_767_225_605_001)
        #expect(GatewayBoot.next(keptAt: path, now: Date(timeIntervalSince1970: 0)).boot == 1_767_225_605_002)
        // Set back by up to an hour: still later. Two hours behind a kept boot, a set clock is
        // believed: that boot came from a clock ahead, which hubs refuse.
        #expect(GatewayBoot.next(keptAt: path, now: now.addingTimeInterval(-3_000)).boot == 1_767_225_605_003)
        let set = now.addingTimeInterval(-7_200)
        #expect(GatewayBoot.next(keptAt: path, now: set).boot == 1_767_218_400_000)
        #expect(GatewayBoot.next(keptAt: path, now: set).boot == 1_767_218_400_001)
        // A kept boot out of range, not a number or too long: the clock alone.
        for text in ["\(RemoteMeasurement.maximumBoot)\n", "soon\n", String(repeating: "1", count: 40)] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect(GatewayBoot.next(keptAt: path, now: now).boot == 1_767_225_600_000, "\(text)")
        }
        #expect(GatewayBoot.next(keptAt: directory.appendingPathComponent("none/x").path, now: now).boot > 0)
    }

    @Test("a signed batch of the most frames verifies and decodes; a tampered or unsigned one does not verify")
    func batches() throws {
        let signer = try #require(EnvelopeSigner(key: key))
        let batchTopic = "hrbridge/room-1/sensor/c0ffee000001/backfill"
        let frames = (0..<UInt32(RemoteBackfill.maximumFrames)).map(frame)
        let batch = RemoteBackfill.encode(frames)
        let signed = signer.signBatch(batch, topic: batchTopic)
        #expect(signer.verifiedBatch(signed, topic: batchTopic) == batch)
        #expect(try RemoteBackfill.decode(signed) == frames, "a hub without keys reads it")
        var changed = signed
        changed[10] ^= 0x40
        #expect(signer.verifiedBatch(changed, topic: batchTopic) == nil)
        #expect(signer.verifiedBatch(batch, topic: batchTopic) == nil)
        #expect(signer.verifiedBatch(signed, topic: topic) == nil, "the measurement topic")
        #expect(throws: RemoteMeasurementError.badBatch(batch.count + 2 + 31)) {
            try RemoteBackfill.decode(batch + [0xFF, 0xFF] + Array(repeating: 0, count: 31))
        }
    }
}
