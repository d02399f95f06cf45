import Foundation
import GATT
import Sensors
import Testing

@testable import RemoteSensors

@Suite("A gateway's backfill pacing, and a hub's budget")
struct BackfillPacerTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// Takes `frames` at `seconds`; when they may go, in seconds.
    private func take(_ pacer: inout BackfillPacer, _ frames: Int, at seconds: Double) -> Double {
        pacer.take(frames, at: start.addingTimeInterval(seconds)).timeIntervalSince(start)
    }

    @Test(
        "a full bucket lets a burst go at once, then frames go at the rate; an idle bucket fills again, never past the burst"
    )
    func bucket() {
        var pacer = BackfillPacer(rate: 400, burst: 1_000)
        #expect(take(&pacer, 512, at: 0) == 0)
        #expect(take(&pacer, 400, at: 0) == 0)
        // 88 left: 512 more need 424 frames' worth of refill, 1.06 s.
        #expect(abs(take(&pacer, 512, at: 0) - 1.06) < 1e-6)
        // Asked again before that time: it waits its turn after it.
        #expect(abs(take(&pacer, 400, at: 0.5) - 2.06) < 1e-6)
        // Idle for a minute: a burst again, not a minute's worth.
        #expect(take(&pacer, 1_000, at: 70) == 70)
        #expect(abs(take(&pacer, 1, at: 70) - 70.0025) < 1e-6)
        // The wall clock set back an hour: a batch waits at most the longest wait there can be
        // (a burst, then the batch, at the rate), not the hour.
        #expect(take(&pacer, 1_000, at: 100) == 100)
        let wait = take(&pacer, 512, at: 100 - 3_600) - (100 - 3_600)
        #expect(wait > 0 && wait <= (1_000.0 + 512) / 400 + 1e-6, "\(wait)")
    }

    /// 20 straps at 4 Hz, the hub away for 10 minutes: 48,000 frames, sent a strap's 512 at a time
    /// in the journal's order, each batch when `pacer` lets it go; what the hub's tracker refuses.
    private func replayOutage(with pacer: BackfillPacer) -> (admitted: Int, refused: [String: Int]) {
        var pacer = pacer
        var hub = RemoteStrapTracker()
        let straps = (1...20).map { String(format: "C0:FF:EE:00:00:%02X", $0) }
        func frame(_ sequence: UInt32, at seconds: Double) -> RemoteMeasurement {
            RemoteMeasurement(
                sequence: sequence, receivedAt: start.addingTimeInterval(seconds), via: .connection,
                characteristic: .heartRateMeasurement,
                bytes: HeartRateMeasurement(heartRate: 120, sensorContact: .detected).encoded())
        }
        for strap in straps { _ = hub.handle(.envelope(frame(0, at: 0), address: strap, node: "room-1"), at: start) }
        _ = hub.handle(.brokerLost, at: start.addingTimeInterval(1))
        let back = start.addingTimeInterval(601)
        for strap in straps {
            _ = hub.handle(.envelope(frame(2_404, at: 601), address: strap, node: "room-1"), at: back)
        }
        var now = 601.0
        var admitted = 0
        var refused: [String: Int] = [:]
        var pending: [String: [RemoteMeasurement]] = [:]
        func send(_ strap: String, _ frames: [RemoteMeasurement]) {
            now = pacer.take(frames.count, at: start.addingTimeInterval(now)).timeIntervalSince(start)
            let outcome = hub.admitBackfill(frames, address: strap, node: "room-1", at: start.addingTimeInterval(now))
            admitted += outcome.admitted.count
            for refusal in outcome.refused { refused[refusal.metricName, default: 0] += 1 }
        }
        for sequence in 1...2_400 {
            for strap in straps {
                pending[strap, default: []].append(frame(UInt32(sequence), at: Double(sequence) / 4))
                if pending[strap]!.count == RemoteBackfill.maximumFrames {
                    send(strap, pending[strap]!)
                    pending[strap] = nil
                }
            }
        }
        for strap in straps where pending[strap] != nil { send(strap, pending[strap]!) }
        return (admitted, refused)
    }

    @Test(
        "a 10-minute outage of 20 straps at 4 Hz: paced at the defaults, the hub takes all 48,000 frames; unpaced, it refuses some over its budget"
    )
    func underTheHubsBudget() {
        let paced = replayOutage(with: BackfillPacer(rate: 400, burst: 400 * 50))
        #expect(paced.admitted == 48_000 && paced.refused.isEmpty, "\(paced.refused)")
        let unpaced = replayOutage(with: BackfillPacer(rate: 1_000_000, burst: 1_000_000))
        #expect(unpaced.refused["over_budget", default: 0] > 10_000, "\(unpaced.refused)")
        #expect(unpaced.admitted + unpaced.refused.values.reduce(0, +) == 48_000)
    }
}
