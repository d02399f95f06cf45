public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small file read whole, never past a limit: a FIFO or a device reports no size to check
/// first (`--config /dev/stdin`), and `/dev/zero` never ends, so the limit is on the bytes read.
/// Where only a regular file makes sense (a key), anything else is refused before it is read:
/// opening a FIFO would wait for a writer.
public enum BoundedFile {
    /// Why a file was not read.
    public enum ReadError: Error, Equatable, Sendable {
        /// It cannot be opened or read.
        case unreadable
        /// It is no regular file (a FIFO, a device, a socket, a directory) where one is required.
        case notRegular
        /// It holds more than `limit` bytes.
        case larger(than: Int)
    }

    /// The bytes of `path`; at most `limit + 1` are read, and more than `limit` is refused.
    /// `regularOnly`: anything but a regular file is refused without waiting or reading.
    public static func read(_ path: String, limit: Int, regularOnly: Bool = false) throws(ReadError) -> Data {
        // Non-blocking when only a regular file will do: a FIFO without a writer opens at once.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | (regularOnly ? O_NONBLOCK : 0))
        guard descriptor >= 0 else { throw .unreadable }
        defer { close(descriptor) }
        if regularOnly {
            var status = stat()
            guard fstat(descriptor, &status) == 0 else { throw .unreadable }
            guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegular }
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
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
