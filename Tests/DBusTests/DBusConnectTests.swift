import BusHarness
import DBus
import Foundation
import Logging
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A Unix socket that takes connections into its backlog and never says a word: a hung bus.
private final class MuteBus: Sendable {
    let path: String
    let descriptor: Int32

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("mute-\(UUID().uuidString).sock").path
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8.prefix(buffer.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    /// Closes the listener: the connections waiting in its backlog are reset.
    func close() {
        _ = Glibc.close(descriptor)
        unlink(path)
    }

    /// Takes the next connection once a client has begun to authenticate on it (its first bytes
    /// came: the client is inside its `Hello` call), and returns it, left unanswered.
    func acceptAuthenticating() async throws -> Int32 {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var client: Int32 = -1
        try await eventually("a client to connect") {
            client = accept(descriptor, nil, nil)
            // Close-on-exec: a peer another test spawns later must not keep this end open, or
            // closing it here would never reach the connect as its end of file. (Glibc's module
            // has no accept4.)
            if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
            return client >= 0
        }
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
        var received: [UInt8] = []
        try await eventually("the client to begin authenticating") {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = read(client, &buffer, buffer.count)
            if count > 0 { received += buffer[0..<count] }
            return String(decoding: received, as: UTF8.self).contains("AUTH")
        }
        return client
    }
}

@Suite("connecting to a bus does not hold Swift concurrency's threads")
struct DBusConnectTests {
    @Test(
        "while more connects than the pool has threads hang on a bus that never answers, the pool still runs other work"
    )
    func connectDoesNotBlockThePool() async throws {
        let bus = try MuteBus()
        let logger = Logger(label: "test")
        let count = 4 * ProcessInfo.processInfo.activeProcessorCount
        final class Counts: Sendable {
            let started = Atomic<Int>(0)
            let returned = Atomic<Int>(0)
        }
        let counts = Counts()
        var connects: [Task<Bool, Never>] = []
        for _ in 0..<count {
            connects.append(
                Task.detached {
                    counts.started.add(1, ordering: .sequentiallyConsistent)
                    defer { counts.returned.add(1, ordering: .sequentiallyConsistent) }
                    return (try? await DBusConnection.connect(bus: .address("unix:path=\(bus.path)"), logger: logger))
                        == nil
                })
        }
        try await eventually("every connect to be under way") {
            counts.started.load(ordering: .sequentiallyConsistent) == count
        }
        // Work that needs a pool thread: it runs while every connect still waits for the bus.
        let answered = await Task.detached { counts.returned.load(ordering: .sequentiallyConsistent) }.value
        #expect(answered == 0, "the pool ran only after \(answered) connects gave up")
        bus.close()
        for connect in connects { #expect(await connect.value, "a bus that never answers is an error") }
    }

    @Test(
        "a connect waiting on a bus that never answers does not hold up a connect to another bus (libdbus's global lock is not held across Hello)"
    )
    func aHungBusDoesNotHoldUpAnother() async throws {
        let mute = try MuteBus()
        let logger = Logger(label: "test")
        // Its deadline never comes: only the reset at the end ends it.
        let never = ManualClock()
        let hung = Task.detached {
            (try? await DBusConnection.connect(bus: .address("unix:path=\(mute.path)"), logger: logger, clock: never))
                == nil
        }
        let client = try await mute.acceptAuthenticating()
        // Resetting the unanswered connection ends the hung connect (with an error), once.
        final class Once: Sendable { let done = Atomic<Bool>(false) }
        let once = Once()
        let release: @Sendable () -> Void = {
            guard !once.done.exchange(true, ordering: .sequentiallyConsistent) else { return }
            _ = Glibc.close(client)
            mute.close()
        }
        var connected = false
        do {
            connected = try await withPrivateBus { bus in
                await withTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        guard
                            let connection = try? await DBusConnection.connect(
                                bus: .address(bus.address), logger: logger)
                        else { return false }
                        await connection.close()
                        return true
                    }
                    // A bound, not a guess: past it the other connect waited for the hung one,
                    // which is then let go so that the waiting one can end too.
                    group.addTask {
                        try? await Task.sleep(for: HarnessDeadline.condition)
                        release()
                        return false
                    }
                    let first = await group.next() ?? false
                    group.cancelAll()
                    return first
                }
            }
        } catch {
            Issue.record(error)
        }
        release()
        #expect(connected, "a connect to a working bus waited for the hung one")
        #expect(await hung.value, "a bus that never answers is an error")
    }

    @Test(
        "a bus that takes the connection and never answers: the connect fails at its deadline on the clock, naming the bus, and lets its socket go"
    )
    func aConnectEndsAtItsDeadline() async throws {
        let mute = try MuteBus()
        defer { mute.close() }
        let clock = ManualClock()
        let records = LogRecords()
        var logger = Logger(label: "test") { _ in records }
        logger.logLevel = .debug
        let attempt = Task.detached { [logger] in
            try await DBusConnection.connect(
                bus: .address("unix:path=\(mute.path)"), logger: logger, timeout: .seconds(25), clock: clock)
        }
        let client = try await mute.acceptAuthenticating()
        defer { _ = Glibc.close(client) }
        await clock.waitUntilSleeping()
        #expect(clock.requestedSleeps == [.seconds(25)])
        clock.advance(by: .seconds(25))
        do {
            let connection = try await attempt.value
            Issue.record("connected to a bus that never answered: \(connection.uniqueName)")
        } catch let error as DBusError {
            #expect(error.name == DBusError.timeoutName)
            #expect(error.message == "the bus at unix:path=\(mute.path) did not answer within 25 s")
        } catch {
            Issue.record("not a D-Bus error: \(error)")
        }
        // The blocked connect's socket was shut down: this end reads its end of file, and the
        // connect's thread ends, saying so.
        try await eventually("the connect to let its socket go") {
            var byte: UInt8 = 0
            return read(client, &byte, 1) == 0
        }
        try await eventually("the connect's thread to end") {
            records.messages.contains("a connect past its deadline ended")
        }
    }

    @Test("a bus that answers in time: the deadline's sleep is cancelled and nothing is left waiting on the clock")
    func aConnectInTimeCancelsItsDeadline() async throws {
        try await withPrivateBus { bus in
            let clock = ManualClock()
            let connection = try await DBusConnection.connect(
                bus: .address(bus.address), logger: Logger(label: "test"), clock: clock)
            #expect(connection.uniqueName.hasPrefix(":"))
            // The deadline's task asked for its sleep, and was cancelled out of it (or before it).
            try await eventually("the deadline's sleep to be asked for and end") {
                clock.requestedSleeps == [DBusConnection.defaultTimeout] && clock.sleeperCount == 0
            }
            await connection.close()
        }
    }
}
