/// Checks `condition` every 20 ms until it holds; throws a ``HarnessError`` naming `what` after
/// `timeout` (a bound for a condition that never holds, not a guess at how long it takes), counted
/// as a ``WaitBudget``: time the waiting task could not run does not count.
public func eventually(
    _ what: String, timeout: Duration = HarnessDeadline.condition, _ condition: () async throws -> Bool
) async throws {
    var budget = WaitBudget(timeout)
    while try await !condition() {
        guard !budget.isSpent() else { throw HarnessError("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
