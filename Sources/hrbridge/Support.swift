import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Writes diagnostics to standard error, one line each.
enum StandardError {
    static func write(_ line: String) {
        // Never a trap: stderr may be a pipe its reader closed (`2>&1 | head`).
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }
}
