import BusHarness
import Foundation
import HTTPTypes
import HummingbirdTesting
import Samples
import Synchronization
import Testing
import Wire
import WorkoutStore
import Workouts

@testable import Bridge

// A slot never given back makes a later wait endless: the limit turns that into a failure.
@Suite(
    "Exports at once: two built, the rest waiting in order, a full queue refused with 503 and Retry-After",
    .timeLimit(.minutes(2)))
struct ExportGateTests {
    /// A job that holds its slot until the test lets it go, and says when it started.
    private final class Jobs: Sendable {
        private let started = Mutex<[Int]>([])
        private let releases = Mutex<[Int: AsyncStream<Void>.Continuation]>([:])

        var order: [Int] { started.withLock { $0 } }

        /// Runs job `number` through `gate`: it starts, then holds until ``release(_:)``.
        func run(_ number: Int, through gate: ExportGate) async throws {
            let (stream, continuation) = AsyncStream<Void>.makeStream()
            releases.withLock { $0[number] = continuation }
            try await gate.run {
                started.withLock { $0.append(number) }
                for await _ in stream { break }
            }
        }

        func release(_ number: Int) {
            let continuation = releases.withLock { $0[number] }
            continuation?.yield()
        }
    }

    /// Waits for `task`, cancelling it if the test is cancelled (its time limit): a job waiting on a
    /// slot that is never given back then ends instead of holding the run.
    private func joined(_ task: Task<Void, any Error>) async throws {
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    @Test("two run, two wait and start in arrival order as slots free, a fifth is refused at once")
    func order() async throws {
        let gate = ExportGate(atOnce: 2, waiting: 2)
        let jobs = Jobs()
        let first = Task { try await jobs.run(1, through: gate) }
        let second = Task { try await jobs.run(2, through: gate) }
        try await eventually("two running") { gate.running == 2 }
        let third = Task { try await jobs.run(3, through: gate) }
        try await eventually("the third waiting") { gate.queued == 1 }
        let fourth = Task { try await jobs.run(4, through: gate) }
        try await eventually("the fourth waiting behind it") { gate.queued == 2 }
        #expect(Set(jobs.order) == [1, 2])

        await #expect(throws: ExportGate.Busy(running: 2, waiting: 2)) { try await jobs.run(5, through: gate) }

        jobs.release(1)
        try await joined(first)
        try await eventually("the third started") { jobs.order.count == 3 }
        #expect(jobs.order.last == 3 && gate.running == 2 && gate.queued == 1)
        jobs.release(2)
        try await joined(second)
        try await eventually("the fourth started") { jobs.order.count == 4 }
        #expect(jobs.order.last == 4)
        jobs.release(3)
        jobs.release(4)
        try await joined(third)
        try await joined(fourth)
        #expect(gate.running == 0 && gate.queued == 0)
    }

    @Test("a waiter cancelled gives up its place, a body that throws frees its slot")
    func cancelledAndFailed() async throws {
        let gate = ExportGate(atOnce: 1, waiting: 1)
        let jobs = Jobs()
        let holder = Task { try await jobs.run(1, through: gate) }
        try await eventually("one running") { gate.running == 1 }
        let cancelled = Task { try await jobs.run(2, through: gate) }
        try await eventually("one waiting") { gate.queued == 1 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await joined(cancelled) }
        #expect(gate.queued == 0, "its place is given up")
        let next = Task { try await jobs.run(3, through: gate) }
        try await eventually("another waiting in its place") { gate.queued == 1 }
        jobs.release(1)
        try await joined(holder)
        try await eventually("the next started") { jobs.order == [1, 3] }
        jobs.release(3)
        try await joined(next)

        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await gate.run { throw Failure() } }
        #expect(gate.running == 0, "the slot is free again")
        try await gate.run {}
    }

    @Test(
        "GET /v1/workouts/{id}/export: a failed export frees its slot; with every slot and place taken, 503 exports_busy and Retry-After"
    )
    func throughTheAPI() async throws {
        let bridge = try await InProcessBridge()
        let store = try #require(bridge.core.store)
        let id = UUID()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let configuration = WorkoutConfiguration(activityType: .running)
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: id, configuration: configuration, profile: nil, start: start, state: .running))
        // A finished workout without a sample: its export fails inside the gate.
        try await store.finish(
            Workout(
                id: id, configuration: configuration, profile: nil, start: start, end: start.addingTimeInterval(60),
                elapsedTime: 60, events: [], activities: [], statistics: [:], zoneGroups: [],
                heartRateVariability: HeartRateVariability(
                    rmssd: nil, sdnn: nil, acceptedIntervals: 0, rejectedIntervals: 0),
                activeEnergy: ActiveEnergy(kilojoules: nil, source: .unavailable), sources: [], metadata: [:]))
        let gate = bridge.core.exports
        let path = "/v1/workouts/\(id.uuidString.lowercased())/export?format=fit"
        try await bridge.test { client in
            for _ in 1...gate.atOnce {
                let failed = try await client.send(.get, path)
                #expect(failed.status == .conflict && failed.errorCode == "export_failed")
            }
        }
        #expect(gate.running == 0 && gate.queued == 0, "every failed export gave its slot back")

        let jobs = Jobs()
        var holders: [Task<Void, any Error>] = []
        for number in 0..<(gate.atOnce + gate.waiting) {
            holders.append(Task { try await jobs.run(number, through: gate) })
        }
        try await eventually("every slot and place taken") {
            gate.running == gate.atOnce && gate.queued == gate.waiting
        }
        try await bridge.test { client in
            let busy = try await client.send(.get, path)
            #expect(busy.status == .serviceUnavailable && busy.errorCode == "exports_busy")
            #expect(busy.headers[.retryAfter] == "5")
        }
        for number in 0..<(gate.atOnce + gate.waiting) { jobs.release(number) }
        for holder in holders { try await joined(holder) }
        #expect(gate.running == 0 && gate.queued == 0)
        try await bridge.stop()
    }
}
