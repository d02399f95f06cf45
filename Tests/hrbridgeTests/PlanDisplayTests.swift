import Foundation
import JSONSupport
import Testing
import Wire

@testable import WorkoutPlans
@testable import hrbridge

@Suite("plan line in the live view")
struct PlanDisplayTests {
    private let work = PlannedStep(
        index: 1, location: "block 1 (2/4), step 1", purpose: "work",
        step: WorkoutStep(
            goal: .time(PlanValue(2, .minute)),
            alert: .heartRateRange(
                PlanRange(from: PlanValue(140, .beatsPerMinute), to: PlanValue(175, .beatsPerMinute)), .current)),
        block: 0, iteration: 2, endsIteration: false)
    private let recovery = PlannedStep(
        index: 2, location: "block 1 (2/4), step 2", purpose: "recovery",
        step: WorkoutStep(goal: .time(PlanValue(30, .second))), block: 0, iteration: 2, endsIteration: true)

    @Test("step, goal progress, the alert's target against the value now, and the next step")
    func line() {
        let inRange = PlanStatus(
            current: work, goalProgress: 0.5, alertTarget: 140...175, alertValue: 150, alertInRange: true,
            next: recovery)
        #expect(
            PlanDisplay.line(inRange)
                == "plan: block 1 (2/4), step 1 work · 2 min 50% ██████······ · heart rate target 140–175 bpm now 150 ✓ · next: recovery 30 s"
        )
        let outOfRange = PlanStatus(
            current: work, goalProgress: 0.25, alertTarget: 140...175, alertValue: 131, alertInRange: false,
            next: nil)
        #expect(PlanDisplay.line(outOfRange).hasSuffix("now 131 ✗ out of range"))
        #expect(PlanDisplay.line(PlanStatus(current: nil, alertInRange: true)) == "plan: complete")
        // A threshold's target is open above (the largest Double): shown as one, never converted to Int.
        let threshold = PlanStatus(
            current: work, goalProgress: 0.5, alertTarget: 140...Double.greatestFiniteMagnitude, alertValue: 150,
            alertInRange: true, next: nil)
        #expect(PlanDisplay.line(threshold).hasSuffix("heart rate target ≥ 140 bpm now 150 ✓"))
        #expect(Format.number(.infinity) == "∞" && Format.number(.nan) == "-" && Format.number(1e300) == "∞")
        #expect(Format.clock(1e19) == "∞" && Format.clock(3725) == "1:02:05")
        // Hours beyond 32 bits are printed whole, not cut to a wrapped Int32.
        #expect(Format.clock(9_999_999_999 * 3600) == "9999999999:00:00")
    }

    @Test("plan events as JSON objects: steps with where they are, alerts with value and target")
    func events() throws {
        let at = Date(timeIntervalSinceReferenceDate: 0)
        let started = try object(PlanJSON.Event(.stepStarted(work, at: at)))
        #expect(started["event"]?.string == "stepStarted")
        #expect(started["step"]?.string == "block 1 (2/4), step 1")
        #expect(started["alert"]?.string == "heart rate 140-175 bpm")
        #expect(started["time"]?.string == "2001-01-01T00:00:00.000Z")
        let alert = try object(PlanJSON.Event(.alertOutOfRange(work, value: 131, target: 140...175, at: at)))
        #expect(alert["event"]?.string == "alertOutOfRange")
        #expect(alert["value"]?.number == 131)
        #expect(alert["target"] == .array([.number(140), .number(175)]))
    }

    /// The object as written: free-form, as where the step's keys land (among the event's) is what is checked.
    func object(_ value: some Encodable) throws -> [String: JSONValue] {
        try JSONText.decode([String: JSONValue].self, from: Data(JSONText.line(value).utf8))
    }
}
