import Foundation
import GATT
import Sensors
import Testing

@testable import RemoteSensors

private func frame(_ sequence: UInt32, at seconds: Double, heartRate: UInt8 = 120) -> RemoteMeasurement {
    RemoteMeasurement(
        sequence: sequence, receivedAt: Date(timeIntervalSince1970: 1_800_000_000 + seconds), via: .connection,
        characteristic: .heartRateMeasurement, bytes: [0x00, heartRate])
}

@Suite("A gateway's measurement journal and backfill batches")
struct MeasurementJournalTests {
    /// Writes frames `range` (one a second) of strap 01 into a new journal at `path`, closed after.
    private func writeJournal(at path: String, frames range: Range<Int>) throws {
        let journal = try MeasurementJournal(path: path)
        for second in range { journal.append(address: "C0:FF:EE:00:00:01", frame(UInt32(second), at: Double(second))) }
    }

    private func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

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

    @Test("a torn last record is cut off when the journal opens, so frames appended after it read back")
    func tornRecordIsCutOff() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try writeJournal(at: path, frames: 0..<5)
        let whole = try #require(FileManager.default.contents(atPath: path))
        // A crash in the middle of the sixth record: its first 20 bytes reached the disk.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: whole.prefix(20))
        try handle.close()
        let reopened = try MeasurementJournal(path: path)
        #expect(reopened.truncatedAtOpen == 20 && reopened.damagedAtOpen == 0)
        for second in 5..<8 { reopened.append(address: "C0:FF:EE:00:00:01", frame(UInt32(second), at: Double(second))) }
        #expect(reopened.entries(since: .distantPast).map(\.measurement.sequence) == Array(0..<8))
    }

    @Test("damage inside the file is skipped and counted; the records after it still read")
    func damageIsSkipped() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try writeJournal(at: path, frames: 0..<10)
        var bytes = try #require(FileManager.default.contents(atPath: path))
        let recordBytes = bytes.count / 10
        // The fourth record's heart rate flipped on disk, and the seventh's magic overwritten.
        bytes[3 * recordBytes + recordBytes - 5] ^= 0xFF
        bytes[6 * recordBytes] = 0
        try bytes.write(to: URL(fileURLWithPath: path))
        let journal = try MeasurementJournal(path: path)
        #expect(journal.damagedAtOpen == 2 && journal.truncatedAtOpen == 0)
        var replay = journal.replay(since: .distantPast)
        var sequences: [UInt32] = []
        while let entry = replay.next() { sequences.append(entry.measurement.sequence) }
        #expect(sequences == [0, 1, 2, 4, 5, 7, 8, 9])
        #expect(replay.damaged == 2)
    }

    @Test("a record whose address is no Bluetooth address is refused, written or read")
    func addressesAreChecked() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let journal = try MeasurementJournal(path: path)
            journal.append(address: "C0:FF:EE:00:00:01/#", frame(0, at: 0))
            journal.append(address: "C0:FF:EE:00:00:01", frame(1, at: 1))
        }
        // A record with a right checksum around an address that would become another topic.
        var record: [UInt8] = [17] + Array("C0:FF:EE:00:0+/#1".utf8)
        let envelope = frame(2, at: 2).encoded()
        record += [UInt8(envelope.count), 0] + envelope
        let crc = CRC32C.checksum(record)
        record = [0xA5, 0x4A] + record + [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: crc >> $0) }
        // It sits between two whole records (the first one again), so nothing is cut off.
        let first = try #require(FileManager.default.contents(atPath: path))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: record + first)
        try handle.close()
        let journal = try MeasurementJournal(path: path)
        #expect(journal.damagedAtOpen == 1 && journal.truncatedAtOpen == 0)
        journal.append(address: "C0:FF:EE:00:00:01", frame(3, at: 3))
        var replay = journal.replay(since: .distantPast)
        var sequences: [UInt32] = []
        while let entry = replay.next() { sequences.append(entry.measurement.sequence) }
        #expect(sequences == [1, 1, 3])
        #expect(replay.damaged == 1)
    }

    @Test("a journal larger than a read chunk replays whole, in order")
    func largeReplay() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let journal = try MeasurementJournal(path: path, maximumBytes: 8 << 20)
        for index in 0..<20_000 {
            journal.append(address: "C0:FF:EE:00:00:0\(index % 3)", frame(UInt32(index), at: Double(index) / 4))
        }
        journal.writePending()
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 10 * (64 << 10))
        #expect(journal.entries(since: .distantPast).map(\.measurement.sequence) == (0..<20_000).map(UInt32.init))
        #expect(journal.entries(since: Date(timeIntervalSince1970: 1_800_000_000 + 4_999.75)).count == 1)
    }

    @Test("CRC-32C: the standard check value")
    func checksum() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
    }

    @Test("the journal stays within its size: the oldest frames go first")
    func bounded() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let journal = try MeasurementJournal(path: path, maximumBytes: 8192)
        for second in 0..<2000 {
            journal.append(address: "C0:FF:EE:00:00:01", frame(UInt32(second), at: Double(second)))
            if second % 100 == 99 { journal.writePending() }
        }
        journal.writePending()
        let sizes = [path, path + ".old"].compactMap {
            try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int
        }
        #expect(sizes.reduce(0, +) <= 8192)
        let kept = journal.entries(since: .distantPast).map(\.measurement.sequence)
        #expect(kept.last == 1999 && kept.count > 50 && kept.first! > 0)
        #expect(kept == kept.sorted(), "oldest file first")
    }

    @Test("a rotation while a replay is read: the replay still reads every frame of the files it began with")
    func rotationDuringReplay() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let journal = try MeasurementJournal(path: path, maximumBytes: 8192)
        let strap = "C0:FF:EE:00:00:01"
        var second = 0
        // Until the first rotation, then a few frames into the new current file.
        while (try? FileManager.default.attributesOfItem(atPath: path + ".old")) == nil {
            journal.append(address: strap, frame(UInt32(second), at: Double(second)))
            journal.writePending()
            second += 1
        }
        for _ in 0..<5 {
            journal.append(address: strap, frame(UInt32(second), at: Double(second)))
            second += 1
        }
        let expected = journal.entries(since: .distantPast).map(\.measurement.sequence)
        var replay = journal.replay(since: .distantPast)
        var read = try [#require(replay.next()?.measurement.sequence)]
        // The current file fills and is renamed to .old while the replay is in the old one.
        let firstNew = second
        while journal.entries(since: .distantPast).first?.measurement.sequence ?? 0 < UInt32(firstNew) {
            journal.append(address: strap, frame(UInt32(second), at: Double(second)))
            second += 1
        }
        while let entry = replay.next() { read.append(entry.measurement.sequence) }
        // Frames appended to a file the replay holds can follow; the gateway's replay stops at its start time.
        #expect(read.filter { $0 < UInt32(firstNew) } == expected)
        #expect(expected.count == firstNew && expected.first == 0)
    }

    @Test("appending touches no file: frames wait in memory until written, and a replay writes them first")
    func appendsWaitInMemory() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let journal = try MeasurementJournal(path: path)
        let strap = "C0:FF:EE:00:00:01"
        for second in 0..<10 { journal.append(address: strap, frame(UInt32(second), at: Double(second))) }
        #expect(fileSize(path) == 0)
        #expect(journal.unwritten.waiting == 10)
        journal.writePending()
        let written = fileSize(path)
        #expect(written > 0 && journal.unwritten.waiting == 0)
        for second in 10..<15 { journal.append(address: strap, frame(UInt32(second), at: Double(second))) }
        #expect(fileSize(path) == written)
        // Each frame once: the ones written and the ones that waited.
        #expect(journal.entries(since: .distantPast).map(\.measurement.sequence) == Array(0..<15))
        #expect(fileSize(path) > written && journal.unwritten.waiting == 0)
    }

    @Test("a journal let go writes what waits: a reopen reads every frame")
    func waitingFramesSurviveTheEnd() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let journal = try MeasurementJournal(path: path)
            for second in 0..<3 {
                journal.append(address: "C0:FF:EE:00:00:01", frame(UInt32(second), at: Double(second)))
            }
            journal.writePending()
            for second in 3..<7 {
                journal.append(address: "C0:FF:EE:00:00:01", frame(UInt32(second), at: Double(second)))
            }
        }
        let reopened = try MeasurementJournal(path: path)
        #expect(reopened.entries(since: .distantPast).map(\.measurement.sequence) == Array(0..<7))
    }

    @Test("frames the disk refuses are counted as dropped, and writing goes on once it takes them again")
    func refusedWritesAreCounted() throws {
        let path = temporaryPath()
        let directory = (path as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = try MeasurementJournal(path: path, maximumBytes: 4096)
        let strap = "C0:FF:EE:00:00:01"
        for second in 0..<10 { journal.append(address: strap, frame(UInt32(second), at: Double(second))) }
        journal.writePending()
        // The directory goes: the open file takes writes until it fills and the next cannot be made.
        try FileManager.default.removeItem(atPath: directory)
        for second in 10..<200 { journal.append(address: strap, frame(UInt32(second), at: Double(second))) }
        journal.writePending()
        let dropped = journal.unwritten.dropped
        #expect(dropped > 0 && journal.unwritten.waiting == 0)
        for second in 200..<210 { journal.append(address: strap, frame(UInt32(second), at: Double(second))) }
        journal.writePending()
        #expect(journal.unwritten.dropped == dropped + 10, "no file: each write counts its frames")
        // Back: the next write makes a file and goes on.
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for second in 210..<215 { journal.append(address: strap, frame(UInt32(second), at: Double(second))) }
        journal.writePending()
        #expect(journal.unwritten.dropped == dropped + 10)
        #expect(journal.entries(since: .distantPast).map(\.measurement.sequence) == Array(210..<215))
    }

    @Test("frames beyond the memory limit while nothing writes: the oldest are dropped and counted")
    func pendingIsBounded() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let journal = try MeasurementJournal(path: path, pendingLimit: 1024)
        let strap = "C0:FF:EE:00:00:01"
        let recordBytes = JournalRecord.encode(
            address: Array(strap.utf8), envelope: frame(0, at: 0).encoded()
        ).count
        let fit = 1024 / recordBytes
        for second in 0..<(fit + 7) { journal.append(address: strap, frame(UInt32(second), at: Double(second))) }
        #expect(journal.unwritten.waiting == fit && journal.unwritten.dropped == 7)
        #expect(journal.entries(since: .distantPast).map(\.measurement.sequence) == Array(7..<UInt32(fit + 7)))
        #expect(journal.unwritten.dropped == 7, "a count, kept after the write")
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
