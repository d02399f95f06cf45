/// A bound on a wait that counts only the time the waiting task got to run.
///
/// Swift Testing starts every test at once, and on CI's two loaded cores the tests that compute
/// (fuzzing, HRV references) can hold both of the pool's threads for a minute: a waiting task is
/// then not resumed at all, and a deadline on the wall clock would fail a test for the machine's
/// sake. Each check here counts at most ``longestStep``, however long it was since the last one.
public struct WaitBudget: Sendable {
    /// The most one check counts: a longer gap was spent waiting for a thread, not for the peer.
    public static let longestStep: Duration = .seconds(1)

    /// What the wait may spend.
    public let limit: Duration
    private var spent: Duration = .zero
    private var last = ContinuousClock.now

    public init(_ limit: Duration) { self.limit = limit }

    /// Counts the time since the last check (at most ``longestStep``); true once the limit is spent.
    public mutating func isSpent() -> Bool {
        let now = ContinuousClock.now
        spent += min(now - last, Self.longestStep)
        last = now
        return spent >= limit
    }
}
