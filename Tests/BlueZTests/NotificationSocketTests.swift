import Testing
import Threads

@testable import BlueZ

#if canImport(Glibc)
    import Glibc
#endif

/// The `AcquireNotify` socket as bluetoothd hands it out: a non-blocking SEQPACKET pair.
@Suite struct NotificationSocketTests {
    /// A socket pair made the way bluetoothd's `create_sock()` makes it.
    private static func nonBlockingPair() throws -> (ours: Int32, bluez: Int32) {
        var descriptors: [Int32] = [-1, -1]
        let made = socketpair(
            AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0,
            &descriptors)
        try #require(made == 0)
        return (descriptors[0], descriptors[1])
    }

    /// A stack no system can map: the reader's thread is refused, as at a thread limit.
    static let unmappableStack = 1 << 50

    @Test func aReaderThatCannotStartClosesTheSocketAndThrows() async throws {
        let (ours, bluez) = try Self.nonBlockingPair()
        defer { close(bluez) }
        #expect(throws: ThreadStartError.self) {
            _ = try NotificationSocket(descriptor: ours, mtu: 23, readerStackBytes: Self.unmappableStack)
        }
        // Closed, so BlueZ ends the notify session: its end reads the hang-up. (Not checked by
        // number: a test running beside this one may be given it again at once.)
        var byte: UInt8 = 0
        #expect(recv(bluez, &byte, 1, 0) == 0)
    }

    @Test func aNonBlockingSocketStaysOpenWhileNoNotificationIsWaiting() async throws {
        let (ours, bluez) = try Self.nonBlockingPair()
        defer { close(bluez) }
        let socket = try NotificationSocket(descriptor: ours, mtu: 23)
        defer { socket.close() }
        // Nothing is waiting when the reader starts: a non-blocking recv would fail with EAGAIN
        // and end the stream; the reader must block instead.
        #expect(fcntl(ours, F_GETFL) & O_NONBLOCK == 0)
        var iterator = socket.datagrams.makeAsyncIterator()
        for frame: [UInt8] in [[0x06, 0x48], [0x10, 0x49, 0xA0, 0x03], [0x06, 0x4A]] {
            let sent = frame.withUnsafeBytes { send(bluez, $0.baseAddress, $0.count, 0) }
            try #require(sent == frame.count)
            #expect(await iterator.next() == frame)
        }
    }

    @Test func theStreamEndsWhenBlueZClosesTheSocket() async throws {
        let (ours, bluez) = try Self.nonBlockingPair()
        let socket = try NotificationSocket(descriptor: ours, mtu: 23)
        defer { socket.close() }
        let frame: [UInt8] = [0x06, 0x50]
        _ = frame.withUnsafeBytes { send(bluez, $0.baseAddress, $0.count, 0) }
        close(bluez)
        var received: [[UInt8]] = []
        for await datagram in socket.datagrams { received.append(datagram) }
        #expect(received == [frame])
    }

    @Test(
        "the MTU from the bus reply is bounded: Int.max neither traps nor sizes the buffer",
        arguments: [Int.max, -5, 0])
    func absurdMTU(_ mtu: Int) throws {
        let (ours, bluez) = try Self.nonBlockingPair()
        defer { close(bluez) }
        let socket = try NotificationSocket(descriptor: ours, mtu: mtu)
        defer { socket.close() }
        #expect((23...NotificationSocket.maximumMTU).contains(socket.mtu))
    }

    @Test("a socket closed before its reader starts never reads the next socket given its descriptor's number")
    func closedSocketReadsNothingElse() async throws {
        for _ in 0..<200 {
            let (first, firstPeer) = try Self.nonBlockingPair()
            let closed = try NotificationSocket(descriptor: first, mtu: 23)
            closed.close()
            close(firstPeer)
            // The next strap's socket: closing the first descriptor at once would free its number for this one.
            let (next, nextPeer) = try Self.nonBlockingPair()
            let frame: [UInt8] = [0x06, 0x51]
            _ = frame.withUnsafeBytes { send(nextPeer, $0.baseAddress, $0.count, 0) }
            close(nextPeer)
            var stolen: [[UInt8]] = []
            for await datagram in closed.datagrams { stolen.append(datagram) }
            close(next)
            #expect(stolen.isEmpty, "the closed socket's reader read another socket's notification")
            if !stolen.isEmpty { break }
        }
    }
}
