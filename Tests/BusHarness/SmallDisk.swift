import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small real file system for disk-full tests: a tmpfs of `size` bytes mounted at a fresh
/// directory (needs root, as CI has), filled to the last byte on demand and freed again.
public final class SmallDisk: Sendable {
    /// The mount point.
    public let path: String
    private var filler: String { path + "/filler" }

    /// Whether this process may mount one (root).
    public static var isAvailable: Bool { geteuid() == 0 }

    /// Mounts it.
    public init(size: Int) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-disk-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let options = "size=\(size),mode=0700"
        guard mount("tmpfs", path, "tmpfs", 0, options) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: path)
            throw HarnessError("cannot mount a \(size)-byte tmpfs at \(path): \(reason)")
        }
    }

    /// Writes a file until the file system has no byte left; returns how many bytes it took.
    @discardableResult
    public func fill() throws -> Int {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw HarnessError("cannot create \(filler): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let block = [UInt8](repeating: 0xA5, count: 4096)
        var total = 0
        var size = block.count
        // Whole blocks first, then ever smaller writes down to one byte: no space is left over.
        while size > 0 {
            let written = block.withUnsafeBytes { write(descriptor, $0.baseAddress, size) }
            if written > 0 {
                total += written
            } else if errno == ENOSPC || written == 0 {
                size /= 2
            } else if errno != EINTR {
                throw HarnessError("filling \(path): \(String(cString: strerror(errno)))")
            }
        }
        return total
    }

    /// Bytes free now.
    public var available: Int {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return -1 }
        return Int(stats.f_bavail) * Int(stats.f_frsize)
    }

    /// Deletes the filler: the space is back.
    public func free() { unlink(filler) }

    /// Unmounts (lazily, so a process still holding a file does not keep it mounted) and removes it.
    public func remove() {
        _ = umount2(path, Int32(MNT_DETACH))
        try? FileManager.default.removeItem(atPath: path)
    }
}
