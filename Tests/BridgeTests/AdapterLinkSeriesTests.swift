import MetricsTestKit
import Sensors
import Testing

@testable import Bridge

@Suite("hrbridge_adapter_links: bounded, and a gone gateway's series removed")
struct AdapterLinkSeriesTests {
    private func links(_ metrics: TestMetrics, _ adapter: String) -> Double? {
        metrics.recorders(label: "hrbridge_adapter_links", dimensions: [("adapter", adapter)]).first?.lastValue
    }

    @Test("a gateway that goes takes its series with it; one that comes back has it again")
    func goneSeriesRemoved() {
        let metrics = TestMetrics()
        let series = AdapterLinkSeries(factory: metrics)
        series.record([
            AdapterStatus(name: "room-1", availability: .ready, linksInUse: 2),
            AdapterStatus(name: "room-2", availability: .ready, linksInUse: 1),
        ])
        #expect(links(metrics, "room-1") == 2 && links(metrics, "room-2") == 1)
        series.record([AdapterStatus(name: "room-1", availability: .ready, linksInUse: 3)])
        #expect(links(metrics, "room-1") == 3)
        #expect(links(metrics, "room-2") == nil, "room 2's series is gone")
        #expect(metrics.recorders(label: "hrbridge_adapter_links").count == 1)
        series.record([
            AdapterStatus(name: "room-1", availability: .ready, linksInUse: 3),
            AdapterStatus(name: "room-2", availability: .ready, linksInUse: 0),
        ])
        #expect(links(metrics, "room-2") == 0)
    }

    @Test("at most the limit of series: the adapters holding most links, then by name")
    func bounded() {
        let metrics = TestMetrics()
        let series = AdapterLinkSeries(maximum: 64, factory: metrics)
        // A thousand made-up gateways with no link, and two real ones.
        let fake = (0..<1_000).map { AdapterStatus(name: "fake-\($0)", availability: .ready) }
        series.record(
            fake + [
                AdapterStatus(name: "room-1", availability: .ready, linksInUse: 5),
                AdapterStatus(name: "room-2", availability: .ready, linksInUse: 4),
            ])
        #expect(metrics.recorders(label: "hrbridge_adapter_links").count == 64)
        #expect(links(metrics, "room-1") == 5 && links(metrics, "room-2") == 4)
        #expect(links(metrics, "fake-0") == 0 && links(metrics, "fake-999") == nil, "by name after the links")
    }
}
