public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The sd_notify protocol without libsystemd: newline-separated `KEY=VALUE` datagrams to
/// `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Without the variable it does
/// nothing, so the daemon runs the same outside systemd.
public struct SystemdNotifier: Sendable {
    private let socketAddress: String?
    /// The watchdog ping period (half of `WATCHDOG_USEC`), when systemd asks for pings from us.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketAddress = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        let forUs = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
        if forUs, let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Whether systemd listens.
    public var isEnabled: Bool { socketAddress != nil }

    /// Sends `READY=1`.
    public func ready(status: String? = nil) { send(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? [])) }
    /// Sends a one-line `STATUS=`.
    public func status(_ text: String) { send(["STATUS=\(text.replacingOccurrences(of: "\n", with: " "))"]) }
    /// Sends `WATCHDOG=1`.
    public func watchdog() { send(["WATCHDOG=1"]) }
    /// Sends `STOPPING=1`.
    public func stopping() { send(["STOPPING=1"]) }

    /// Sends the fields as one datagram; returns whether it was sent.
    @discardableResult
    public func send(_ fields: [String]) -> Bool {
        guard let socketAddress else { return false }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketAddress.utf8)
        // "@name" is the abstract namespace: a leading NUL, and the length without a trailing NUL.
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + (path.first == 0 ? 0 : 1))
        let message = Array(fields.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                // Never blocks: a notify socket that is not read (its queue holds 10 datagrams) must
                // not stop the daemon; a status or ping that does not fit is dropped.
                sendto(descriptor, message, message.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), socketAddress, length)
            }
        }
        return sent == message.count
    }
}
