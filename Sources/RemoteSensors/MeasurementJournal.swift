public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A gateway's local journal of the frames it forwarded: when the broker was away (a restart, a
/// partition), the frames of that time are sent again once it is back, as `backfill` batches.
///
/// Every forwarded frame is appended (the gateway cannot know a QoS 0 message was lost until the
/// connection is seen dead), so the replay starts a margin before the outage was noticed; the hub
/// stores samples keyed by sensor and time, so a frame it already has adds nothing. The journal
/// is two files of at most `maximumBytes / 2` each (the older one is dropped when the newer one
/// fills), mode 0600, and survives a gateway restart. Each record carries a magic and a CRC-32C
/// (``JournalRecord``): a torn record is cut off when the journal opens, damage inside a file is
/// skipped and counted, and a replay reads the files a chunk at a time.
///
/// ``append(address:_:)`` touches no file: a write to a slow disk (an SD card flushing its
/// cache) can block for seconds, and frames are appended on Swift concurrency's few threads.
/// Records wait in memory, at most `pendingLimit` bytes, until ``writePending()`` (the gateway
/// calls it once a second, and at its stop, on a thread of its own) or a replay writes them.
public final class MeasurementJournal: @unchecked Sendable {
    /// One journaled frame.
    public struct Entry: Hashable, Sendable {
        /// The strap's address.
        public var address: String
        /// The frame as the gateway published it.
        public var measurement: RemoteMeasurement
    }

    /// Records appended and not written yet.
    private struct Pending {
        var records: [[UInt8]] = []
        var bytes = 0
        /// Records dropped unwritten: more than the limit waited (no write could run).
        var dropped = 0
    }

    /// The current file; the older one is `path + ".old"`.
    public let path: String
    /// Bytes on disk at most (both files).
    public let maximumBytes: Int
    /// Bytes waiting in memory at most; beyond it the oldest records are dropped, and counted.
    public let pendingLimit: Int
    /// Damaged stretches found in the current file when it was opened (skipped when read).
    public let damagedAtOpen: Int
    /// Bytes cut from the current file's end when it was opened: a record torn by a crash or a
    /// full disk, which later records must not follow.
    public let truncatedAtOpen: Int
    /// Held only briefly, by whoever appends: never across a file operation.
    private let pending = Mutex(Pending())
    /// Held by whoever writes, rotates or opens a replay, across the file operations: by threads
    /// that may block, never by an appender.
    private let fileLock = NSLock()
    private var handle: FileHandle?
    private var size: Int

    /// Opens (or creates) the journal at `path`, cutting a torn record from its end.
    public init(path: String, maximumBytes: Int = 64 << 20, pendingLimit: Int = 4 << 20) throws {
        self.path = path
        self.maximumBytes = max(maximumBytes, 4096)
        self.pendingLimit = max(pendingLimit, 1024)
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        }
        var reader = JournalReader(path: path)
        while reader.next() != nil {}
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let end = Int(try handle.seekToEnd())
        damagedAtOpen = reader.damaged
        truncatedAtOpen = end - reader.validEnd
        if reader.validEnd < end {
            try handle.truncate(atOffset: UInt64(reader.validEnd))
        }
        size = reader.validEnd
        self.handle = handle
    }

    /// Writes what still waits: a journal let go without a last ``writePending()`` keeps its frames.
    deinit {
        writePending()
        try? handle?.close()
    }

    /// Appends a frame: one record of the address and the published envelope, kept in memory
    /// until the next write.
    public func append(address: String, _ measurement: RemoteMeasurement) {
        let addressBytes = Array(address.utf8)
        guard JournalRecord.isAddress(addressBytes[...]) else { return }
        let record = JournalRecord.encode(address: addressBytes, envelope: measurement.encoded())
        pending.withLock { pending in
            pending.records.append(record)
            pending.bytes += record.count
            guard pending.bytes > pendingLimit else { return }
            var excess = 0
            while pending.bytes > pendingLimit, excess < pending.records.count {
                pending.bytes -= pending.records[excess].count
                excess += 1
            }
            pending.records.removeFirst(excess)
            pending.dropped += excess
        }
    }

    /// Records waiting in memory, and records dropped unwritten so far (beyond the memory limit,
    /// or refused by the disk).
    public var unwritten: (waiting: Int, dropped: Int) {
        pending.withLock { ($0.records.count, $0.dropped) }
    }

    /// Writes the records waiting, rotating the files as they fill. Blocks on the disk: call it
    /// from a thread of its own, never from Swift concurrency's.
    public func writePending() {
        fileLock.lock()
        defer { fileLock.unlock() }
        writePendingHoldingLock()
    }

    private func writePendingHoldingLock() {
        let records = pending.withLock { pending -> [[UInt8]] in
            defer {
                pending.records.removeAll(keepingCapacity: true)
                pending.bytes = 0
            }
            return pending.records
        }
        guard !records.isEmpty else { return }
        // The current file could not be made at the last rotation: tried again once per write.
        if handle == nil { rotate() }
        var chunk: [UInt8] = []
        var inChunk = 0
        for record in records {
            if size + chunk.count + record.count > maximumBytes / 2 {
                write(chunk, records: inChunk)
                chunk.removeAll(keepingCapacity: true)
                inChunk = 0
                rotate()
            }
            chunk += record
            inChunk += 1
        }
        write(chunk, records: inChunk)
    }

    /// One write of `records` whole records to the current file; those it could not write are
    /// counted as dropped.
    private func write(_ bytes: [UInt8], records: Int) {
        guard !bytes.isEmpty else { return }
        do {
            guard let handle else { throw CocoaError(.fileNoSuchFile) }
            try handle.write(contentsOf: bytes)
            size += bytes.count
        } catch {
            // A full disk, or no file: the frames went out live; only their replay is lost. What
            // was half written is cut off when the journal is next opened, and skipped until then.
            pending.withLock { $0.dropped += records }
        }
    }

    /// The journaled frames received at or after `date`, oldest file first, read as they are
    /// needed (the files are never held in memory). What waits in memory is written first, and
    /// both files are opened now: a rotation while the replay is read renames them, and the replay
    /// still reads the files it began with. Blocks on the disk, as ``writePending()`` does.
    public func replay(since date: Date) -> Replay {
        fileLock.lock()
        defer { fileLock.unlock() }
        writePendingHoldingLock()
        return Replay(readers: [JournalReader(path: path + ".old"), JournalReader(path: path)], since: date)
    }

    /// Every journaled frame received at or after `date`, oldest file first.
    public func entries(since date: Date) -> [Entry] {
        Array(replay(since: date))
    }

    /// The current file becomes the old one and a new one begins; when no new one can be made,
    /// there is no current file (writes count their records as dropped) until a later write
    /// makes one.
    private func rotate() {
        try? handle?.close()
        handle = nil
        size = 0
        _ = rename(path, path + ".old")
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = try? FileHandle(forWritingTo: URL(fileURLWithPath: path))
        else { return }
        self.handle = handle
    }

    /// The frames of the journal's files since a time, one at a time.
    public struct Replay: Sequence, IteratorProtocol, Sendable {
        /// The files still to read, opened when the replay began.
        private var readers: [JournalReader]
        private let since: Date
        private var reader: JournalReader?
        /// Damaged stretches and unreadable envelopes skipped so far.
        public private(set) var damaged = 0

        init(readers: [JournalReader], since: Date) {
            self.readers = readers
            self.since = since
        }

        /// The next `count` frames at most (fewer only at the end): a batch to read on a thread
        /// that may block on the disk.
        public mutating func next(upTo count: Int) -> [Entry] {
            var batch: [Entry] = []
            while batch.count < count, let entry = next() { batch.append(entry) }
            return batch
        }

        public mutating func next() -> Entry? {
            while true {
                if reader == nil {
                    guard !readers.isEmpty else { return nil }
                    reader = readers.removeFirst()
                }
                let before = reader!.damaged
                let record = reader!.next()
                damaged += reader!.damaged - before
                guard let record else {
                    reader = nil
                    continue
                }
                guard let measurement = try? RemoteMeasurement(payload: Array(record.envelope)) else {
                    damaged += 1
                    continue
                }
                if measurement.receivedAt >= since { return Entry(address: record.address, measurement: measurement) }
            }
        }
    }
}

/// A batch of a strap's journaled frames on `hrbridge/<node>/sensor/<id>/backfill` (QoS 1): each
/// envelope preceded by its length (two bytes, little-endian), at most ``maximumFrames``.
public enum RemoteBackfill {
    /// Frames per message at most.
    public static let maximumFrames = 512
    /// Where a signed batch's tag begins (no frame's length): the tag's 32 bytes follow, and end it.
    public static let tagMarker: [UInt8] = [0xFF, 0xFF]

    /// The payload for these frames.
    public static func encode(_ measurements: [RemoteMeasurement]) -> [UInt8] {
        var payload: [UInt8] = []
        for measurement in measurements.prefix(maximumFrames) {
            let envelope = measurement.encoded()
            payload += [UInt8(envelope.count & 0xFF), UInt8(envelope.count >> 8)]
            payload += envelope
        }
        return payload
    }

    /// The frames in a payload; a malformed one ends the batch with its error.
    public static func decode(_ payload: [UInt8]) throws(RemoteMeasurementError) -> [RemoteMeasurement] {
        var frames: [RemoteMeasurement] = []
        var index = 0
        while index < payload.count {
            guard index + 2 <= payload.count else { throw .badBatch(payload.count) }
            let length = Int(payload[index]) | Int(payload[index + 1]) << 8
            if length == 0xFFFF {
                // A signed batch's tag, checked (or not) by whoever holds the key.
                guard payload.count - index - 2 == EnvelopeSigner.tagBytes else { throw .badBatch(payload.count) }
                break
            }
            guard frames.count < maximumFrames, index + 2 + length <= payload.count else {
                throw .badBatch(payload.count)
            }
            frames.append(try RemoteMeasurement(payload: Array(payload[(index + 2)..<(index + 2 + length)])))
            index += 2 + length
        }
        return frames
    }
}
