/// When sessions' figures are refreshed: every session that had samples since the last refresh,
/// all together, on the first samples at least ``interval`` after it. No timer: samples drive it.
///
/// One shared tick instead of one per session: a board's 50 sessions' lines reach each client
/// together, in one flush, not spread over the second as 50 writes and wake-ups.
struct RefreshSchedule<ID: Hashable, Instant: InstantProtocol> where Instant.Duration == Duration {
    let interval: Duration
    private var lastTick: Instant?
    /// Sessions with samples since the last tick, in the order they had them.
    private var pending: [ID] = []
    private var pendingSet: Set<ID> = []

    init(interval: Duration = .seconds(1)) { self.interval = interval }

    /// `id` had samples at `now`: the sessions to refresh now (none until the next tick is due).
    mutating func samplesArrived(for id: ID, at now: Instant) -> [ID] {
        if pendingSet.insert(id).inserted { pending.append(id) }
        if let lastTick, lastTick.duration(to: now) < interval { return [] }
        lastTick = now
        defer {
            pending.removeAll(keepingCapacity: true)
            pendingSet.removeAll(keepingCapacity: true)
        }
        return pending
    }

    /// `id` ended: it is not refreshed again.
    mutating func forget(_ id: ID) {
        guard pendingSet.remove(id) != nil else { return }
        pending.removeAll { $0 == id }
    }
}
