public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A child process started with posix_spawn, its output captured line by line.
///
/// Foundation's Process is avoided on purpose: the harness must stop every peer it starts by
/// PID, reap it itself, and never block a test thread on a run loop.
public final class Spawned: Sendable {
    /// The child's PID.
    public let pid: pid_t
    /// A name for messages.
    public let label: String
    private let lines = Mutex<[String]>([])
    private let exit = Mutex<Int32?>(nil)
    /// Whether the output pipe reached end of file (every line is in `output`).
    private let drained = Mutex(false)
    /// When it was spawned.
    public let startedAt = ContinuousClock.now

    /// Starts `executable` with `arguments`; `environment` entries are added to this process's.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:], label: String? = nil)
        throws
    {
        self.label = label ?? URL(fileURLWithPath: executable).lastPathComponent
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw CocoaError(.fileWriteUnknown) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
        posix_spawn_file_actions_addclose(&actions, ends[0])
        var merged = ProcessInfo.processInfo.environment
        merged["PYTHONUNBUFFERED"] = "1"
        for (key, value) in environment { merged[key] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // The test runner's threads block SIGTERM and SIGINT; a child would inherit that and ignore
        // stop()'s SIGTERM. Start it with no signals blocked and the default dispositions.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        close(ends[1])
        guard status == 0 else {
            close(ends[0])
            throw CocoaError(.executableNotLoadable)
        }
        pid = child
        let reader = ends[0]
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            var pending = Data()
            while true {
                let count = read(reader, &buffer, buffer.count)
                if count <= 0 { break }
                pending.append(contentsOf: buffer[0..<count])
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    self.lines.withLock { $0.append(line) }
                }
            }
            close(reader)
            self.drained.withLock { $0 = true }
        }
    }

    /// Every line the child printed so far.
    public var output: [String] { lines.withLock { $0 } }

    /// Starts a peer and waits for its readiness signal, holding a ``PeerStartGate`` slot from the
    /// spawn until `ready` returns true. When the peer exits first or `deadline` passes, it is stopped
    /// and the error carries its last output lines and how long it ran (``report``).
    public static func startPeer(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], label: String? = nil,
        deadline: Duration = HarnessDeadline.peerStart, ready: (Spawned) async throws -> Bool
    ) async throws -> Spawned {
        try await PeerStartGate.shared.withSlot {
            let peer = try Spawned(executable, arguments, environment: environment, label: label)
            var budget = WaitBudget(deadline)
            do {
                while try await !ready(peer) {
                    if !peer.isRunning {
                        // Its last lines may still be on their way through the pipe.
                        await peer.drain()
                        if try await ready(peer) { break }
                        throw HarnessError("\(peer.label) exited before it was ready: \(peer.report)")
                    }
                    guard !budget.isSpent() else {
                        throw HarnessError("\(peer.label) was not ready within \(deadline): \(peer.report)")
                    }
                    try await Task.sleep(for: .milliseconds(25))
                }
            } catch {
                peer.stop()
                throw error
            }
            return peer
        }
    }

    /// Starts a peer whose readiness signal is a line of its output satisfying `predicate`.
    public static func startPeer(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], label: String? = nil,
        readyLine predicate: @escaping @Sendable (String) -> Bool
    ) async throws -> Spawned {
        try await startPeer(executable, arguments, environment: environment, label: label) { peer in
            peer.output.contains(where: predicate)
        }
    }

    /// How long it ran, how it ended and its last output lines, for failure messages.
    public var report: String {
        let ran = ContinuousClock.now - startedAt
        let seconds = Double(ran.components.seconds) + Double(ran.components.attoseconds) / 1e18
        let state = isRunning ? "still running" : "exited with status \(exitStatus.map(String.init) ?? "?")"
        let tail = output.suffix(12)
        return "\(label) (pid \(pid)) ran \(String(format: "%.1f", seconds)) s, \(state); "
            + (tail.isEmpty ? "it printed nothing" : "last lines:\n" + tail.joined(separator: "\n"))
    }

    /// Waits until a line satisfies `predicate`; returns it, or `nil` when the child exited without
    /// printing it or after `timeout`.
    @discardableResult
    public func waitForLine(timeout: Duration = HarnessDeadline.condition, _ predicate: (String) -> Bool) async
        -> String?
    {
        var budget = WaitBudget(timeout)
        while !budget.isSpent() {
            if let line = output.first(where: predicate) { return line }
            if !isRunning {
                await drain()
                return output.first(where: predicate)
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return output.first(where: predicate)
    }

    /// Whether the child is still running (it is reaped here when it has exited).
    public var isRunning: Bool {
        if exit.withLock({ $0 }) != nil { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { exit.withLock { $0 = (status >> 8) & 0xFF } }
        return result == 0
    }

    /// The exit status once the child has exited (and been reaped by ``isRunning`` or ``wait()``).
    public var exitStatus: Int32? { exit.withLock { $0 } }

    /// Waits for the child to exit, at most `timeout`; returns its exit status.
    @discardableResult
    public func wait(timeout: Duration = HarnessDeadline.exit) async -> Int32? {
        var budget = WaitBudget(timeout)
        while isRunning && !budget.isSpent() { try? await Task.sleep(for: .milliseconds(20)) }
        if exitStatus != nil { await drain() }
        return exitStatus
    }

    /// Lets the reader take the last lines of a child that has exited (a grandchild may hold the
    /// pipe open: bounded).
    func drain() async {
        let deadline = ContinuousClock.now + .seconds(5)
        while !drained.withLock({ $0 }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Stops the child by PID: SIGTERM, then SIGKILL after 3 s; always reaps it.
    public func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        for _ in 0..<60 where isRunning { usleep(50_000) }
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            exit.withLock { $0 = -1 }
        }
    }
}
