import Foundation
import Testing

@testable import Bridge

@Suite("Figures pacing: sessions' figures in rounds, at most one a second")
struct FiguresPacingTests {
    enum Step {
        /// A session's samples at a second: the date a round is armed for, if one is armed now.
        case sampled(Character, at: TimeInterval, arms: TimeInterval?)
        /// The armed round comes at a second: the sessions in it.
        case round(at: TimeInterval, holds: String)
        /// A session ends.
        case remove(Character)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let steps: [Step]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "the first samples after a quiet second start a round at once",
            steps: [.sampled("a", at: 0, arms: 0), .round(at: 0, holds: "a")]),
        Case(
            name: "samples within a second of a round wait for the round a second after it, every session in it once",
            steps: [
                .sampled("a", at: 0, arms: 0), .round(at: 0, holds: "a"),
                .sampled("b", at: 0.2, arms: 1), .sampled("a", at: 0.5, arms: nil), .sampled("b", at: 0.7, arms: nil),
                .round(at: 1, holds: "ba"),
            ]),
        Case(
            name: "a round that came late sets the next second from when it came",
            steps: [
                .sampled("a", at: 0, arms: 0), .round(at: 0.3, holds: "a"), .sampled("a", at: 0.5, arms: 1.3),
            ]),
        Case(
            name: "after a quiet spell the next samples go out at once again",
            steps: [.sampled("a", at: 0, arms: 0), .round(at: 0, holds: "a"), .sampled("a", at: 5, arms: 5)]),
        Case(
            name: "an ended session leaves the round it waited for",
            steps: [
                .sampled("a", at: 0, arms: 0), .sampled("b", at: 0, arms: nil), .remove("a"), .round(at: 0, holds: "b"),
            ]),
        Case(
            name: "a clock set back does not hold the figures until it catches up",
            steps: [.sampled("a", at: 100, arms: 100), .round(at: 100, holds: "a"), .sampled("a", at: 50, arms: 50)]),
        Case(
            name: "a date a moment before the last round (read before it, locked after) keeps the round's second",
            steps: [.sampled("a", at: 0, arms: 0), .round(at: 0.01, holds: "a"), .sampled("a", at: 0, arms: 1.01)]),
        Case(
            name: "a round with nobody waiting holds nobody",
            steps: [.sampled("a", at: 0, arms: 0), .remove("a"), .round(at: 0, holds: "")]),
    ]

    static let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)

    @Test(arguments: cases)
    func pacing(_ example: Case) {
        var ids: [Character: UUID] = [:]
        func id(_ name: Character) -> UUID {
            if let known = ids[name] { return known }
            let new = UUID()
            ids[name] = new
            return new
        }
        func date(_ seconds: TimeInterval) -> Date { Self.origin.addingTimeInterval(seconds) }
        var pacing = FiguresPacing()
        for step in example.steps {
            switch step {
            case .sampled(let name, let at, let arms):
                #expect(pacing.sampled(id(name), at: date(at)) == arms.map(date), "\(name) at \(at)")
            case .round(let at, let holds):
                #expect(pacing.roundDue(at: date(at)) == holds.map(id), "round at \(at)")
                #expect(pacing.waitingCount == 0 && pacing.armed == nil)
            case .remove(let name):
                pacing.remove(id(name))
            }
        }
    }
}
