import CDBus
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// Drives one libdbus connection on a thread of its own: polls the connection's watches and an
/// self-pipe for wake-ups, fires its timeouts (method-call timeouts live there), and dispatches.
///
/// libdbus calls the watch, timeout and wake-up functions from any thread with its connection
/// lock held; they only touch this loop's lists under a mutex and poke the pipe. Dispatch
/// happens only on the loop thread, never re-entrantly from a libdbus callback.
///
/// It is also a `TaskExecutor`: a task that prefers it runs its jobs on the loop thread, between
/// dispatches, so a consumer of signals is resumed without waking another thread.
final class MainLoop: TaskExecutor, @unchecked Sendable {
    private struct TimeoutEntry {
        let timeout: OpaquePointer
        var armedAt: ContinuousClock.Instant
    }

    /// `@unchecked`: the libdbus handles in it are only used under the mutex or on the loop thread.
    private struct Lists: @unchecked Sendable {
        var watches: [OpaquePointer] = []
        var timeouts: [TimeoutEntry] = []
        var stopped = false
        var work: [@Sendable () -> Void] = []
        /// Jobs of tasks that prefer this loop as their executor.
        var jobs: [UnownedJob] = []
        /// Set when the loop thread ends: jobs go to the global executor from then on.
        var ended = false
    }

    private let lists = Mutex(Lists())
    /// A pipe: the loop polls the read end; ``wake()`` writes a byte to the other.
    private let wakeDescriptor: Int32
    private let wakeWriter: Int32
    private var connection: OpaquePointer?
    /// The loop thread's `pthread_self()` while it runs (0 before and after).
    private let loopThread = Atomic<UInt>(0)
    private let finished = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let done = Mutex(false)

    /// The lists under the lock; libdbus callbacks come from any thread.
    private func withLists<Result: Sendable>(_ body: (inout Lists) -> Result) -> Result {
        lists.withLock { body(&$0) }
    }

    init() {
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeDescriptor = ends[0]
        wakeWriter = ends[1]
    }

    deinit {
        close(wakeDescriptor)
        close(wakeWriter)
    }

    /// Installs the callbacks on `connection` and starts the loop thread; throws when the thread
    /// cannot be started (the loop then counts as ended: nothing will run on it).
    func start(connection: OpaquePointer) throws(ThreadStartError) {
        self.connection = connection
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            connection,
            { watch, context in
                guard let watch, let context else { return 0 }
                Unmanaged<MainLoop>.fromOpaque(context).takeUnretainedValue().add(watch: watch)
                return 1
            },
            { watch, context in
                guard let watch, let context else { return }
                Unmanaged<MainLoop>.fromOpaque(context).takeUnretainedValue().remove(watch: watch)
            },
            { _, context in
                guard let context else { return }
                Unmanaged<MainLoop>.fromOpaque(context).takeUnretainedValue().wake()
            }, context, nil)
        dbus_connection_set_timeout_functions(
            connection,
            { timeout, context in
                guard let timeout, let context else { return 0 }
                Unmanaged<MainLoop>.fromOpaque(context).takeUnretainedValue().add(timeout: timeout)
                return 1
            },
            { timeout, context in
                guard let timeout, let context else { return }
                Unmanaged<MainLoop>.fromOpaque(context).takeUnretainedValue().remove(timeout: timeout)
            },
            { timeout, context in
                guard let timeout, let context else { return }
                Unmanaged<MainLoop>.fromOpaque(context).takeUnretainedValue().rearm(timeout: timeout)
            }, context, nil)
        dbus_connection_set_wakeup_main_function(
            connection,
            { context in
                guard let context else { return }
                Unmanaged<MainLoop>.fromOpaque(context).takeUnretainedValue().wake()
            }, context, nil)
        dbus_connection_set_dispatch_status_function(
            connection,
            { _, _, context in
                guard let context else { return }
                Unmanaged<MainLoop>.fromOpaque(context).takeUnretainedValue().wake()
            }, context, nil)
        do {
            try DetachedThread.start(named: "hrbridge.dbus") { [self] in run() }
        } catch {
            done.withLock { $0 = true }
            throw error
        }
    }

    /// Runs `work` on the loop thread.
    func perform(_ work: @escaping @Sendable () -> Void) {
        withLists { $0.work.append(work) }
        wake()
    }

    /// Whether the caller runs on the loop thread.
    var isLoopThread: Bool { loopThread.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self())) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = withLists { lists in
            if !lists.ended { lists.jobs.append(job) }
            return !lists.ended
        }
        // After the loop ended the task goes on on the global executor rather than hanging.
        guard accepted else { return globalConcurrentExecutor.enqueue(job) }
        wake()
    }

    /// Asks the loop to stop after its current iteration, without waiting.
    func requestStop() {
        withLists { $0.stopped = true }
        wake()
    }

    /// Stops the loop after its current iteration and waits for the thread to end.
    func stop() async {
        let alreadyDone = done.withLock { $0 }
        withLists { $0.stopped = true }
        wake()
        guard !alreadyDone else { return }
        await withCheckedContinuation { continuation in
            let finishedNow = done.withLock { done -> Bool in
                if !done { finished.withLock { $0 = continuation } }
                return done
            }
            if finishedNow { continuation.resume() }
        }
    }

    /// Whether the loop thread is still running.
    var isRunning: Bool { !done.withLock { $0 } }

    /// Interrupts the loop's poll. Not needed from the loop thread itself (libdbus calls back on it
    /// while dispatching): it looks at its lists and the dispatch status before polling again.
    func wake() {
        if isLoopThread { return }
        var one: UInt8 = 1
        _ = write(wakeWriter, &one, 1)
    }

    private func add(watch: OpaquePointer) { withLists { $0.watches.append(watch) }; wake() }
    private func remove(watch: OpaquePointer) { withLists { $0.watches.removeAll { $0 == watch } }; wake() }

    private func add(timeout: OpaquePointer) {
        withLists { $0.timeouts.append(TimeoutEntry(timeout: timeout, armedAt: .now)) }
        wake()
    }

    private func remove(timeout: OpaquePointer) {
        withLists { $0.timeouts.removeAll { $0.timeout == timeout } }
        wake()
    }

    private func rearm(timeout: OpaquePointer) {
        withLists { lists in
            for index in lists.timeouts.indices where lists.timeouts[index].timeout == timeout {
                lists.timeouts[index].armedAt = .now
            }
        }
        wake()
    }

    private func run() {
        guard let connection else { return }
        var descriptors: [pollfd] = []
        var polled: [OpaquePointer] = []
        var drained = [UInt8](repeating: 0, count: 64)
        loopThread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
        while true {
            let snapshot = withLists { lists in
                defer {
                    lists.work = []
                    lists.jobs = []
                }
                return lists
            }
            let (watches, timeouts, stopped, work) = (
                snapshot.watches, snapshot.timeouts, snapshot.stopped, snapshot.work
            )
            for job in work { job() }
            for job in snapshot.jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            // A job may have released the connection and asked to stop: check again before polling.
            if stopped || withLists({ $0.stopped }) { break }
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
            polled.removeAll(keepingCapacity: true)
            for watch in watches where dbus_watch_get_enabled(watch) != 0 {
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                if flags & 1 != 0 { events |= Int16(POLLIN) }
                if flags & 2 != 0 { events |= Int16(POLLOUT) }
                descriptors.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
                polled.append(watch)
            }
            var waitMilliseconds: Int32 = -1
            let now = ContinuousClock.now
            for entry in timeouts where dbus_timeout_get_enabled(entry.timeout) != 0 {
                let deadline = entry.armedAt + .milliseconds(Int(dbus_timeout_get_interval(entry.timeout)))
                let remaining = deadline - now
                let milliseconds = max(
                    0,
                    Int32(
                        clamping: remaining.components.seconds * 1000
                            + remaining.components.attoseconds / 1_000_000_000_000_000))
                waitMilliseconds = waitMilliseconds < 0 ? milliseconds : min(waitMilliseconds, milliseconds)
            }
            if dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS { waitMilliseconds = 0 }
            // Work added from this thread (a job resumed by a dispatch) did not wake the loop.
            if withLists({ !$0.work.isEmpty || !$0.jobs.isEmpty }) { waitMilliseconds = 0 }
            let ready = poll(&descriptors, nfds_t(descriptors.count), waitMilliseconds)
            if ready < 0 && errno != EINTR { break }
            if descriptors[0].revents != 0 {
                while read(wakeDescriptor, &drained, 64) > 0 {}
            }
            for (index, watch) in polled.enumerated() {
                let revents = descriptors[index + 1].revents
                guard revents != 0 else { continue }
                // A watch handled earlier in this round may have removed this one.
                guard withLists({ $0.watches.contains(watch) }) else { continue }
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= 1 }
                if revents & Int16(POLLOUT) != 0 { flags |= 2 }
                if revents & Int16(POLLERR) != 0 { flags |= 4 }
                if revents & Int16(POLLHUP) != 0 { flags |= 8 }
                dbus_watch_handle(watch, flags)
            }
            let expiry = ContinuousClock.now
            for entry in timeouts where dbus_timeout_get_enabled(entry.timeout) != 0 {
                guard expiry >= entry.armedAt + .milliseconds(Int(dbus_timeout_get_interval(entry.timeout))) else {
                    continue
                }
                guard withLists({ $0.timeouts.contains { $0.timeout == entry.timeout } }) else { continue }
                rearm(timeout: entry.timeout)
                dbus_timeout_handle(entry.timeout)
            }
            while dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
                dbus_connection_dispatch(connection)
            }
        }
        // Work queued while the last round ran (close() from another thread, say, racing a job
        // that ran here) still runs: it closes and releases the connection.
        while case let work = withLists({ lists in
            defer { lists.work = [] }
            return lists.work
        }), !work.isEmpty {
            for job in work { job() }
        }
        loopThread.store(0, ordering: .relaxed)
        let stranded = withLists { lists in
            lists.ended = true
            defer { lists.jobs = [] }
            return lists.jobs
        }
        for job in stranded { globalConcurrentExecutor.enqueue(job) }
        let waiter = done.withLock { done -> CheckedContinuation<Void, Never>? in
            done = true
            return finished.withLock { continuation in
                defer { continuation = nil }
                return continuation
            }
        }
        waiter?.resume()
    }
}
