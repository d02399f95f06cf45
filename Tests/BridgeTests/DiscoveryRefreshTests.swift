import Foundation
import Testing

@testable import Bridge

@Suite("Home Assistant's online: answered at once, then at most once an interval, the last one never left unanswered")
struct DiscoveryRefreshTests {
    typealias Decision = DiscoveryRefresh.Decision

    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// A step: an `online` heard at a second (`answered: false`) or the scheduled answer going out.
    struct Step: Sendable, CustomTestStringConvertible {
        let name: String
        let steps: [(at: TimeInterval, answered: Bool)]
        let decisions: [Decision?]
        var testDescription: String { name }
    }

    @Test(
        "decisions",
        arguments: [
            Step(name: "the first at once", steps: [(0, false)], decisions: [.now]),
            Step(
                name: "a second within the interval: at its end; a third: coalesced",
                steps: [(0, false), (1, false), (2, false)],
                decisions: [.now, .at(t0.addingTimeInterval(10)), .coalesced]),
            Step(
                name: "after the scheduled answer, the next within the interval of it waits again",
                steps: [(0, false), (1, false), (10, true), (12, false)],
                decisions: [.now, .at(t0.addingTimeInterval(10)), nil, .at(t0.addingTimeInterval(20))]),
            Step(
                name: "one after the interval: at once", steps: [(0, false), (10, false), (25, false)],
                decisions: [.now, .now, .now]),
            Step(
                name: "a clock set back: at once", steps: [(100, false), (50, false)], decisions: [.now, .now]),
        ])
    func decisions(_ step: Step) {
        var refresh = DiscoveryRefresh()
        var decided: [Decision?] = []
        for (at, answered) in step.steps {
            let date = Self.t0.addingTimeInterval(at)
            if answered {
                refresh.answered(at: date)
                decided.append(nil)
            } else {
                decided.append(refresh.asked(at: date))
            }
        }
        #expect(decided == step.decisions)
    }
}
