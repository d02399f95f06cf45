import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Sensors
import Testing
import Wire
import WorkoutStore

/// The live API's raw signals: a strap configured with `waveforms` streams ECG and acceleration
/// whenever linked, and only clients that name `ecg` or `acc` receive them.
@Suite("hrbridged: ecg and acc on the live stream, only for clients that ask", .serialized)
struct WaveformAPITests {
    static let h10 = "A0:9E:1A:00:00:01"

    static let scenario = """
        {"version": 1, "seed": 9, "straps": [
          {"name": "Polar H10 0A1B2C3D", "address": "\(h10)", "pmd": true,
           "segments": [{"type": "steady", "duration": "60m", "intensity": 0.4}]}
        ]}
        """

    static func objects(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// A daemon whose H10 streams ECG and 25 Hz acceleration whenever it is linked.
    static func streamingDaemon() async throws -> DaemonUnderTest {
        try await DaemonUnderTest(
            speed: 5, scenario: scenario, streaming: 1,
            sensorsSection: """
                [[sensors]]
                address = "\(h10)"
                waveforms = ["ecg", "acc"]
                acc_rate = 25
                """)
    }

    @Test("kinds=ecg,acc gets the frames as documented; the default and kinds=all get none")
    func optIn() async throws {
        let daemon = try await Self.streamingDaemon()
        defer { daemon.stop() }
        let raw = EventCollector(daemon.unix, path: "/v1/events?kinds=ecg,acc")
        let everyKind = EventCollector(daemon.unix, path: "/v1/events?kinds=all")
        let board = EventCollector(daemon.unix, path: "/v1/events")
        defer {
            raw.cancel()
            everyKind.cancel()
            board.cancel()
        }
        try await eventually("ECG and acceleration frames") {
            let kinds = Self.objects(raw.lines).compactMap { $0["kind"] as? String }
            return kinds.filter { $0 == "ecg" }.count >= 10 && kinds.contains("acc")
        }
        // The others have seen measurements meanwhile, and no raw frame.
        try await eventually("the board's measurements") {
            Self.objects(board.lines).contains { $0["kind"] as? String == "measurement" }
                && Self.objects(everyKind.lines).contains { $0["kind"] as? String == "measurement" }
        }
        for lines in [board.lines, everyKind.lines] {
            #expect(!Self.objects(lines).contains { ["ecg", "acc"].contains($0["kind"] as? String ?? "") })
        }
        let ecg = Self.objects(raw.lines).filter { $0["kind"] as? String == "ecg" }
        let first = try #require(ecg.first)
        #expect(
            first["sensor"] as? String == Self.h10 && first["rate"] as? Int == 130 && first["unit"] as? String == "uV")
        #expect((first["values"] as? [Int])?.count == 73)
        let times = ecg.compactMap { $0["t0"] as? Double }
        #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 73.0 / 130) < 0.01 }, "\(times.prefix(5))")
        let acc = try #require(Self.objects(raw.lines).first { $0["kind"] as? String == "acc" })
        #expect(acc["rate"] as? Int == 25 && (acc["x"] as? [Int])?.count == 36 && (acc["z"] as? [Int])?.count == 36)
        // The strap's ECG is in the sensor's status too: refused frames would be counted there.
        let sensors = try await daemon.unix.send(.GET, "/v1/sensors")
        #expect(sensors.status == 200)
    }

    @Test(
        "a session records its strap's raw signals with the workout; the API exports them as CSV (and refuses what is not there)"
    )
    func storedWithTheSession() async throws {
        let daemon = try await Self.streamingDaemon()
        defer { daemon.stop() }
        let created = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [Self.h10]])
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let id = try created.decoded(SessionJSON.self).id.wire
        let store = try WorkoutStore(path: daemon.storePath, guest: true)
        let workout = try #require(UUID(uuidString: id))
        try await eventually("ten ECG frames stored with the session") {
            let stored = try? await store.waveformSummaries(of: workout)
            return (stored?.first { $0.kind == .ecg }?.frames ?? 0) >= 10
                && stored?.contains { $0.kind == .acc } == true
        }
        #expect(try await daemon.unix.send(.GET, "/v1/workouts/\(id)/waveforms/ecg").status == 409)
        #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop").status == 200)

        let ecg = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/waveforms/ecg")
        #expect(ecg.status == 200)
        let rows = String(decoding: ecg.body, as: UTF8.self).split(separator: "\n")
        #expect(rows.first == "time,sensor,run,ecg_uV")
        let summaries = try await store.waveformSummaries(of: workout)
        let stored = try #require(summaries.first { $0.kind == .ecg })
        #expect(rows.count - 1 == stored.samples, "every stored sample, once")
        #expect(rows.dropFirst().allSatisfy { $0.hasPrefix("17") && $0.contains(",\(Self.h10),") })
        let acc = try await daemon.unix.send(.GET, "/v1/workouts/\(id)/waveforms/acc")
        #expect(String(decoding: acc.body, as: UTF8.self).hasPrefix("time,sensor,run,x_mG,y_mG,z_mG\n"))
        #expect(try await daemon.unix.send(.GET, "/v1/workouts/\(id)/waveforms/ECG").status == 400)
        #expect(try await daemon.unix.send(.GET, "/v1/workouts/\(id)/waveforms/ppg").status == 400)
    }
}
