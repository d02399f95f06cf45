import Foundation
import GATT
import Sensors
import Testing

@testable import hrbridge

@Suite("monitor statistics")
struct MonitorStatisticsTests {
    private let strap = SensorIdentity(adapter: "hci0", address: "C0:FF:EE:00:00:01")

    @Test("gaps run from the drop to ready again; repeated failures while down are one gap; reasons are counted")
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
        #expect(counter?.disconnectionsByReason == ["link lost": 2, "timeout": 1])
    }

    @Test("refused frames are counted by the decoder's reason")
    func refusedByReason() {
        #expect(MonitorStatistics.kind(.trailingBytes(count: 1)) == "trailingBytes")
        #expect(MonitorStatistics.kind(.missingRRIntervals) == "missingRRIntervals")
    }
}
