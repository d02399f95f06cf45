import Foundation
import Testing
import Wire

@testable import RemoteSensors

@Suite("The record of gateways that switched to their next key")
struct KeySwitchRecordTests {
    let fingerprint = String(repeating: "ab", count: 32)

    @Test("lines of a node and a fingerprint, sorted by node; anything else is skipped")
    func text() {
        let record = KeySwitchRecord(fingerprints: ["room-2": fingerprint, "room-1": String(repeating: "0", count: 64)])
        #expect(record.text == "room-1 \(String(repeating: "0", count: 64))\nroom-2 \(fingerprint)\n")
        #expect(KeySwitchRecord(text: record.text) == record)
        for line in [
            "room-1", "room-1 \(fingerprint) extra", "room.1 \(fingerprint)",
            "\(String(repeating: "r", count: 65)) \(fingerprint)",
            "room-1 \(fingerprint.uppercased())", "room-1 \(fingerprint.dropLast())", "room-1 \(fingerprint)0",
            "room-1 \(fingerprint.dropLast())g", "",
        ] {
            #expect(
                KeySwitchRecord(text: line + "\nroom-9 \(fingerprint)\n").fingerprints == ["room-9": fingerprint],
                "\(line)")
        }
    }

    @Test(
        "written whole into a directory made for it, readable by its owner only; read back; none or an unreadable one is empty"
    )
    func file() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switches-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state/gateway-key-switches").path
        #expect(try KeySwitchRecord.read(from: path) == KeySwitchRecord(), "none yet")
        let record = KeySwitchRecord(fingerprints: ["room-1": fingerprint])
        try record.write(to: path)
        #expect(try KeySwitchRecord.read(from: path) == record)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try KeySwitchRecord().write(to: path)
        #expect(try KeySwitchRecord.read(from: path) == KeySwitchRecord())
        // There but not readable as a record: said, not taken for none.
        #expect(throws: BoundedFile.ReadError.notRegular) { try KeySwitchRecord.read(from: directory.path) }
        try Data(count: KeySwitchRecord.maximumBytes + 1).write(to: URL(fileURLWithPath: path))
        #expect(throws: BoundedFile.ReadError.larger(than: KeySwitchRecord.maximumBytes)) {
            try KeySwitchRecord.read(from: path)
        }
    }

    @Test("kept: only the lines whose gateway still has that next key")
    func kept() {
        let other = String(repeating: "cd", count: 32)
        let record = KeySwitchRecord(fingerprints: [
            "room-1": fingerprint, "room-2": fingerprint, "room-3": fingerprint,
        ])
        #expect(
            record.kept(nextKeys: ["room-1": fingerprint, "room-2": other, "room-4": fingerprint])
                == KeySwitchRecord(fingerprints: ["room-1": fingerprint]))
        #expect(record.kept(nextKeys: [:]) == KeySwitchRecord())
    }

    @Test("a key's fingerprint names it: the same key gives the same one, another key another; 64 hex digits")
    func fingerprints() throws {
        let one = try #require(EnvelopeSigner(key: Array(repeating: 0x31, count: 32)))
        let same = try #require(EnvelopeSigner(key: Array(repeating: 0x31, count: 32)))
        let other = try #require(EnvelopeSigner(key: Array(repeating: 0x32, count: 32)))
        #expect(one.fingerprint == same.fingerprint && one.fingerprint != other.fingerprint)
        #expect(KeySwitchRecord(text: "room-1 \(one.fingerprint)").fingerprints == ["room-1": one.fingerprint])
    }
}
