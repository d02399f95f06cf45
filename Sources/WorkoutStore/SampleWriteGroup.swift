import Foundation
import Synchronization

/// Group commit for samples: appends that arrive while a write is under way go together in the
/// next transaction. Every session's streamer flushes on the same second, so a gateway recording 50
/// athletes commits once or twice a second instead of 50 times.
final class SampleWriteGroup: Sendable {
    private struct Waiting {
        let batch: SampleBatch
        let continuation: CheckedContinuation<Result<Int, StoreError>, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = false
        var held = false
        var transactions = 0
        /// Tests wait here until that many appends wait.
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        mutating func waitersToWake() -> [CheckedContinuation<Void, Never>] {
            let ready = waiters.filter { waiting.count >= $0.count }.map(\.continuation)
            waiters.removeAll { waiting.count >= $0.count }
            return ready
        }
    }

    private let backend: any StoreBackend
    private let state = Mutex(State())
    /// The samples one transaction takes at most (a group after an outage can hold many sessions'
    /// backlogs); a single larger batch still goes whole.
    let maximumSamplesPerTransaction: Int

    init(backend: any StoreBackend, maximumSamplesPerTransaction: Int = 50_000) {
        self.backend = backend
        self.maximumSamplesPerTransaction = maximumSamplesPerTransaction
    }

    /// Transactions written so far.
    var transactions: Int { state.withLock { $0.transactions } }

    /// Stores `batch`, with whatever else is waiting; returns how many of its samples were new.
    /// A write that began ends whole even when the caller's task is cancelled.
    func append(_ batch: SampleBatch) async throws(StoreError) -> Int {
        let result = await withCheckedContinuation { continuation in
            let (starts, ready) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                state.waiting.append(Waiting(batch: batch, continuation: continuation))
                let ready = state.waitersToWake()
                guard !state.writing else { return (false, ready) }
                state.writing = true
                return (true, ready)
            }
            for waiter in ready { waiter.resume() }
            if starts { Task { await self.writeWaiting() } }
        }
        return try result.get()
    }

    /// Holds every append back until ``release()`` (tests: a group formed on purpose).
    func hold() {
        state.withLock { state in
            precondition(!state.writing, "hold an idle group")
            state.writing = true
            state.held = true
        }
    }

    /// Writes what waited while held, in one transaction.
    func release() {
        let starts = state.withLock { state -> Bool in
            guard state.held else { return false }
            state.held = false
            state.writing = !state.waiting.isEmpty
            return state.writing
        }
        if starts { Task { await self.writeWaiting() } }
    }

    /// Returns once `count` appends wait.
    func waitUntilWaiting(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                guard state.waiting.count < count else { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Writes groups until nothing waits.
    private func writeWaiting() async {
        while true {
            let group = state.withLock { state -> [Waiting] in
                guard !state.waiting.isEmpty else {
                    state.writing = false
                    return []
                }
                var taken = 0
                var samples = 0
                for waiting in state.waiting {
                    if taken > 0 && samples + waiting.batch.samples.count > maximumSamplesPerTransaction { break }
                    taken += 1
                    samples += waiting.batch.samples.count
                }
                defer { state.waiting.removeFirst(taken) }
                return Array(state.waiting.prefix(taken))
            }
            guard !group.isEmpty else { return }
            await write(group)
        }
    }

    private func write(_ group: [Waiting]) async {
        state.withLock { $0.transactions += 1 }
        do {
            let counts = try await backend.append(batches: group.map(\.batch))
            for (waiting, count) in zip(group, counts) { waiting.continuation.resume(returning: .success(count)) }
        } catch {
            guard group.count > 1 else {
                group[0].continuation.resume(returning: .failure(error))
                return
            }
            // One batch the store refuses (its workout deleted meanwhile) must not refuse the
            // others: each goes again on its own and gets its own answer.
            for waiting in group {
                state.withLock { $0.transactions += 1 }
                do {
                    let count = try await backend.append(batches: [waiting.batch])
                    waiting.continuation.resume(returning: .success(count.first ?? 0))
                } catch {
                    waiting.continuation.resume(returning: .failure(error))
                }
            }
        }
    }
}
