import Synchronization

/// Asks for a session's figures to be published when samples arrive, at most once a second (the
/// elapsed time, averages, zone and energy a dashboard shows), without any timer; the sessions
/// sharing a ``SnapshotPacer`` publish in the same rounds.
///
/// ``poke()`` is called from the builder's sample sink, which cannot wait: it only queues
/// requests, and each session's own task (``BridgeSession``, which stops and awaits it) publishes.
final class SnapshotTrigger: Sendable {
    /// One element per publication due; a request not taken yet absorbs the next ones.
    let requests: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let pacer: SnapshotPacer
    /// Whether a publication has a reader now (nil: always); set once the session is wired.
    private let wanted = Mutex<ReaderCheck?>(nil)

    /// The check, inside a struct: a closure kept in a `Mutex` as it is comes out of every
    /// `withLock` wrapped in two more reabstraction thunks (the `inout` goes through a temporary
    /// and is written back), so a session's check, read once a second, grew without bound: heap,
    /// time per call and stack depth (640 KB deeper after 10,000 reads, SnapshotTriggerTests).
    private struct ReaderCheck: Sendable {
        let hasReader: @Sendable () -> Bool
    }

    /// A trigger publishing in `pacer`'s rounds (by default, alone).
    init(pacer: SnapshotPacer = SnapshotPacer()) {
        (requests, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.pacer = pacer
        pacer.add(self)
    }

    /// Requests publications only while `check` says one has a reader: figures nobody reads are
    /// not worked out, and their task is not woken.
    func whenWanted(_ check: @escaping @Sendable () -> Bool) { wanted.withLock { $0 = ReaderCheck(hasReader: check) } }

    /// Samples arrived: when the pacer's next round is due, requests a publication from every
    /// session of the round (this one among them) that has a reader.
    func poke() {
        for trigger in pacer.poke(self) { trigger.requestIfWanted() }
    }

    private func requestIfWanted() {
        if hasReader { continuation.yield() }
    }

    /// Whether a publication has a reader now (true until the session is wired).
    var hasReader: Bool { wanted.withLock({ $0 })?.hasReader() ?? true }

    /// No more requests: ``requests`` ends (the session is stopping).
    func finish() {
        pacer.remove(self)
        continuation.finish()
    }

    deinit { pacer.remove(self) }
}
