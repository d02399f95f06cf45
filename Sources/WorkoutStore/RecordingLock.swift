import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The right to record into a store and to recover its journal, held by one process at a time:
/// an exclusive `flock` on the store's lock file (``StoreBackend/lockPath``), released when the process ends (even by SIGKILL).
/// Without it a live `workout run --store S` and a daemon started on `S` would both continue
/// the same workout.
public final class RecordingLock: Sendable {
    /// Another process records into the store.
    public struct Busy: Error, CustomStringConvertible {
        /// The lock file.
        public let path: String
        /// What the holder wrote into it: its PID and command.
        public let holder: String

        /// One line for messages.
        public var description: String {
            "\(path): another hrbridge records into this store (\(holder)); one process at a time"
        }
    }

    private let descriptor: Int32
    /// The lock file.
    public let path: String

    /// Takes the lock in the file at `path`, or throws ``Busy`` (or the system's error).
    public init(path: String) throws {
        self.path = path
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = pread(opened, &buffer, buffer.count, 0)
            close(opened)
            let holder = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : "unknown process"
            throw Busy(path: path, holder: holder.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        descriptor = opened
        let line = Array("pid \(getpid()): \(CommandLine.arguments.prefix(3).joined(separator: " "))\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, line, line.count, 0)
    }

    deinit { close(descriptor) }
}
