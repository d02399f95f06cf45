import Synchronization

/// The sessions' shared ``RefreshSchedule``, on real time on purpose: it paces what a dashboard
/// redraws, whatever the simulator's speed.
final class RefreshPacer: Sendable {
    private struct State {
        var schedule = RefreshSchedule<ObjectIdentifier, ContinuousClock.Instant>()
        var triggers: [ObjectIdentifier: SnapshotTrigger] = [:]
    }

    private let state = Mutex(State())

    init() {}

    /// `trigger`'s session had samples: the triggers whose sessions refresh now.
    func samplesArrived(for trigger: SnapshotTrigger) -> [SnapshotTrigger] {
        let id = ObjectIdentifier(trigger)
        let now = ContinuousClock.now
        return state.withLock { state in
            state.triggers[id] = trigger
            return state.schedule.samplesArrived(for: id, at: now).compactMap { state.triggers[$0] }
        }
    }

    /// `trigger`'s session is stopping.
    func forget(_ trigger: SnapshotTrigger) {
        let id = ObjectIdentifier(trigger)
        state.withLock { state in
            state.schedule.forget(id)
            state.triggers[id] = nil
        }
    }
}
