public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Sends OSC messages as UDP datagrams to one target, without blocking.
///
/// The host is resolved once (getaddrinfo: IPv4 or IPv6, names too). A datagram that cannot go
/// (no route, the socket buffer full) is counted and logged and the next one is tried: OSC has
/// no delivery guarantee anyway, and the feed sends every value again within a second.
public final class OSCSender: OSCTransport {
    private struct Counters {
        var sent = 0
        var errors = 0
        /// Whether the last send failed: only the first failure of a run is a warning.
        var failing = false
    }

    /// The target.
    public let target: OSCTarget
    private let descriptor: Int32
    /// The resolved `sockaddr_in`/`sockaddr_in6`, as bytes.
    private let address: [UInt8]
    private let counters = Mutex(Counters())
    private let logger: Logger

    /// Resolves `target` and opens a non-blocking UDP socket of its address family.
    public init(target: OSCTarget, logger: Logger) throws(OSCSenderError) {
        self.target = target
        self.logger = logger
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(target.host, String(target.port), &hints, &results)
        guard status == 0, let first = results else {
            throw .unresolved(host: target.host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(results) }
        var candidates: [addrinfo] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            candidates.append(current.pointee)
            entry = current.pointee.ai_next
        }
        // A name with both kinds of address goes to IPv4 first: OSC receivers often bind IPv4 only.
        candidates = candidates.filter { $0.ai_family == AF_INET } + candidates.filter { $0.ai_family != AF_INET }
        var lastError: Int32 = EAFNOSUPPORT
        for info in candidates {
            guard let socketAddress = info.ai_addr else { continue }
            let socketType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let opened = socket(info.ai_family, socketType, 0)
            guard opened >= 0 else {
                lastError = errno
                continue
            }
            descriptor = opened
            address = Array(UnsafeRawBufferPointer(start: socketAddress, count: Int(info.ai_addrlen)))
            return
        }
        throw .socket(reason: String(cString: strerror(lastError)))
    }

    deinit { close(descriptor) }

    /// ``init(target:logger:)`` as a result, for a caller that hands the blocking call to a thread.
    public static func resolving(_ target: OSCTarget, logger: Logger) -> Result<OSCSender, OSCSenderError> {
        do {
            return .success(try OSCSender(target: target, logger: logger))
        } catch {
            return .failure(error)
        }
    }

    /// Datagrams sent.
    public var datagramsSent: Int { counters.withLock(\.sent) }
    /// Datagrams that could not be sent.
    public var sendErrors: Int { counters.withLock(\.errors) }

    /// Sends `message` as one datagram.
    public func send(_ message: OSCMessage) {
        send(datagram: message.encoded(), describing: message.address)
    }

    private func send(datagram: [UInt8], describing what: String) {
        let result = datagram.withUnsafeBytes { bytes in
            address.withUnsafeBytes { socketAddress in
                sendto(
                    descriptor, bytes.baseAddress, bytes.count, 0,
                    socketAddress.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(socketAddress.count))
            }
        }
        let failure = result < 0 ? errno : 0
        let firstFailure = counters.withLock { counters -> Bool in
            if failure == 0 {
                counters.sent += 1
                counters.failing = false
                return false
            }
            counters.errors += 1
            defer { counters.failing = true }
            return !counters.failing
        }
        guard failure != 0 else { return }
        // A target that stays unreachable fails every send: one warning, then debug lines.
        logger.log(
            level: firstFailure ? .warning : .debug, "OSC datagram not sent",
            metadata: [
                "target": "\(target)", "address": "\(what)", "bytes": "\(datagram.count)",
                "error": "\(String(cString: strerror(failure)))",
            ])
    }
}

/// Why an ``OSCSender`` could not be made.
public enum OSCSenderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The host does not resolve to an address.
    case unresolved(host: String, reason: String)
    /// No UDP socket could be opened for its addresses.
    case socket(reason: String)

    public var description: String {
        switch self {
        case .unresolved(let host, let reason): "OSC target host \"\(host)\" does not resolve: \(reason)"
        case .socket(let reason): "cannot open a UDP socket for OSC: \(reason)"
        }
    }
}
