import Foundation
import Sensors
import Synchronization

/// Publishes the sessions' figures in rounds (``FiguresPacing``): once a second at most, every
/// session that had samples since the last round, in one `figures` message per reader
/// (``LiveHub/publishFigures(_:)``). Fifty sessions each on their own second made a board fifty
/// messages a second; a round makes it one (Benchmarks/README.md).
///
/// Rounds run on their own clock: real time in the daemon, whatever the simulator's speed, as
/// they pace what a board redraws. Sessions publish their state changes through
/// ``publishState(_:of:)``, so figures worked out before a change, or of a session that ended,
/// never reach a reader after it.
final class FiguresPublisher: Sendable {
    /// A session, held weakly: one dropped without stopping leaves nothing behind.
    private struct Member {
        weak var session: (any FiguresSource)?
    }

    private struct State {
        var pacing = FiguresPacing()
        var members: [UUID: Member] = [:]
    }

    /// What decides whether figures worked out a moment ago may still go out.
    private struct Changes {
        /// Each session's count of state changes published.
        var counts: [UUID: Int] = [:]
        /// Sessions that ended (``remove(_:)``): no figures of theirs go out any more.
        var ended: Set<UUID> = []

        func current(_ id: UUID, since count: Int) -> Bool { !ended.contains(id) && counts[id, default: 0] == count }
    }

    private let state = Mutex(State())
    /// Held while a change or a round is handed to the hub: their order is the readers' order.
    private let changes = Mutex(Changes())
    private let timer: DeadlineTimer
    private let clock: any WallClock
    private let hub: LiveHub

    /// Rounds timed on `clock`, published on `hub`.
    init(clock: any WallClock, hub: LiveHub) {
        self.clock = clock
        self.hub = hub
        timer = DeadlineTimer(clock: clock)
    }

    /// `session` takes part in rounds from now on.
    func add(_ session: any FiguresSource) {
        state.withLock { $0.members[session.id] = Member(session: session) }
    }

    /// `id` ended: no round holds its figures any more, and a round that worked them out before
    /// drops them (its last state, published after this, is the last word).
    func remove(_ id: UUID) {
        state.withLock { state in
            state.members[id] = nil
            state.pacing.remove(id)
        }
        changes.withLock { _ = $0.ended.insert(id) }
    }

    /// `id` is gone (no round can hold it: a round keeps its sessions until it is over).
    func forget(_ id: UUID) {
        state.withLock { state in
            state.members[id] = nil
            state.pacing.remove(id)
        }
        changes.withLock { changes in
            changes.counts[id] = nil
            changes.ended.remove(id)
        }
    }

    /// `id`'s samples arrived; called from the sample sink, which cannot wait.
    func sampled(_ id: UUID) {
        // The clock is read under the lock: a date read before a round that got the lock first
        // would look like a clock set back.
        let clock = clock
        if let due = state.withLock({ $0.pacing.sampled(id, at: clock.now()) }) { timer.arm(due) }
    }

    /// A session's state changed: published to every reader of `session`, after any round that
    /// holds figures worked out before the change (and any later round drops those).
    func publishState(_ message: LiveMessage, of id: UUID) {
        changes.withLock { changes in
            changes.counts[id, default: 0] += 1
            hub.publish(message)
        }
    }

    /// A state worked out while `count` changes had gone out, published only if no change (nor
    /// the end) went out since: a late copy never follows a newer state.
    func publishState(_ message: LiveMessage, of id: UUID, ifNoChangeSince count: Int) {
        changes.withLock { changes in
            guard changes.current(id, since: count) else { return }
            changes.counts[id, default: 0] += 1
            hub.publish(message)
        }
    }

    /// How many state changes `id` has published: taken before its figures are worked out.
    func changeCount(of id: UUID) -> Int { changes.withLock { $0.counts[id, default: 0] } }

    /// Runs the rounds until the task is cancelled.
    func run() async {
        await timer.run { [weak self] in await self?.round() }
    }

    /// Sessions waiting for the next round.
    var waitingCount: Int { state.withLock { $0.pacing.waitingCount } }

    private func round() async {
        let clock = clock
        let due = state.withLock { state in
            state.pacing.roundDue(at: clock.now()).compactMap { state.members[$0]?.session }
        }
        // Each session's figures at once: one slow session does not hold the others'.
        let found = await withTaskGroup(of: (Int, (figures: LiveMessage, changes: Int)?).self) { group in
            for (index, session) in due.enumerated() where session.figuresWanted {
                group.addTask { (index, await session.figures()) }
            }
            var found: [(Int, (figures: LiveMessage, changes: Int))] = []
            for await (index, part) in group {
                if let part { found.append((index, part)) }
            }
            return found.sorted { $0.0 < $1.0 }.map(\.1)
        }
        guard !found.isEmpty else { return }
        let hub = hub
        changes.withLock { changes in
            // Figures worked out before a change that went out since would show a stale state.
            let current = found.filter { part in
                part.figures.session.map { changes.current($0, since: part.changes) } ?? false
            }
            hub.publishFigures(current.map(\.figures))
        }
    }
}
