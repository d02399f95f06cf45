import Bridge
import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Synchronization
import Testing
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// Datagrams collected by a reader task.
final class ReceivedDatagrams: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A datagram socket standing in for systemd's notify socket.
final class NotifyListener: Sendable {
    let descriptor: Int32
    let address: String

    /// Binds a path socket, or an abstract one (`@name`) when `abstract`.
    init(abstract: Bool = false) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        let name =
            abstract
            ? "@hrbridge-notify-\(UUID().uuidString.prefix(8))"
            : FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))")
                .path
        address = name
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw HarnessError("cannot bind \(name): errno \(errno)") }
    }

    deinit {
        close(descriptor)
        if !address.hasPrefix("@") { unlink(address) }
    }

    /// The next datagram, or nil after `timeout`. Polls the socket without blocking a thread of
    /// the concurrency pool (2 on this machine).
    func receive(timeout: Duration = HarnessDeadline.condition) async -> String? {
        var budget = WaitBudget(timeout)
        while true {
            if let datagram = receiveNow() { return datagram }
            guard !budget.isSpent() else { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Reads all along, as systemd does (the socket's queue holds only 10 datagrams, and the daemon
    /// drops what does not fit rather than block): the datagrams so far, and the reading task to
    /// cancel.
    func collect() -> (ReceivedDatagrams, Task<Void, Never>) {
        let datagrams = ReceivedDatagrams()
        let reader = Task {
            while !Task.isCancelled {
                if let datagram = await receive(timeout: .seconds(1)) { datagrams.append(datagram) }
            }
        }
        return (datagrams, reader)
    }

    /// A datagram already queued, if any.
    private func receiveNow() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }
}

@Suite("systemd notify protocol, checked with a real datagram socket", .serialized)
struct NotifyTests {
    @Test("datagrams reach a path socket and an abstract socket; without NOTIFY_SOCKET nothing is sent")
    func notifierSends() async throws {
        for abstract in [false, true] {
            let listener = try NotifyListener(abstract: abstract)
            let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.address])
            notifier.ready(status: "2 sensors streaming")
            #expect(await listener.receive() == "READY=1\nSTATUS=2 sensors streaming")
            notifier.watchdog()
            #expect(await listener.receive() == "WATCHDOG=1")
        }
        #expect(SystemdNotifier(environment: [:]).send(["READY=1"]) == false)
    }

    @Test("the watchdog period is half of WATCHDOG_USEC, and only for our PID")
    func watchdogPeriod() {
        #expect(SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000"]).watchdogInterval == .seconds(15))
        #expect(
            SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "\(getpid())"]).watchdogInterval
                == .seconds(15))
        #expect(
            SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"]).watchdogInterval == nil)
        #expect(SystemdNotifier(environment: [:]).watchdogInterval == nil)
    }

    @Test("the daemon: READY with STATUS once up, WATCHDOG every half period, STOPPING on SIGTERM, exit 0")
    func daemonLifecycle() async throws {
        let listener = try NotifyListener()
        let (datagrams, reader) = listener.collect()
        defer { reader.cancel() }
        func all() -> [String] { datagrams.all }
        let born = ContinuousClock.now
        // A ping a second: slow enough that a reader starved for a while on a loaded machine does
        // not let the queue fill (a full queue drops the status line this test waits for).
        let daemon = try await DaemonUnderTest(
            environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "2000000"])
        defer { daemon.stop() }
        try await eventually("READY=1") { all().contains { $0.hasPrefix("READY=1") } }
        #expect(all().first { $0.hasPrefix("READY=1") }?.contains("STATUS=") == true)
        // They keep coming, and a busy machine can only delay them.
        try await eventually("pings to keep coming") { all().filter { $0 == "WATCHDOG=1" }.count >= 3 }
        // A session changes the status line.
        let created = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[0]]])
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        try await eventually("the status line to count the session") {
            all().contains { $0.hasPrefix("STATUS=") && $0.contains("1 session running") }
        }
        kill(daemon.process.pid, SIGTERM)
        try await eventually("STOPPING=1") { all().contains { $0.contains("STOPPING=1") } }
        #expect(await daemon.process.wait() == 0)
        // Never hastened: over the daemon's whole life, at most one ping a second (and one more).
        let lifetime = (ContinuousClock.now - born) / .seconds(1)
        let pings = all().filter { $0 == "WATCHDOG=1" }.count
        #expect(Double(pings) <= lifetime + 2, "\(pings) pings in \(lifetime) periods")
        // The running session was ended and saved on the way out.
        let restarted = try await DaemonUnderTest(reusing: daemon)
        defer { restarted.stop(removing: false) }
        let list = try await restarted.unix.send(.GET, "/v1/workouts").list("workouts", of: WorkoutListingJSON.self)
        #expect(list.count == 1)
        #expect(list.first?.active == false)
    }

    @Test("a notify socket nobody reads fills up, and the daemon goes on serving (sends never block)")
    func unreadNotifySocket() async throws {
        let listener = try NotifyListener()
        let daemon = try await DaemonUnderTest(
            environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "100000"])
        defer { daemon.stop() }
        // Full: a probe datagram of our own no longer fits.
        let probe = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(probe) }
        try await eventually("the unread notify queue to be full") {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { buffer in
                for (index, byte) in listener.address.utf8.enumerated() { buffer[index] = byte }
            }
            let sent = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(probe, "x", 1, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            return sent < 0 && errno == EAGAIN
        }
        for _ in 0..<5 {
            #expect(try await daemon.unix.send(.GET, "/v1/health").status == 200)
        }
        #expect(daemon.process.isRunning)
    }
}
