public import Foundation

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
public final class MeasurementJournal: @unchecked Sendable {
    /// One journaled frame.
    public struct Entry: Hashable, Sendable {
        /// The strap's address.
        public var address: String
        /// The frame as the gateway published it.
        public var measurement: RemoteMeasurement
    }

    /// The current file; the older one is `path + ".old"`.
    public let path: String
    /// Bytes on disk at most (both files).
    public let maximumBytes: Int
    /// Damaged stretches found in the current file when it was opened (skipped when read).
    public let damagedAtOpen: Int
    /// Bytes cut from the current file's end when it was opened: a record torn by a crash or a
    /// full disk, which later records must not follow.
    public let truncatedAtOpen: Int
    private let lock = NSLock()
    private var handle: FileHandle?
    private var size: Int

    /// Opens (or creates) the journal at `path`, cutting a torn record from its end.
    public init(path: String, maximumBytes: Int = 64 << 20) throws {
        self.path = path
        self.maximumBytes = max(maximumBytes, 4096)
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

    deinit {
        try? handle?.close()
    }

    /// Appends a frame: one record of the address and the published envelope.
    public func append(address: String, _ measurement: RemoteMeasurement) {
        let addressBytes = Array(address.utf8)
        guard JournalRecord.isAddress(addressBytes[...]) else { return }
        let record = JournalRecord.encode(address: addressBytes, envelope: measurement.encoded())
        lock.lock()
        defer { lock.unlock() }
        if size + record.count > maximumBytes / 2 { rotate() }
        guard let handle else { return }
        do {
            try handle.write(contentsOf: record)
            size += record.count
        } catch {
            // A full disk: the frame went out live; only its replay is lost. What was half written
            // is cut off when the journal is next opened, and skipped until then.
        }
    }

    /// The journaled frames received at or after `date`, oldest file first, read as they are
    /// needed (the files are never held in memory). Both files are opened now: a rotation while
    /// the replay is read renames them, and the replay still reads the files it began with.
    public func replay(since date: Date) -> Replay {
        lock.lock()
        defer { lock.unlock() }
        return Replay(readers: [JournalReader(path: path + ".old"), JournalReader(path: path)], since: date)
    }

    /// Every journaled frame received at or after `date`, oldest file first.
    public func entries(since date: Date) -> [Entry] {
        Array(replay(since: date))
    }

    private func rotate() {
        try? handle?.close()
        handle = nil
        _ = rename(path, path + ".old")
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = try? FileHandle(forWritingTo: URL(fileURLWithPath: path))
        else { return }
        self.handle = handle
        size = 0
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
