#if canImport(Glibc)
    import Glibc
#endif

/// Starts named threads for blocking loops and calls (the D-Bus loop, notification sockets,
/// libmosquitto's connects and joins).
///
/// A plain pthread: Foundation's `Thread` would pull all of Foundation (and its ICU tables) into
/// every client of the adapter, which costs several megabytes of resident memory.
public enum DetachedThread {
    /// Runs `body` on a new detached thread called `name` (at most 15 bytes are kept), or throws,
    /// without running `body`, when the system will not start one.
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
        try start(named: name, stackBytes: nil, body)
    }

    /// ``start(named:_:)`` with a stack of `stackBytes` (nil: the system's default).
    public static func start(
        named name: String, stackBytes: Int?, _ body: @escaping @Sendable () -> Void
    ) throws(ThreadStartError) {
        let start = Unmanaged.passRetained(ThreadStart(name: name, body: body))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackBytes {
            let code = pthread_attr_setstacksize(&attributes, stackBytes)
            guard code == 0 else {
                start.release()
                throw ThreadStartError(name: name, code: code)
            }
        }
        var thread = pthread_t()
        let created = pthread_create(
            &thread, &attributes,
            { context in
                guard let context else { return nil }
                Unmanaged<ThreadStart>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, start.toOpaque())
        guard created == 0 else {
            // The thread never ran: its start is ours to release.
            start.release()
            throw ThreadStartError(name: name, code: created)
        }
        pthread_detach(thread)
    }

    /// Runs a blocking `body` on a thread of its own and returns its result, so the caller's
    /// thread (one of Swift concurrency's few) is free while it blocks; throws, without running
    /// `body`, when the system will not start the thread.
    public static func run<Result: Sendable>(
        named name: String, _ body: @escaping @Sendable () -> Result
    ) async throws(ThreadStartError) -> Result {
        try await run(named: name, stackBytes: nil, body)
    }

    /// ``run(named:_:)`` with a stack of `stackBytes` (nil: the system's default).
    public static func run<Result: Sendable>(
        named name: String, stackBytes: Int?, _ body: @escaping @Sendable () -> Result
    ) async throws(ThreadStartError) -> Result {
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Swift.Result<Result, ThreadStartError>, Never>) in
            do throws(ThreadStartError) {
                try start(named: name, stackBytes: stackBytes) { continuation.resume(returning: .success(body())) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try outcome.get()
    }
}

/// What a new thread runs: its name, then its body.
private final class ThreadStart: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }

    func run() {
        nameCurrentThread()
        body()
    }

    /// Names the thread (shown by top, perf and gdb) through `/proc`: Glibc's module has no
    /// `pthread_setname_np`, and `prctl` is variadic, which Swift cannot call.
    private func nameCurrentThread() {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        // The kernel keeps 15 bytes.
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
