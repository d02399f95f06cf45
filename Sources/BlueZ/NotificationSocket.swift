import DBus
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// Reads the SEQPACKET socket `AcquireNotify` hands out: one datagram per notification.
///
/// A thread of its own blocks in `recv`; datagrams arrive in order on ``datagrams``, which ends at
/// end of file (BlueZ closes the socket on every disconnect) or on an error.
/// A zero-length notification cannot be told from end of file: that is the socket API's limit.
/// bluetoothd makes the pair non-blocking (`SOCK_NONBLOCK`) and the flag travels with the
/// descriptor: the socket is set blocking here, or the first idle `recv` (`EAGAIN`) would end the
/// stream and hang up on BlueZ (found on the real-BlueZ bed).
/// The reader closes the descriptor, once it has stopped reading: closed by anyone else, its number
/// could be reused (the next strap's socket) before the reader's next `recv`, which would then
/// read that strap's notifications as this one's.
final class NotificationSocket: Sendable {
    let descriptor: Int32
    let mtu: Int
    /// Whether the descriptor is still open: `close()` shuts it down only while it is.
    private let open = Mutex(true)

    /// The notifications, in order.
    let datagrams: AsyncStream<[UInt8]>

    /// The largest ATT MTU (a 512-byte attribute value, its opcode, handle and offset): the MTU
    /// comes in a bus reply, and a larger one must not size the buffer.
    static let maximumMTU = 517

    /// Takes `descriptor` and starts its reader (on a stack of `readerStackBytes`, nil: the
    /// system's default); when no thread can be started, closes the descriptor (BlueZ ends the
    /// notify session) and throws.
    init(descriptor: Int32, mtu: Int, readerStackBytes: Int? = nil) throws(ThreadStartError) {
        self.descriptor = descriptor
        self.mtu = min(max(mtu, 23), Self.maximumMTU)
        let size = self.mtu + 3
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 && flags & O_NONBLOCK != 0 {
            _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
        }
        let (stream, continuation) = AsyncStream<[UInt8]>.makeStream()
        datagrams = stream
        let reader: @Sendable () -> Void = { [self] in
            var buffer = [UInt8](repeating: 0, count: size)
            while true {
                let count = recv(descriptor, &buffer, size, 0)
                if count > 0 {
                    continuation.yield(Array(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            open.withLock { isOpen in
                isOpen = false
                _ = Glibc.close(descriptor)
            }
            continuation.finish()
        }
        do {
            try DetachedThread.start(named: "hrbridge.notify", stackBytes: readerStackBytes, reader)
        } catch {
            _ = Glibc.close(descriptor)
            continuation.finish()
            throw error
        }
    }

    /// Releases the notification session: BlueZ stops when the socket closes. Shutting it down
    /// ends the reader's `recv` (or its next one), and the reader closes it.
    func close() {
        open.withLock { isOpen in
            if isOpen { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }
}
