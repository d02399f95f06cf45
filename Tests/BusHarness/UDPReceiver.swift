import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A UDP socket bound to a loopback address on a port the kernel picks, for OSC's tests.
public final class UDPReceiver: Sendable {
    public let descriptor: Int32
    public let port: UInt16

    /// Binds `127.0.0.1` (or `::1` when `ipv6`); throws when the address is not available here.
    public init(ipv6: Bool = false) throws {
        let family = ipv6 ? AF_INET6 : AF_INET
        let descriptor = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw HarnessError("socket() failed: errno \(errno)") }
        var storage = sockaddr_storage()
        var length: socklen_t
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            withUnsafeBytes(of: address) { source in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeBytes(of: address) { source in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
            }
        }
        let bound = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw HarnessError("bind() failed: errno \(errno)")
        }
        self.descriptor = descriptor
        port = withUnsafeBytes(of: storage) { bytes in
            // sin_port and sin6_port sit at the same offset, in network order.
            UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        }
    }

    deinit { close(descriptor) }

    /// The next datagram, or nil after `timeout`; polls without blocking a thread of the pool.
    public func receive(timeout: Duration = HarnessDeadline.condition) async -> [UInt8]? {
        var budget = WaitBudget(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count >= 0 { return Array(buffer[0..<count]) }
            guard !budget.isSpent() else { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
