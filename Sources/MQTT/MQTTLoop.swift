import CMosquitto
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// libmosquitto's network I/O on a thread of our own, instead of `mosquitto_loop_start`'s.
///
/// libmosquitto's thread reconnects by itself with a blocking TCP connect, and a failed one marks
/// the connection pending again, undoing a stop's disconnect: in a partition its thread never
/// ended. This thread only turns `mosquitto_loop` (one second at most per turn); when the
/// connection ends it parks and reports it (``start(handle:onStopped:)``), and the client's actor
/// reconnects (with its backoff, on its clock) and lets it go on (``resume()``). After ``stop()``
/// it takes at most ``turnsAfterStop`` more turns (a clean stop's DISCONNECT goes out) and ends.
final class MQTTLoop: Sendable {
    private struct State {
        var started = false
        var parked = false
        var stopping = false
        var ended = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Turns taken after a stop, for a DISCONNECT to leave: each ends within a second.
    static let turnsAfterStop = 3

    private let state = Mutex(State())
    /// A socket pair that wakes the thread while it is parked: it reads one end, ``wake()`` writes the other.
    private let wakeDescriptor: Int32
    private let wakeWriter: Int32

    init() throws(MQTTError) {
        var ends: [Int32] = [-1, -1]
        // Close-on-exec from the start: a child spawned meanwhile must not inherit it.
        let flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, flags, 0, &ends) == 0 else {
            throw .library(call: "socketpair", code: errno, message: String(cString: strerror(errno)))
        }
        wakeDescriptor = ends[0]
        wakeWriter = ends[1]
    }

    deinit {
        close(wakeDescriptor)
        close(wakeWriter)
    }

    /// Starts the thread on `handle`; `onStopped` hears the code each time the connection ends (or
    /// a connect did not open one), with the thread parked until ``resume()``.
    func start(handle: MQTTClient.Handle, onStopped: @escaping @Sendable (Int32) -> Void) throws(ThreadStartError) {
        state.withLock { $0.started = true }
        do {
            try DetachedThread.start(named: "mqtt-loop") { [self] in
                run(handle, onStopped: onStopped)
                let waiters = state.withLock { state in
                    state.ended = true
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            }
        } catch {
            state.withLock { $0.ended = true }
            throw error
        }
    }

    private func run(_ handle: MQTTClient.Handle, onStopped: @Sendable (Int32) -> Void) {
        var turnsLeft = Self.turnsAfterStop
        while true {
            let (stopping, parked) = state.withLock { ($0.stopping, $0.parked) }
            if stopping {
                if parked || turnsLeft == 0 || mosquitto_socket(handle.pointer) < 0 { return }
                turnsLeft -= 1
            } else if parked {
                waitForWake()
                continue
            }
            let code = mosquitto_loop(handle.pointer, 1000, 1)
            guard code != MOSQ_ERR_SUCCESS.rawValue else { continue }
            let report = state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.parked = true
                return true
            }
            if report { onStopped(code) }
        }
    }

    /// Blocks until ``resume()`` or ``stop()`` writes the pair, and drains it.
    private func waitForWake() {
        var descriptor = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, -1) < 0 && errno == EINTR {}
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wakeDescriptor, &bytes, bytes.count) > 0 {}
    }

    private func wake() {
        var one: UInt8 = 1
        _ = write(wakeWriter, &one, 1)
    }

    /// Lets a parked thread turn again (the actor has reconnected, or tried to).
    func resume() {
        state.withLock { $0.parked = false }
        wake()
    }

    /// Whether ``stop()`` was asked: a connect must not open a socket after it.
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Asks the thread to end; ``waitUntilEnded()`` returns once it has.
    func stop() {
        state.withLock { $0.stopping = true }
        wake()
    }

    /// Returns once the thread has ended (at once if it never started).
    func waitUntilEnded() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                guard state.started, !state.ended else { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
