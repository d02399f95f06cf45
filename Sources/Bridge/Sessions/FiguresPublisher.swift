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
/// ``publishState(_:of:)``, so figures worked out before a change never reach a reader after it.
final class FiguresPublisher: Sendable {
    /// A session, held weakly: one dropped without stopping leaves nothing behind.
    private struct Member {
        weak var session: (any FiguresSource)?
    }

    private struct State {
        var pacing = FiguresPacing()
        var members: [UUID: Member] = [:]
    }

    private let state = Mutex(State())
    /// Each session's count of state changes published, read and written under this lock only, and
    /// held while a change or a round is handed to the hub: their order is the readers' order.
    private let changes = Mutex([UUID: Int]())
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

    /// `id` ended: no round holds its figures any more. Its count of changes stays, so a round
    /// that worked its figures out before the end still sees the end go out.
    func remove(_ id: UUID) {
        state.withLock { state in
            state.members[id] = nil
            state.pacing.remove(id)
        }
    }

    /// `id` is gone (no round can hold it: a round keeps its sessions until it is over).
    func forget(_ id: UUID) {
        remove(id)
        changes.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// `id`'s samples arrived; called from the sample sink, which cannot wait.
    func sampled(_ id: UUID) {
        let now = clock.now()
        if let due = state.withLock({ $0.pacing.sampled(id, at: now) }) { timer.arm(due) }
    }

    /// A session's state changed: published to every reader of `session`, after any round that
    /// holds figures worked out before the change (and any later round drops those).
    func publishState(_ message: LiveMessage, of id: UUID) {
        changes.withLock { changes in
            changes[id, default: 0] += 1
            hub.publish(message)
        }
    }

    /// How many state changes `id` has published: taken before its figures are worked out.
    func changeCount(of id: UUID) -> Int { changes.withLock { $0[id] ?? 0 } }

    /// Runs the rounds until the task is cancelled.
    func run() async {
        await timer.run { [weak self] in await self?.round() }
    }

    /// Sessions waiting for the next round.
    var waitingCount: Int { state.withLock { $0.pacing.waitingCount } }

    private func round() async {
        let now = clock.now()
        let due = state.withLock { state in
            state.pacing.roundDue(at: now).compactMap { state.members[$0]?.session }
        }
        var parts: [(figures: LiveMessage, changes: Int)] = []
        for session in due where session.figuresWanted {
            if let part = await session.figures() { parts.append(part) }
        }
        guard !parts.isEmpty else { return }
        let hub = hub
        changes.withLock { changes in
            // Figures worked out before a change that went out since would show a stale state.
            let current = parts.filter { part in part.figures.session.map { changes[$0] ?? 0 } == part.changes }
            hub.publishFigures(current.map(\.figures))
        }
    }
}
