import Foundation

/// A small file read whole, but never past a limit: a FIFO or a device (`--config /dev/stdin`)
/// reports no size to check first, so the limit is on the bytes read.
enum BoundedFile {
    /// Why a file was not read.
    enum ReadError: Error, Equatable {
        /// It cannot be opened or read.
        case unreadable
        /// It holds more than `limit` bytes.
        case larger(than: Int)
    }

    /// The bytes of `path`; at most `limit + 1` are read, and more than `limit` is refused.
    static func read(_ path: String, limit: Int) throws(ReadError) -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .unreadable }
        defer { try? handle.close() }
        let data: Data?
        do {
            data = try handle.read(upToCount: limit + 1)
        } catch {
            throw .unreadable
        }
        // nil: the file ended at once.
        guard let data else { return Data() }
        guard data.count <= limit else { throw .larger(than: limit) }
        return data
    }
}
