import Foundation
import Logging
import Samples
import SensorSimulator
import Sensors
import Testing
import Workouts

@testable import WorkoutPlans

@Suite("Structured workouts on the stepped mock adapter")
struct PlanOnMockTests {
    @Test(
        "steps change at the right active times, pauses do not count, alerts fire and clear, segments and laps are recorded, a hand lap among them"
    )
    func runOnMock() async throws {
        // The strap rests (HR near 60), works hard from 60 s to 120 s (HR climbs to about 164),
        // then rests again (HR falls below 98 at about 180 s).
        let strap = StrapScenario(
            name: "S", address: "C0:FF:EE:00:00:09", restingHeartRate: 60, maximumHeartRate: 180,
            segments: [
                .steady(duration: 60, intensity: 0), .steady(duration: 60, intensity: 1),
                .steady(duration: 300, intensity: 0),
            ])
        let logger = Logger(label: "test")
        let mock = MockSensorAdapter(
            scenario: Scenario(seed: 3, straps: [strap]),
            steppingFrom: Date(timeIntervalSinceReferenceDate: 800_000_000),
            logger: logger)
        let clock = mock.timeline
        let configuration = WorkoutConfiguration(activityType: .running, location: .indoor)
        let session = WorkoutSession(configuration: configuration, clock: clock, registry: WorkoutSessionRegistry())
        let builder = session.associatedWorkoutBuilder()
        let source = LiveDataSource(
            builder: builder, adapters: [mock], configuration: configuration, clock: clock, logger: logger)
        await source.attach()
        try await mock.connect(mock.sensors[0])
        let start = clock.now()
        try await session.startActivity(at: start)
        // Warm-up 30 s; 2 × (work 60 s with HR under 100, recovery 20 s); cool-down open.
        let plan = WorkoutPlan(
            name: "t", activity: .running,
            kind: .custom(
                warmup: WorkoutStep(goal: .time(PlanValue(30, .second))),
                blocks: [
                    IntervalBlock(
                        steps: [
                            IntervalStep(
                                purpose: .work,
                                step: WorkoutStep(
                                    goal: .time(PlanValue(60, .second)),
                                    alert: .heartRateRange(
                                        PlanRange(
                                            from: PlanValue(40, .beatsPerMinute), to: PlanValue(100, .beatsPerMinute)),
                                        .current))),
                            IntervalStep(purpose: .recovery, step: WorkoutStep(goal: .time(PlanValue(20, .second)))),
                        ], iterations: 2)
                ], cooldown: WorkoutStep(goal: .open)))
        let runner = PlanRunner(plan: plan, session: session, zones: [:], logger: Logger(label: "test"))
        _ = await runner.start(at: start)
        for second in 1...300 {
            // The second's frame has reached the builder when the step returns: no waiting on time.
            let now = await mock.step()
            if second == 100 { try await session.pause(at: now) }
            if second == 130 { try await session.resume(at: now) }
            // A lap taken by hand in the first iteration (as `WorkoutRecorder.lap` takes it, from the start).
            if second == 50 {
                try await session.addEvent(WorkoutEvent(kind: .lap, dateInterval: DateInterval(start: start, end: now)))
            }
            _ = await runner.tick(at: now)
        }
        let events = await runner.events
        let starts = events.compactMap { event -> (String, Double)? in
            if case .stepStarted(let step, let date) = event {
                (step.purpose, date.timeIntervalSince(start))
            } else {
                nil
            }
        }
        // Active time: warm-up 0–30, work 30–90, recovery 90–100 + pause 100–130 + 130–140, work 140–200,
        // recovery 200–220, cool-down from 220.
        #expect(starts.map(\.0) == ["warmup", "work", "recovery", "work", "recovery", "cooldown"])
        #expect(starts.map(\.1) == [0, 30, 90, 140, 200, 220])
        let alerts = events.compactMap { event -> (String, Double)? in
            switch event {
            case .alertOutOfRange(_, _, _, let date): ("out", date.timeIntervalSince(start))
            case .alertBackInRange(_, _, _, let date): ("in", date.timeIntervalSince(start))
            default: nil
            }
        }
        // The first work step starts at rest and the strap's work starts at 60 s: the alert fires
        // when HR passes 102, within the step; the second work step starts high and comes back down.
        #expect(alerts.first?.0 == "out")
        #expect((alerts.first?.1 ?? 0) > 60 && (alerts.first?.1 ?? 0) < 90)
        #expect(alerts.contains { $0.0 == "in" && $0.1 > 140 && $0.1 <= 200 }, "\(alerts)")
        try await session.end(at: clock.now())
        let workout = try await builder.finishWorkout()
        let segments = workout.events.filter { $0.kind == .segment }
        #expect(segments.count == 5)
        #expect(segments.map { $0.metadata["purpose"] ?? "" } == ["warmup", "work", "recovery", "work", "recovery"])
        let laps = workout.events.filter { $0.kind == .lap }
        // The hand lap, then iteration 1 from where it ended (its span includes the 30 s pause), then iteration 2.
        #expect(laps.map(\.dateInterval.duration) == [50, 90, 80], "\(laps.map(\.dateInterval))")
        await source.detach()
        await mock.shutdown()
    }
}
