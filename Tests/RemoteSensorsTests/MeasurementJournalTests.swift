import Foundation
import GATT
import RemoteSensors
import Sensors
import Testing

private func frame(_ sequence: UInt32, at seconds: Double, heartRate: UInt8 = 120) -> RemoteMeasurement {
    RemoteMeasurement(
        sequence: sequence, receivedAt: Date(timeIntervalSince1970: 1_800_000_000 + seconds), via: .connection,
        characteristic: .heartRateMeasurement, bytes: [0x00, heartRate])
}

@Suite("A gateway's measurement journal and backfill batches")
struct MeasurementJournalTests {
    private func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)/m.journal").path
    }

    @Test("frames come back by time, across a reopen; a torn last record is ignored; the file is private")
    func roundTrip() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let journal = try MeasurementJournal(path: path)
            for second in 0..<10 {
                journal.append(address: "C0:FF:EE:00:00:01", frame(UInt32(second), at: Double(second)))
            }
            journal.append(address: "C0:FF:EE:00:00:02", frame(0, at: 5))
        }
        // The process died in the middle of a record.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: [17] + Array("C0:FF:EE:00:00:01".utf8) + [22, 0, 1, 0])
        try handle.close()
        let reopened = try MeasurementJournal(path: path)
        let since = reopened.entries(since: Date(timeIntervalSince1970: 1_800_000_005))
        #expect(since.filter { $0.address == "C0:FF:EE:00:00:01" }.map(\.measurement.sequence) == [5, 6, 7, 8, 9])
        #expect(since.filter { $0.address == "C0:FF:EE:00:00:02" }.count == 1)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("the journal stays within its size: the oldest frames go first")
    func bounded() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let journal = try MeasurementJournal(path: path, maximumBytes: 8192)
        for second in 0..<2000 {
            journal.append(address: "C0:FF:EE:00:00:01", frame(UInt32(second), at: Double(second)))
        }
        let sizes = [path, path + ".old"].compactMap {
            try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int
        }
        #expect(sizes.reduce(0, +) <= 8192)
        let kept = journal.entries(since: .distantPast).map(\.measurement.sequence)
        #expect(kept.last == 1999 && kept.count > 50 && kept.first! > 0)
        #expect(kept == kept.sorted(), "oldest file first")
    }

    @Test("backfill batches: round trip; a batch that is not whole frames, or too many, is refused with its reason")
    func batches() throws {
        let frames = (0..<5).map { frame(UInt32($0), at: Double($0)) }
        #expect(try RemoteBackfill.decode(RemoteBackfill.encode(frames)) == frames)
        var torn = RemoteBackfill.encode(frames)
        torn.removeLast(3)
        #expect(throws: RemoteMeasurementError.badBatch(torn.count)) { try RemoteBackfill.decode(torn) }
        let tooMany = (0..<513).flatMap { index -> [UInt8] in
            let envelope = frame(UInt32(index), at: Double(index)).encoded()
            return [UInt8(envelope.count), 0] + envelope
        }
        #expect(throws: RemoteMeasurementError.badBatch(tooMany.count)) { try RemoteBackfill.decode(tooMany) }
        #expect(
            RemoteBackfill.encode((0..<600).map { frame(UInt32($0), at: Double($0)) }).count == 512
                * (frame(0, at: 0).encoded().count + 2))
        var badFrame = RemoteBackfill.encode([frames[0]])
        badFrame[2] = 9  // the envelope's version
        #expect(throws: RemoteMeasurementError.unknownVersion(9)) { try RemoteBackfill.decode(badFrame) }
    }
}
