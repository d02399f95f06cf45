import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM, caught from the moment the watch is made, so a user's interrupt is never
/// lost or fatal, whatever the command is waiting for.
///
/// The rule for every command that runs until stopped (`monitor`, `scan`, `workout run`): an
/// interrupt is how a user ends it, so it ends cleanly, prints what it prints at its end (the
/// stats line, the summary) and exits 0. While the command is still getting ready (waiting for
/// bluetoothd, an adapter or a strap) an interrupt runs `beforeReady`, which ends the process;
/// after ``ready()`` it is delivered on ``signals`` for the command to finish its own way.
final class InterruptWatch: Sendable {
    /// The signals received after ``ready()`` (one consumer).
    let signals: AsyncStream<Int32>
    private let isReady = Flag()
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    /// Shared with the signal handlers.
    private final class Flag: Sendable {
        let value = Mutex(false)
    }

    /// Starts catching SIGINT and SIGTERM; `beforeReady` runs (on a signal queue) for one that
    /// arrives before ``ready()`` and must end the process.
    init(beforeReady: @escaping @Sendable (Int32) -> Never) {
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self, bufferingPolicy: .bufferingNewest(1))
        self.signals = signals
        let isReady = isReady
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler {
                guard isReady.value.withLock({ $0 }) else { beforeReady(number) }
                continuation.yield(number)
            }
            source.resume()
            return source
        }
    }

    /// From now on an interrupt is delivered on ``signals`` instead of ending the process.
    func ready() { isReady.value.withLock { $0 = true } }

    deinit { sources.forEach { $0.cancel() } }
}
