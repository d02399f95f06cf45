#if canImport(Glibc)
    import Glibc
#endif

/// Starts named threads for blocking loops and calls (the D-Bus loop, notification sockets,
/// libmosquitto's connects and joins).
///
/// A plain pthread: Foundation's `Thread` would pull all of Foundation (and its ICU tables) into
/// every client of the adapter, which costs several megabytes of resident memory.
public enum DetachedThread {
    /// Runs `body` on a new detached thread called `name` (at most 15 bytes are kept).
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<ThreadStart>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, start)
        precondition(created == 0, "cannot start thread \(name) (error \(created))")
        pthread_detach(thread)
    }

    /// Runs a blocking `body` on a thread of its own and returns its result, so the caller's
    /// thread (one of Swift concurrency's few) is free while it blocks.
    public static func run<Result: Sendable>(
        named name: String, _ body: @escaping @Sendable () -> Result
    ) async -> Result {
        await withCheckedContinuation { continuation in
            start(named: name) { continuation.resume(returning: body()) }
        }
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
