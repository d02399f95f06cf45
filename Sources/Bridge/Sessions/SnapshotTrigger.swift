import Synchronization

/// Asks for a session's figures to be published when samples arrive, at most once a second (the
/// elapsed time, averages, zone and energy a dashboard shows), without any timer, on the tick every
/// session shares (``RefreshPacer``).
///
/// ``poke()`` is called from the builder's sample sink, which cannot wait: it only queues a
/// request, and the session's own task (``BridgeSession``, which stops and awaits it) publishes.
final class SnapshotTrigger: Sendable {
    /// One element per publication due; a request not taken yet absorbs the next ones.
    let requests: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let pacer: RefreshPacer
    /// Whether a publication has a reader now (nil: always); set once the session is wired.
    private let wanted = Mutex<(@Sendable () -> Bool)?>(nil)

    init(pacer: RefreshPacer = RefreshPacer()) {
        self.pacer = pacer
        (requests, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Requests publications only while `check` says one has a reader: figures nobody reads are
    /// not worked out, and their task is not woken.
    func whenWanted(_ check: @escaping @Sendable () -> Bool) { wanted.withLock { $0 = check } }

    /// Samples arrived: when the shared tick is due, requests a publication of every session that
    /// had samples since the last one, this one included.
    func poke() {
        for trigger in pacer.samplesArrived(for: self) { trigger.request() }
    }

    private func request() {
        if wanted.withLock({ $0 })?() ?? true { continuation.yield() }
    }

    /// No more requests: ``requests`` ends (the session is stopping).
    func finish() {
        pacer.forget(self)
        continuation.finish()
    }
}
