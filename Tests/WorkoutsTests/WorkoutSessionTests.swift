import Foundation
import Samples
import Sensors
import Testing

@testable import Workouts

/// Collects a session's events until it ends.
private func collect(_ stream: AsyncStream<WorkoutSessionEvent>) -> Task<[WorkoutSessionEvent], Never> {
    Task {
        var events: [WorkoutSessionEvent] = []
        for await event in stream { events.append(event) }
        return events
    }
}

@Suite("Workout session")
struct WorkoutSessionTests {
    let clock = ManualWallClock(now: t0)
    let configuration = WorkoutConfiguration(activityType: .running, location: .indoor)

    @Test("events arrive in a fixed order; end from running passes through stopped")
    func eventOrder() async throws {
        let session = WorkoutSession(configuration: configuration, clock: clock, registry: WorkoutSessionRegistry())
        let events = collect(session.events())
        try await session.prepare()
        try await session.startActivity(at: date(0))
        try await session.pause(at: date(60))
        try await session.resume(at: date(90))
        try await session.end(at: date(120))
        let received = await events.value
        #expect(
            received == [
                .stateChanged(to: .prepared, from: .notStarted, date: t0),
                .stateChanged(to: .running, from: .prepared, date: date(0)),
                .stateChanged(to: .paused, from: .running, date: date(60)),
                .generated(WorkoutEvent(kind: .pause, date: date(60))),
                .stateChanged(to: .running, from: .paused, date: date(90)),
                .generated(WorkoutEvent(kind: .resume, date: date(90))),
                .stateChanged(to: .stopped, from: .running, date: date(120)),
                .stateChanged(to: .ended, from: .stopped, date: date(120)),
            ])
        let workout = try await session.associatedWorkoutBuilder().finishWorkout()
        #expect(workout.elapsedTime == 90)
    }

    @Test(
        "a pause or resume dated before the last one is refused and changes no state: the session's state stays the workout's"
    )
    func pauseBeforeTheLastRefused() async throws {
        let session = WorkoutSession(configuration: configuration, clock: clock, registry: WorkoutSessionRegistry())
        try await session.startActivity(at: date(0))
        try await session.pause(at: date(100))
        try await session.resume(at: date(200))
        // Inside the finished pause: the workout would not change, the state would.
        await #expect(throws: WorkoutSessionError.builder(.pauseOrResumeOutOfOrder(date(150)))) {
            try await session.pause(at: date(150))
        }
        #expect(await session.state == .running)
        // Before the pause: it would move the pause's start, while the state went to paused.
        await #expect(throws: WorkoutSessionError.builder(.pauseOrResumeOutOfOrder(date(50)))) {
            try await session.pause(at: date(50))
        }
        #expect(await session.state == .running)
        // Backdated after the last one is still fine.
        try await session.pause(at: date(250))
        await #expect(throws: WorkoutSessionError.builder(.pauseOrResumeOutOfOrder(date(240)))) {
            try await session.resume(at: date(240))
        }
        #expect(await session.state == .paused)
        try await session.resume(at: date(260))
        try await session.end(at: date(300))
        let workout = try await session.associatedWorkoutBuilder().finishWorkout()
        #expect(workout.elapsedTime == 190, "0–100, 200–250 and 260–300")
    }

    @Test("a failure is reported before the state change it causes")
    func failureBeforeStateChange() async throws {
        let session = WorkoutSession(configuration: configuration, clock: clock, registry: WorkoutSessionRegistry())
        let events = collect(session.events())
        try await session.startActivity(at: date(0))
        await session.fail(with: .dataSource("adapter removed"), at: date(10))
        let received = await events.value
        #expect(
            Array(received.suffix(3)) == [
                .failed(.dataSource("adapter removed"), date: date(10)),
                .stateChanged(to: .stopped, from: .running, date: date(10)),
                .stateChanged(to: .ended, from: .stopped, date: date(10)),
            ])
    }

    @Test("an illegal operation throws and reports the failure; the state stays")
    func illegalOperation() async throws {
        let session = WorkoutSession(configuration: configuration, clock: clock, registry: WorkoutSessionRegistry())
        await #expect(throws: WorkoutSessionError.invalidTransition(from: .notStarted, operation: .pause)) {
            try await session.pause(at: date(1))
        }
        #expect(await session.state == .notStarted)
        try await session.startActivity(at: date(0))
        try await session.stopActivity(at: date(5))
        await #expect(throws: WorkoutSessionError.invalidTransition(from: .stopped, operation: .start)) {
            try await session.startActivity(at: date(6))
        }
    }

    @Test("one active session per athlete; other athletes run concurrently; ending frees the athlete")
    func onePerAthlete() async throws {
        let registry = WorkoutSessionRegistry()
        let alice = UserProfile(id: "alice")
        let first = WorkoutSession(configuration: configuration, profile: alice, clock: clock, registry: registry)
        let second = WorkoutSession(configuration: configuration, profile: alice, clock: clock, registry: registry)
        let bob = WorkoutSession(
            configuration: configuration, profile: UserProfile(id: "bob"), clock: clock, registry: registry)
        try await first.startActivity(at: date(0))
        await #expect(throws: WorkoutSessionError.anotherWorkoutSessionStarted(athlete: "alice")) {
            try await second.startActivity(at: date(1))
        }
        #expect(await second.state == .notStarted)
        try await bob.startActivity(at: date(1))
        #expect(registry.activeAthletes == ["alice", "bob"])
        try await first.end(at: date(10))
        try await second.startActivity(at: date(11))
        #expect(await second.state == .running)
    }

    @Test("activities begin and end through the session, and show in the workout")
    func activities() async throws {
        let session = WorkoutSession(configuration: configuration, clock: clock, registry: WorkoutSessionRegistry())
        let builder = session.associatedWorkoutBuilder()
        try await session.startActivity(at: date(0))
        try await session.beginNewActivity(configuration: configuration, at: date(0))
        try await builder.add([sample(.heartRate, 100, at: 1), sample(.heartRate, 110, at: 2)])
        await #expect(throws: WorkoutSessionError.builder(.activityInProgress)) {
            try await session.beginNewActivity(configuration: configuration, at: date(3))
        }
        try await session.endCurrentActivity(at: date(5))
        try await session.beginNewActivity(
            configuration: WorkoutConfiguration(activityType: .cycling, location: .indoor), at: date(5))
        try await builder.add([sample(.heartRate, 150, at: 6)])
        try await session.end(at: date(10))
        let workout = try await builder.finishWorkout()
        #expect(workout.activities.map(\.configuration.activityType) == [.running, .cycling])
        #expect(workout.activities[0].statistics[.heartRate]?.average == 105)
        #expect(workout.activities[1].statistics[.heartRate]?.average == 150)
        #expect(workout.activities[1].end == date(10))
    }
}
