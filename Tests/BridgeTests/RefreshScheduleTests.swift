import Testing

@testable import Bridge

@Suite("Refresh schedule: every session's figures on one shared tick")
struct RefreshScheduleTests {
    /// A step: who had samples when (seconds from the start), and who is refreshed then.
    struct Step: Sendable, CustomTestStringConvertible {
        let session: String
        let at: Double
        let refreshed: [String]
        var testDescription: String { "\(session) at \(at) s → \(refreshed)" }
    }

    static let base = ContinuousClock.now

    @Test(
        "the first samples tick at once; later ones wait for the tick a second after the last, which takes everyone who had samples since, in order, once",
        arguments: [
            [
                Step(session: "a", at: 0, refreshed: ["a"]),
                Step(session: "b", at: 0.3, refreshed: []),
                Step(session: "a", at: 0.6, refreshed: []),
                Step(session: "c", at: 0.9, refreshed: []),
                Step(session: "b", at: 0.95, refreshed: []),
                Step(session: "c", at: 1.0, refreshed: ["b", "a", "c"]),
                Step(session: "a", at: 1.99, refreshed: []),
                Step(session: "b", at: 2.0, refreshed: ["a", "b"]),
            ],
            // One session alone refreshes at most once a second, on its own samples.
            [
                Step(session: "a", at: 0, refreshed: ["a"]),
                Step(session: "a", at: 0.5, refreshed: []),
                Step(session: "a", at: 1.2, refreshed: ["a"]),
                Step(session: "a", at: 5, refreshed: ["a"]),
                Step(session: "a", at: 5.25, refreshed: []),
            ],
        ])
    func ticks(steps: [Step]) {
        var schedule = RefreshSchedule<String, ContinuousClock.Instant>()
        for step in steps {
            let now = Self.base.advanced(by: .milliseconds(Int64((step.at * 1000).rounded())))
            #expect(schedule.samplesArrived(for: step.session, at: now) == step.refreshed, "\(step.testDescription)")
        }
    }

    @Test("a session that ended is not refreshed with the others; one that had none since the tick is not either")
    func forgetting() {
        var schedule = RefreshSchedule<String, ContinuousClock.Instant>()
        let at = { (seconds: Int64) in Self.base.advanced(by: .milliseconds(seconds)) }
        #expect(schedule.samplesArrived(for: "a", at: at(0)) == ["a"])
        #expect(schedule.samplesArrived(for: "b", at: at(100)).isEmpty)
        #expect(schedule.samplesArrived(for: "c", at: at(200)).isEmpty)
        schedule.forget("b")
        schedule.forget("z")
        #expect(schedule.samplesArrived(for: "c", at: at(1_000)) == ["c"])
        #expect(schedule.samplesArrived(for: "a", at: at(2_500)) == ["a"])
    }
}
