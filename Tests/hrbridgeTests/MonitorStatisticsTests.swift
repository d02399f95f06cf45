import BusHarness
import Foundation
import GATT
import Sensors
import Testing

@testable import hrbridge

@Suite("monitor statistics")
struct MonitorStatisticsTests {
    private let strap = SensorIdentity(adapter: "hci0", address: "C0:FF:EE:00:00:01")

    @Test(
        "gaps run from the drop to ready again; failed attempts while down are one gap, counted as failed attempts; reasons are counted"
    )
    func gaps() {
        let statistics = MonitorStatistics()
        let origin = Date(timeIntervalSinceReferenceDate: 0)
        statistics.record(.connectionChanged(strap, .ready), at: origin)
        statistics.record(.connectionChanged(strap, .disconnected(.linkLost)), at: origin.addingTimeInterval(10))
        statistics.record(.connectionChanged(strap, .disconnected(.timeout)), at: origin.addingTimeInterval(12))
        statistics.record(.connectionChanged(strap, .ready), at: origin.addingTimeInterval(13.5))
        statistics.record(.connectionChanged(strap, .disconnected(.linkLost)), at: origin.addingTimeInterval(20))
        statistics.record(.connectionChanged(strap, .ready), at: origin.addingTimeInterval(21))
        let counter = statistics.snapshot[strap.address]
        #expect(counter?.lastGap == 1)
        #expect(counter?.longestGap == 3.5)
        #expect(counter?.totalGap == 4.5)
        #expect(counter?.reconnects == 2)
        #expect(counter?.disconnectionsByReason == ["link lost": 2])
        #expect(counter?.disconnections == 2)
        #expect(counter?.connectFailuresByReason == ["timeout": 1], "no link was up: an attempt failed")
    }

    @Test(
        "a strap that never connected: its failed attempts are not disconnections; refused broadcasts count by reason")
    func neverConnected() throws {
        let statistics = MonitorStatistics()
        let abort = DisconnectReason.failed("le-connection-abort-by-local")
        for _ in 0..<4 { statistics.record(.connectionChanged(strap, .disconnected(abort))) }
        var refused: AdvertisementDecodingError?
        do {
            _ = try PolarHeartRateBroadcast(company: PolarHeartRateBroadcast.companyID, bytes: [0x3B])
        } catch {
            refused = error
        }
        let refusal = try #require(refused, "one byte is no layout")
        for _ in 0..<3 { statistics.record(.advertisementRefused(strap, refusal)) }
        let counter = try #require(statistics.snapshot[strap.address])
        #expect(counter.connections == 0)
        #expect(counter.disconnections == 0)
        #expect(counter.connectFailures == 4)
        #expect(counter.connectFailuresByReason == [abort.description: 4])
        #expect(counter.framesRejected == 3)
        #expect(counter.refusedByReason == [MonitorStatistics.kind(refusal.reason): 3])
        #expect(counter.totalGap == 0, "no link was up: no gap")
    }

    @Test("refused frames are counted by the decoder's reason")
    func refusedByReason() {
        #expect(MonitorStatistics.kind(.trailingBytes(count: 1)) == "trailingBytes")
        #expect(MonitorStatistics.kind(.missingRRIntervals) == "missingRRIntervals")
    }

    @Test("help and docs say which straps are taken without addresses: paired or trusted, else the first found")
    func whichStraps() async throws {
        for command in [["monitor", "--help"], ["workout", "run", "--help"]] {
            let help = try await runHRBridge(command).stdout.replacingOccurrences(of: "\n", with: " ")
                .split(separator: " ").joined(separator: " ")
            #expect(help.contains("paired or trusted"), "\(command)")
            #expect(!help.contains("every known strap"), "\(command)")
        }
        let docs = try String(contentsOf: packageRoot.appendingPathComponent("docs/bluetooth.md"), encoding: .utf8)
        #expect(docs.contains("**paired or trusted**") && !docs.contains("every known strap"))
        #expect(docs.contains("connectFailed") && docs.contains("exit") && docs.contains("**0**"))
    }
}
