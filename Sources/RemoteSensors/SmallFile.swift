import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small regular file read whole, never past a limit. A FIFO or a device named where a file is
/// expected must neither hang startup (opening a FIFO waits for a writer, reading one for data)
/// nor fill memory (`/dev/zero` never ends). (The daemon's `BoundedFile` is in Bridge, which this
/// module cannot import, and reads FIFOs on purpose: `--config /dev/stdin`.)
enum SmallFile {
    /// Why a file was not read.
    enum ReadError: Error, Equatable {
        /// It cannot be opened or read.
        case unreadable
        /// It is no regular file: a FIFO, a device, a socket, a directory.
        case notRegular
        /// It holds more than `limit` bytes.
        case larger(than: Int)
    }

    /// The bytes of the regular file at `path`; at most `limit + 1` are read, and more than
    /// `limit` is refused.
    static func read(_ path: String, limit: Int) throws(ReadError) -> Data {
        // Non-blocking, so a FIFO without a writer opens at once (and is then refused).
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadable }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notRegular }
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
