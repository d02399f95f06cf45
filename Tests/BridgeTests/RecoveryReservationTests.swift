import Foundation
import HTTPTypes
import HummingbirdTesting
import Samples
import Sensors
import Testing
import Wire
import WorkoutStore
import Workouts

@testable import Bridge

/// Crash recovery of sessions with several straps, while the API already takes requests.
@Suite("recovery: every journaled strap, reserved while the session is rebuilt", .serialized)
struct RecoveryReservationTests {
    let straps = DaemonUnderTest.straps

    /// A journal row as a crash leaves it: begun, never finished.
    func journal(
        _ store: WorkoutStore, athlete: String?, sensors: [String], primary: String? = nil
    ) async throws -> UUID {
        let id = UUID()
        let sources = sensors.map { SampleSource(adapter: "mock", address: $0, name: nil) }
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: id, configuration: WorkoutConfiguration(activityType: .cycling, location: .indoor),
                profile: athlete.map { UserProfile(id: $0) }, start: Date().addingTimeInterval(-60), state: .running,
                primarySources: primary.map { ["heartRate": SampleSource(adapter: "mock", address: $0, name: nil)] }
                    ?? [:],
                sensors: sources))
        return id
    }

    @Test(
        "a recovered session follows all its journaled straps; while it is rebuilt its straps and athlete are not given to a new session; a strap a live session holds stays there"
    )
    func reservations() async throws {
        let bridge = try await InProcessBridge()
        let sessions = bridge.core.sessions
        let store = try #require(bridge.core.store)
        let alices = try await journal(store, athlete: "alice", sensors: [straps[0], straps[1]], primary: straps[0])

        let paused = ReadinessSignal()
        let release = ReadinessSignal()
        await sessions.pauseRecovery { id in
            guard id == alices else { return }
            paused.signal()
            await release.signalled()
        }
        let recovery = Task { await sessions.recover() }
        await paused.signalled()

        // Alice's session is being rebuilt: neither her second strap nor Alice may start another.
        await #expect(throws: SessionError.sensorInUse(straps[1], session: alices.uuidString.lowercased())) {
            try await sessions.create(SessionRequest(sensors: [straps[1]]))
        }
        await #expect(throws: SessionError.athleteBusy("alice")) {
            try await sessions.create(SessionRequest(sensors: [straps[2]], athlete: "alice"))
        }
        // Nor may the strap be forgotten under it.
        try await bridge.test { client in
            let forget = try await client.send(.delete, "/v1/sensors/\(straps[1])")
            #expect(forget.status.code == 409)
            #expect(forget.errorCode == "sensor_in_use")
        }
        release.signal()
        await recovery.value

        let recovered = try await sessions.session(alices.uuidString)
        #expect(recovered.sensors.map(\.address) == [straps[0], straps[1]], "both journaled straps, primary first")

        // A session started before recovery reaches a journal row keeps its strap; the row's
        // session, with none of its straps left, is saved as it was, ending where it last
        // recorded, and never started: its athlete (the strap's own, as usual) records again.
        let live = try await sessions.create(SessionRequest(sensors: [straps[2]]))
        let contested = try await journal(
            store, athlete: SessionManager.anonymousAthlete(for: straps[2]), sensors: [straps[2]])
        let begun = try await store.workout(contested).start
        let lastBeat = begun.addingTimeInterval(20)
        let source = SampleSource(adapter: "mock", address: straps[2], name: nil)
        let beats = try [5.0, 10, 20].map { offset in
            try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 110),
                start: begun.addingTimeInterval(offset), end: begun.addingTimeInterval(offset), source: source)
        }
        #expect(try await store.append(beats, workout: contested) == 3)
        await sessions.recover()
        await #expect(throws: SessionError.unknownSession(contested.uuidString)) {
            try await sessions.session(contested.uuidString)
        }
        let saved = try await store.workout(contested)
        let end = try #require(saved.end)
        // (Within a microsecond: the store keeps times as seconds in a double.)
        #expect(
            abs(end.timeIntervalSince(lastBeat)) < 1e-6, "ends at its last sample, not at the restart a minute later")
        #expect(try await !store.activeSessions().map(\.workoutID).contains(contested), "out of the journal")
        #expect(try await sessions.session(live.id.uuidString).sensors.map(\.address) == [straps[2]])
        #expect(await sessions.activeCount == 2)
        try await bridge.stop()
    }

    @Test("the straps a recovered session follows: the free ones of its row; none free (or none named): not started")
    func strapsToFollow() {
        let cases: [(journaled: [String], taken: Set<String>, follows: [String]?)] = [
            (["A", "B"], [], ["A", "B"]),
            (["A", "B"], ["B"], ["A"]),
            (["A", "B"], ["A", "B"], nil),
            (["A"], ["A"], nil),
            ([], [], nil),
        ]
        for item in cases {
            #expect(
                SessionManager.strapsToFollow(journaled: item.journaled, taken: item.taken) == item.follows,
                "\(item.journaled) with \(item.taken) taken")
        }
    }

    @Test("a journal row from before the sensor list: its primary sources, heart rate's first")
    func olderRows() {
        func record(_ primary: [String: String]) -> ActiveSessionRecord {
            ActiveSessionRecord(
                workoutID: UUID(), configuration: WorkoutConfiguration(activityType: .cycling, location: .indoor),
                profile: nil, start: Date(), state: .running,
                primarySources: primary.mapValues { SampleSource(adapter: "hci0", address: $0, name: nil) })
        }
        let cases: [(primary: [String: String], addresses: [String])] = [
            ([:], []),
            (["heartRate": "B0:00:00:00:00:01"], ["B0:00:00:00:00:01"]),
            (
                [
                    "heartRate": "b0:00:00:00:00:02", "cyclingPower": "A0:00:00:00:00:09",
                    "cadence": "B0:00:00:00:00:02",
                ],
                ["B0:00:00:00:00:02", "A0:00:00:00:00:09"]
            ),
            (
                ["cyclingPower": "C0:00:00:00:00:09", "cadence": "A0:00:00:00:00:01"],
                ["A0:00:00:00:00:01", "C0:00:00:00:00:09"]
            ),
        ]
        for item in cases {
            #expect(SessionManager.sensorAddresses(of: record(item.primary)) == item.addresses, "\(item.primary)")
        }
        var journaled = record(["heartRate": "B0:00:00:00:00:01"])
        journaled.sensors = ["B0:00:00:00:00:01", "A0:00:00:00:00:02", "b0:00:00:00:00:01"].map {
            SampleSource(adapter: "hci0", address: $0, name: nil)
        }
        #expect(SessionManager.sensorAddresses(of: journaled) == ["B0:00:00:00:00:01", "A0:00:00:00:00:02"])
    }
}
