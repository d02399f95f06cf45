import Foundation
import Sensors
import Synchronization

/// Says when the sessions' figures (elapsed time, averages, zone, energy) go out again: once a
/// second while samples flow, every session that had samples in that second together, on the
/// whole second of `clock`. A class board gets the class in one burst — each client's writer
/// wakes once, not once per athlete — and a second with no samples arms nothing (no polling).
///
/// ``samplesArrived(for:)`` is called from the builders' sample sinks, which cannot wait.
final class FiguresRefresher: Sendable {
    private struct State {
        var due: Set<UUID> = []
        var armed = false
    }

    private let clock: any WallClock
    private let timer: DeadlineTimer
    private let state = Mutex(State())

    /// Real time by default: this paces what a dashboard redraws, whatever the simulator's speed.
    init(clock: any WallClock = SystemWallClock()) {
        self.clock = clock
        timer = DeadlineTimer(clock: clock)
    }

    /// The first whole second after `date`.
    static func nextRefresh(after date: Date) -> Date {
        Date(timeIntervalSinceReferenceDate: (date.timeIntervalSinceReferenceDate + 1).rounded(.down))
    }

    /// A session's samples arrived: its figures go out at the next whole second.
    func samplesArrived(for session: UUID) {
        let arm = state.withLock { state -> Bool in
            state.due.insert(session)
            defer { state.armed = true }
            return !state.armed
        }
        if arm { timer.arm(Self.nextRefresh(after: clock.now())) }
    }

    /// Hands `refresh` the sessions due at each whole second, until the task is cancelled.
    func run(_ refresh: @escaping @Sendable (Set<UUID>) async -> Void) async {
        await timer.run { [self] in
            let due = state.withLock { state -> Set<UUID> in
                state.armed = false
                defer { state.due = [] }
                return state.due
            }
            if !due.isEmpty { await refresh(due) }
        }
    }
}
