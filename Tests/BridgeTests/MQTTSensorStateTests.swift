import Bridge
import Foundation
import Testing

@Suite("When a strap's MQTT state is due")
struct MQTTSensorStateTests {
    /// Frames at `times` (seconds) with heart rates `rates`; the times the state is due.
    func published(_ frames: [(Double, Int)], interval: Double, refresh: Double?) -> [Double] {
        var state = MQTTSensorState(address: "C0:FF:EE:00:00:01")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        return frames.filter { time, rate in
            state.measured(
                heartRate: rate, rrSeconds: [], contact: "detected", at: start.addingTimeInterval(time), zone: 2,
                percentOfMax: 50, interval: interval, refresh: refresh)
        }.map(\.0)
    }

    /// A frame a second for 25 s: at 60 bpm, or 60 until 5 s and 70 from then on.
    static let steady: [(Double, Int)] = (0...25).map { (Double($0), 60) }
    static let changedAtFive: [(Double, Int)] = (0...25).map { (Double($0), $0 < 5 ? 60 : 70) }
    /// A new heart rate every 0.5 s for 4 s.
    static let changingFast: [(Double, Int)] = (0...8).map { (Double($0) / 2, 60 + $0) }

    struct Case: Sendable, CustomStringConvertible {
        var frames: [(Double, Int)]
        var refresh: Double?
        var expected: [Double]
        var description: String { "refresh \(refresh.map { "\($0)" } ?? "none"): \(expected)" }
    }

    @Test(
        "a steady heart rate is published again every refresh (Home Assistant's expire_after counts from the last message), a change at most every interval",
        arguments: [
            Case(frames: steady, refresh: 10, expected: [0, 10, 20]),
            Case(frames: steady, refresh: nil, expected: [0]),
            // The change goes out at 5 s, and the refresh counts from it.
            Case(frames: changedAtFive, refresh: 10, expected: [0, 5, 15, 25]),
            // At most one a second; the refresh adds nothing.
            Case(frames: changingFast, refresh: 10, expected: [0, 1, 2, 3, 4]),
        ])
    func due(_ row: Case) {
        #expect(published(row.frames, interval: 1, refresh: row.refresh) == row.expected)
    }
}
