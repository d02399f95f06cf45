import Synchronization
import Testing

@testable import PostgresStore

@Suite("A store call past its deadline answers its caller at once")
struct DeadlineRaceTests {
    struct Expired: Error {}
    struct Refused: Error {}

    /// An operation that says it started, then waits until the test releases it, cancelled or not
    /// (as a postgres-nio query on a connection closed under it did).
    final class StuckOperation: Sendable {
        let started: AsyncStream<Void>
        private let startedContinuation: AsyncStream<Void>.Continuation
        private let held = Mutex<CheckedContinuation<Void, Never>?>(nil)

        init() { (started, startedContinuation) = AsyncStream.makeStream() }

        func run() async -> Int {
            await withCheckedContinuation { continuation in
                held.withLock { $0 = continuation }
                startedContinuation.yield()
            }
            return 1
        }

        func release() { held.withLock { $0 }?.resume() }
    }

    @Test(
        "an operation that ignores cancellation: the deadline's error as soon as the deadline passes, not when the operation ends",
        .timeLimit(.minutes(1)))
    func stuckOperation() async {
        let stuck = StuckOperation()
        await #expect(throws: Expired.self) {
            try await DeadlineRace.run(
                { await stuck.run() },
                deadline: { for await _ in stuck.started { return } },
                expired: { Expired() })
        }
        stuck.release()
    }

    @Test("an operation that ends first: its value, or its own error; the deadline never counts")
    func operationFirst() async throws {
        let never = AsyncStream<Void>.makeStream()
        let value = try await DeadlineRace.run(
            { 42 }, deadline: { for await _ in never.stream {} }, expired: { Expired() })
        #expect(value == 42)
        await #expect(throws: Refused.self) {
            try await DeadlineRace.run(
                { () async throws -> Int in throw Refused() }, deadline: { for await _ in never.stream {} },
                expired: { Expired() })
        }
    }

    @Test("a cancelled caller gets CancellationError, whatever the operation does", .timeLimit(.minutes(1)))
    func cancelledCaller() async {
        let stuck = StuckOperation()
        let never = AsyncStream<Void>.makeStream()
        let caller = Task {
            try await DeadlineRace.run(
                { await stuck.run() }, deadline: { for await _ in never.stream {} }, expired: { Expired() })
        }
        for await _ in stuck.started { break }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        stuck.release()
    }
}
