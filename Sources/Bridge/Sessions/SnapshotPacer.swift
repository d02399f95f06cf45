import Synchronization

/// The daemon's sessions' ``SnapshotTrigger``s, publishing in rounds (``SnapshotPacing``): the
/// first samples a second after the last round start the next one, for every session that had
/// samples since. No timer: a round is started by samples, as a lone trigger's publication was.
final class SnapshotPacer: Sendable {
    /// A trigger, held weakly: a session dropped without stopping leaves nothing behind.
    private struct Member {
        weak var trigger: SnapshotTrigger?
    }

    private struct State {
        var pacing = SnapshotPacing<ObjectIdentifier>()
        var members: [ObjectIdentifier: Member] = [:]
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> ContinuousClock.Instant

    /// A pacer on real time, or on `now` (tests). Real time on purpose: this paces what a
    /// dashboard redraws, whatever the simulator's speed.
    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.now = now
    }

    func add(_ trigger: SnapshotTrigger) {
        state.withLock { $0.members[ObjectIdentifier(trigger)] = Member(trigger: trigger) }
    }

    func remove(_ trigger: SnapshotTrigger) {
        let id = ObjectIdentifier(trigger)
        state.withLock { state in
            state.members[id] = nil
            state.pacing.remove(id)
        }
    }

    /// `trigger`'s session has samples: the triggers whose sessions publish now (none, or a round).
    func poke(_ trigger: SnapshotTrigger) -> [SnapshotTrigger] {
        let now = now()
        return state.withLock { state in
            state.pacing.poke(ObjectIdentifier(trigger), at: now).compactMap { state.members[$0]?.trigger }
        }
    }

    /// Sessions waiting for the next round.
    var waitingCount: Int { state.withLock { $0.pacing.waitingCount } }
}
