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
/// fills), mode 0600, and survives a gateway restart.
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
    private let lock = NSLock()
    private var handle: FileHandle?
    private var size: Int

    /// Opens (or creates) the journal at `path`.
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
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        size = Int(try handle.seekToEnd())
        self.handle = handle
    }

    deinit {
        try? handle?.close()
    }

    /// Appends a frame: one record of the address and the published envelope.
    public func append(address: String, _ measurement: RemoteMeasurement) {
        let address = Array(address.utf8.prefix(64))
        let envelope = measurement.encoded()
        var record: [UInt8] = [UInt8(address.count)]
        record += address
        record += [UInt8(envelope.count & 0xFF), UInt8(envelope.count >> 8)]
        record += envelope
        lock.lock()
        defer { lock.unlock() }
        if size + record.count > maximumBytes / 2 { rotate() }
        guard let handle else { return }
        do {
            try handle.write(contentsOf: record)
            size += record.count
        } catch {
            // A full disk: the frame went out live; only its replay is lost.
        }
    }

    /// Every journaled frame received at or after `date`, oldest file first.
    public func entries(since date: Date) -> [Entry] {
        lock.lock()
        defer { lock.unlock() }
        var entries: [Entry] = []
        for file in [path + ".old", path] {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            entries += Self.parse([UInt8](data)).filter { $0.measurement.receivedAt >= date }
        }
        return entries
    }

    /// The records in `bytes`; a torn last record (the process died while writing) is ignored.
    static func parse(_ bytes: [UInt8]) -> [Entry] {
        var entries: [Entry] = []
        var index = 0
        while index < bytes.count {
            let addressLength = Int(bytes[index])
            let lengthAt = index + 1 + addressLength
            guard lengthAt + 2 <= bytes.count else { break }
            let envelopeLength = Int(bytes[lengthAt]) | Int(bytes[lengthAt + 1]) << 8
            let envelopeAt = lengthAt + 2
            guard envelopeAt + envelopeLength <= bytes.count else { break }
            let address = String(decoding: bytes[(index + 1)..<lengthAt], as: UTF8.self)
            if let measurement = try? RemoteMeasurement(
                payload: Array(bytes[envelopeAt..<(envelopeAt + envelopeLength)]))
            {
                entries.append(Entry(address: address, measurement: measurement))
            }
            index = envelopeAt + envelopeLength
        }
        return entries
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
}

/// A batch of a strap's journaled frames on `hrbridge/<node>/sensor/<id>/backfill` (QoS 1): each
/// envelope preceded by its length (two bytes, little-endian), at most ``maximumFrames``.
public enum RemoteBackfill {
    /// Frames per message at most.
    public static let maximumFrames = 512

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
            guard frames.count < maximumFrames, index + 2 <= payload.count else {
                throw .badBatch(payload.count)
            }
            let length = Int(payload[index]) | Int(payload[index + 1]) << 8
            guard index + 2 + length <= payload.count else { throw .badBatch(payload.count) }
            frames.append(try RemoteMeasurement(payload: Array(payload[(index + 2)..<(index + 2 + length)])))
            index += 2 + length
        }
        return frames
    }
}
