import Foundation

/// When sessions' figures go out: in rounds, at most one a second, each holding every session
/// that had samples since the last one.
///
/// The first samples after a quiet second start a round at once; samples within a second of the
/// last round wait for the round a second after it. A pure value: the dates are the caller's.
struct FiguresPacing {
    /// The least time between two rounds.
    static let interval: TimeInterval = 1

    /// When the last round was.
    private(set) var lastRound: Date?
    /// When the next round is due (nil: none is armed).
    private(set) var armed: Date?
    /// Sessions with samples since the last round, in the order their samples came.
    private var waiting: [UUID] = []
    private var isWaiting: Set<UUID> = []

    /// `session` had samples at `now`: the date to arm the next round for, when none is armed yet.
    mutating func sampled(_ session: UUID, at now: Date) -> Date? {
        if isWaiting.insert(session).inserted { waiting.append(session) }
        guard armed == nil else { return nil }
        // A clock set back (by more than a round's second) makes the last round's second
        // meaningless: the round is due now.
        let due =
            lastRound.map { last in
                last.timeIntervalSince(now) > Self.interval ? now : max(now, last.addingTimeInterval(Self.interval))
            } ?? now
        armed = due
        return due
    }

    /// The armed round came at `now`: the sessions in it.
    mutating func roundDue(at now: Date) -> [UUID] {
        armed = nil
        lastRound = now
        defer {
            waiting.removeAll(keepingCapacity: true)
            isWaiting.removeAll(keepingCapacity: true)
        }
        return waiting
    }

    /// `session` ended: it is in no round any more.
    mutating func remove(_ session: UUID) {
        guard isWaiting.remove(session) != nil else { return }
        waiting.removeAll { $0 == session }
    }

    /// How many sessions wait for the next round.
    var waitingCount: Int { waiting.count }
}
