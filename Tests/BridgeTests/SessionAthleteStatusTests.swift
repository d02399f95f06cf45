import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Samples
import Testing
import Wire
import Workouts

@Suite("A strap's status shows the athlete of the session recording it", .timeLimit(.minutes(3)))
struct SessionAthleteStatusTests {
    private let straps = DaemonUnderTest.straps

    /// The strap's status once it shows a heart rate and `settled` holds.
    private func status(
        _ daemon: DaemonUnderTest, _ strap: String, _ label: String, settled: @escaping (SensorStatus) -> Bool
    ) async throws -> SensorStatus {
        var last: SensorStatus?
        try await eventually(label) {
            last = try await daemon.unix.send(.GET, "/v1/sensors/\(strap)").decoded(SensorStatus.self)
            return last.map { $0.heartRate != nil && settled($0) } ?? false
        }
        return try #require(last)
    }

    /// The zone and percentage of maximum `status`'s heart rate has by these zones and maximum.
    private func expected(_ status: SensorStatus, zones: [Double], maximum: Double) throws -> (Int, Int) {
        let heartRate = Double(try #require(status.heartRate))
        let configuration = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: zones)
        return (configuration.position(of: heartRate) + 1, Int((100 * heartRate / maximum).rounded()))
    }

    @Test("another athlete's session: their name, zones and maximum while it runs; the configured athlete's after")
    func anotherAthlete() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        // The first strap is Alice's (zones 110/130/150/170, maximum 190); Bob records on it.
        let before = try await status(daemon, straps[0], "Alice's strap streaming") { $0.athlete == "alice" }
        #expect(before.athleteName == "Alice")
        let created = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [straps[0]], "athlete": "bob", "zones": [30, 40, 50, 200]]
        ).decoded(SessionJSON.self)
        let running = try await status(daemon, straps[0], "Bob's session shown") { $0.session == created.id }
        #expect(running.athlete == "bob")
        #expect(running.athleteName == "Bob")
        let (zone, percent) = try expected(running, zones: [30, 40, 50, 200], maximum: 185)
        #expect(running.zone == zone)
        #expect(running.percentOfMax == percent)

        _ = try await daemon.unix.send(.POST, "/v1/sessions/\(created.id.wire)/stop")
        let after = try await status(daemon, straps[0], "Alice's again") { $0.session == nil }
        #expect(after.athlete == "alice")
        #expect(after.athleteName == "Alice")
        let (aliceZone, alicePercent) = try expected(after, zones: [110, 130, 150, 170], maximum: 190)
        #expect(after.zone == aliceZone)
        #expect(after.percentOfMax == alicePercent)
    }

    @Test("a guest's session and a strap's own anonymous athlete: no athlete shown; the session's zones read")
    func guestAndAnonymous() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let guest = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [straps[0]], "guest": true, "zones": [30, 40, 50, 200]]
        ).decoded(SessionJSON.self)
        let anonymous = try await daemon.unix.send(
            .POST, "/v1/sessions", json: ["sensors": [straps[1]], "zones": [30, 40, 50, 200]]
        ).decoded(SessionJSON.self)
        let guestStatus = try await status(daemon, straps[0], "the guest's session") { $0.session == guest.id }
        #expect(guestStatus.athlete == nil)
        #expect(guestStatus.athleteName == nil)
        // A guest on Alice's strap is measured against Alice's maximum, by the zones the session gave.
        let (zone, percent) = try expected(guestStatus, zones: [30, 40, 50, 200], maximum: 190)
        #expect(guestStatus.zone == zone)
        #expect(guestStatus.percentOfMax == percent)
        let anonymousStatus = try await status(daemon, straps[1], "the anonymous session") {
            $0.session == anonymous.id
        }
        #expect(anonymousStatus.athlete == nil)
        let heartRate = Double(try #require(anonymousStatus.heartRate))
        #expect(
            anonymousStatus.zone
                == (try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [30, 40, 50, 200])
                    .position(of: heartRate) + 1))
        #expect(anonymousStatus.percentOfMax == nil, "nobody's maximum is known")
        _ = try await daemon.unix.send(.POST, "/v1/sessions/\(anonymous.id.wire)/stop")
        let stopped = try await status(daemon, straps[1], "the anonymous session stopped") { $0.session == nil }
        #expect(stopped.zone == nil, "no athlete, no zones: the session's zone is not left behind")
        _ = try await daemon.unix.send(.POST, "/v1/sessions/\(guest.id.wire)/stop")
    }
}
