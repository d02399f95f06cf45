import Foundation
import Testing

@testable import Bridge

@Suite("A strap's renames re-announce it within a budget: three at once, then one every 10 s")
struct RenameBudgetTests {
    @Test(
        "renames at these seconds: which re-announce",
        arguments: [
            ([0.0, 0.1, 0.2, 0.3, 0.4], [true, true, true, false, false]),
            ([0, 0, 0, 0, 10, 10, 20], [true, true, true, false, true, false, true]),
            ([0, 0, 0, 100, 100, 100, 100], [true, true, true, true, true, true, false]),
            // A clock that steps back gives nothing back.
            ([0, 0, 0, -50, -50], [true, true, true, false, false]),
        ])
    func budget(seconds: [Double], taken: [Bool]) {
        var budget = RenameBudget()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(seconds.map { budget.take(at: start.addingTimeInterval($0)) } == taken)
    }
}
