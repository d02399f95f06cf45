import Foundation
import Testing

@testable import Bridge

/// The status line's pacing: the first change after a quiet second at once, the rest of the
/// second's changes once at its end.
@Suite struct StatusPacerTests {
    let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)

    enum Step {
        case changed(Double, StatusPacer.Action)
        case deadline(Double, Bool)
    }

    func date(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    func run(_ steps: [Step]) {
        var pacer = StatusPacer()
        for (index, step) in steps.enumerated() {
            switch step {
            case .changed(let at, let expected):
                #expect(pacer.changed(at: date(at)) == expected, "step \(index)")
            case .deadline(let at, let expected):
                #expect(pacer.deadlineReached(at: date(at)) == expected, "step \(index)")
            }
        }
    }

    @Test func aLoneChangeIsWorkedOutAtOnce() {
        run([.changed(0, .now), .changed(1, .now), .changed(5, .now)])
    }

    @Test func aBurstGivesOneLineNowAndOneAtTheSecondsEnd() {
        run([
            .changed(0, .now),
            .changed(0.1, .at(date(1))),
            .changed(0.2, .nothing),
            .changed(0.9, .nothing),
            .deadline(1, true),
            // The deadline's line counts as the last one: the next change waits for its second.
            .changed(1.5, .at(date(2))),
            .deadline(2, true),
            .changed(3.5, .now),
        ])
    }

    @Test func aDeadlineWithNothingPendingWorksNothingOut() {
        run([.deadline(0, false), .changed(0, .now), .deadline(1, false), .changed(1, .now)])
    }
}
