import Foundation
import JSONSupport
import Sensors
import Synchronization
import Testing
import Wire

@testable import Bridge

@Suite("Figures publisher: rounds on an injected clock, and no state older than one already published")
struct FiguresPublisherTests {
    /// A session whose figures are a number; one may hold its figures until the test lets them go.
    final class FakeSession: FiguresSource {
        let id = UUID()
        let publisher: FiguresPublisher
        private let figure = Mutex(0)
        private let held = Mutex<(waiting: Bool, release: CheckedContinuation<Void, Never>?)>((false, nil))
        private let started: AsyncStream<Void>
        private let startedInput: AsyncStream<Void>.Continuation

        init(publisher: FiguresPublisher) {
            self.publisher = publisher
            (started, startedInput) = AsyncStream.makeStream()
        }

        nonisolated var figuresWanted: Bool { true }

        /// The next figures wait in ``figures()`` until ``release()``: after taking the count of
        /// changes (figures worked out before a change), or before (worked out after it).
        func hold(beforeCount: Bool = false) {
            held.withLock { $0.waiting = true }
            holdsBeforeCount.withLock { $0 = beforeCount }
        }

        private let holdsBeforeCount = Mutex(false)

        /// Returns once a held round is working out this session's figures.
        func waitUntilHeld() async {
            for await _ in started { return }
        }

        func release() {
            let waiter = held.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state = (false, nil) }
                return state.release
            }
            waiter?.resume()
        }

        func figures() async -> (figures: LiveMessage, changes: Int)? {
            let beforeCount = holdsBeforeCount.withLock { $0 }
            if beforeCount { await waitIfHeld() }
            let changes = publisher.changeCount(of: id)
            let number = figure.withLock { value in
                value += 1
                return value
            }
            if !beforeCount { await waitIfHeld() }
            return (LiveMessage(kind: .session, session: id, payload: ["n": number]), changes)
        }

        private func waitIfHeld() async {
            guard held.withLock({ $0.waiting }) else { return }
            await withCheckedContinuation { continuation in
                held.withLock { $0.release = continuation }
                startedInput.yield()
            }
        }
    }

    struct Numbered: Decodable {
        var n: Int
    }

    struct Figures: Decodable {
        var sessions: [Numbered]
    }

    /// The next message a board gets: a round's numbers, or a change's number (negative).
    static func next(_ board: LiveSubscription) async throws -> [Int] {
        for await delivery in board {
            guard case .message(let message) = delivery else { continue }
            if message.kind == .figures {
                return try JSONText.decode(Figures.self, from: Data(message.json.utf8)).sessions.map(\.n)
            }
            return [-(try JSONText.decode(Numbered.self, from: Data(message.json.utf8)).n)]
        }
        throw CancellationError()
    }

    /// A publisher on a manual clock with two sessions in it, and a board reading figures and changes.
    static func bed() -> (ManualWallClock, LiveHub, FiguresPublisher, LiveSubscription, FakeSession, FakeSession) {
        let clock = ManualWallClock()
        let hub = LiveHub()
        let publisher = FiguresPublisher(clock: clock, hub: hub)
        let board = hub.subscribe(kinds: [.figures, .session])
        let a = FakeSession(publisher: publisher)
        let b = FakeSession(publisher: publisher)
        publisher.add(a)
        publisher.add(b)
        return (clock, hub, publisher, board, a, b)
    }

    /// Both sessions sampled and the rounds started, once the first round (holding both) waits
    /// for `held`'s figures.
    static func roundHolding(
        _ held: FakeSession, beside other: FakeSession, on publisher: FiguresPublisher, beforeCount: Bool = false
    ) async -> Task<Void, Never> {
        held.hold(beforeCount: beforeCount)
        publisher.sampled(other.id)
        publisher.sampled(held.id)
        // Both wait before the rounds run, so the first round holds both.
        let rounds = Task { await publisher.run() }
        await held.waitUntilHeld()
        return rounds
    }

    @Test(
        "the first samples go out at once; a second's samples from two sessions go out together when the second is over"
    )
    func rounds() async throws {
        let (clock, hub, publisher, board, a, b) = Self.bed()
        publisher.sampled(a.id)
        let rounds = Task { await publisher.run() }
        #expect(try await Self.next(board) == [1], "a quiet second: at once")
        clock.advance(by: 0.3)
        publisher.sampled(b.id)
        publisher.sampled(a.id)
        publisher.sampled(b.id)
        #expect(publisher.waitingCount == 2)
        // The round is armed for the second's end: the timer sleeps until then.
        await clock.waitUntilSleeping()
        clock.advance(by: 0.7)
        #expect(try await Self.next(board) == [1, 2], "one message, each session once, in the order they sampled")
        publisher.sampled(a.id)
        publisher.remove(a.id)
        publisher.sampled(b.id)
        await clock.waitUntilSleeping()
        clock.advance(by: 1)
        #expect(try await Self.next(board) == [2], "an ended session is in no round")
        rounds.cancel()
        await rounds.value
        hub.finish()
    }

    @Test(
        "a state change published while a round works the figures out: the round drops that session's, never showing the older state after it"
    )
    func staleFiguresAreDropped() async throws {
        let (clock, hub, publisher, board, a, b) = Self.bed()
        let rounds = await Self.roundHolding(a, beside: b, on: publisher)
        // The change goes out while a's figures (worked out before it) wait.
        publisher.publishState(LiveMessage(kind: .session, session: a.id, payload: ["n": 100]), of: a.id)
        a.release()
        #expect(try await Self.next(board) == [-100])
        #expect(try await Self.next(board) == [1], "b's figures go out, a's older ones do not")
        // The next round has a's figures again, worked out after the change.
        publisher.sampled(a.id)
        await clock.waitUntilSleeping()
        clock.advance(by: 1)
        #expect(try await Self.next(board) == [2])
        rounds.cancel()
        await rounds.value
        hub.finish()
    }

    @Test(
        "a session that ends while a round works its figures out: the round drops them, and a late state sent as news is dropped too"
    )
    func figuresOfAnEndedSessionAreDropped() async throws {
        let (_, hub, publisher, board, a, b) = Self.bed()
        // a's figures are worked out after its end went out: the count is the end's own.
        let rounds = await Self.roundHolding(a, beside: b, on: publisher, beforeCount: true)
        let before = publisher.changeCount(of: a.id)
        publisher.remove(a.id)
        publisher.publishState(LiveMessage(kind: .session, session: a.id, payload: ["n": 100]), of: a.id)
        publisher.publishState(
            LiveMessage(kind: .session, session: a.id, payload: ["n": 50]), of: a.id, ifNoChangeSince: before)
        a.release()
        #expect(try await Self.next(board) == [-100], "the end, and no late state after it")
        #expect(try await Self.next(board) == [1], "b's figures only: none of a session that ended")
        rounds.cancel()
        await rounds.value
        hub.finish()
    }
}
