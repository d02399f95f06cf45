/// When sessions' figures are published: at most once a second, all together.
///
/// Each session used to publish on its own second, set by when its strap's frames happened to
/// arrive, so 50 sessions made 50 lines a second spread over the second, and each left for every
/// client in a write and a TCP segment of its own. A round instead publishes every session that
/// had samples since its last publication at once: the lines of a round leave together (a client's
/// flushes within a millisecond are one `writev`). A pure value: the instant is the caller's.
struct SnapshotPacing<Member: Hashable> {
    /// The least time between two rounds.
    static var interval: Duration { .seconds(1) }

    /// When the last round was.
    private(set) var lastRound: ContinuousClock.Instant?
    /// Members with samples since their last publication, in the order they first had them.
    private var waiting: [Member] = []
    private var isWaiting: Set<Member> = []

    /// `member` has samples at `now`: the members to publish now (a round when one is due, every
    /// member waiting, `member` among them), or none.
    mutating func poke(_ member: Member, at now: ContinuousClock.Instant) -> [Member] {
        if isWaiting.insert(member).inserted { waiting.append(member) }
        if let lastRound, now - lastRound < Self.interval { return [] }
        lastRound = now
        defer {
            waiting.removeAll(keepingCapacity: true)
            isWaiting.removeAll(keepingCapacity: true)
        }
        return waiting
    }

    /// `member` publishes no more (its session is stopping).
    mutating func remove(_ member: Member) {
        guard isWaiting.remove(member) != nil else { return }
        waiting.removeAll { $0 == member }
    }

    /// How many members wait for the next round.
    var waitingCount: Int { waiting.count }
}
