import BlueZ
import BusHarness
import DBus
import Foundation
import GATT
import Sensors
import Testing

@Suite("Heart rate from advertisements (python-dbusmock's bluez5)", .serialized)
struct BroadcastTests {
    let sensor = SensorIdentity(adapter: "hci0", address: "11:22:33:44:55:66")

    /// Heart rates delivered through advertisements, in order.
    private func broadcastRates(_ log: EventLog) -> [UInt16] {
        log.all.compactMap { event in
            guard case .measurement(let measurement) = event, measurement.via == .advertisement,
                case .heartRateMeasurement(let frame) = measurement.value
            else { return nil }
            #expect(frame.rrIntervals.isEmpty, "no RR intervals come through an advertisement")
            return frame.heartRate
        }
    }

    @Test(
        "a wanted strap without a link is followed through its broadcast: each new reading once, bad layouts refused, other companies ignored"
    )
    func passiveFollowing() async throws {
        try await withMockBlueZ { mock in
            try await mock.addHeartRateService()
            // The link never comes up: the strap is wanted, and only its advertisements are heard.
            try await mock.failConnect("in-progress", times: 1000)
            try await withAdapter(mock) { adapter, log in
                let connecting = Task { try? await adapter.connect(sensor) }
                defer { connecting.cancel() }
                // The strap is wanted once its first Connect is on its way: a broadcast before that
                // is a stranger's, and BlueZ repeats a changed value only.
                try await eventually("the first Connect") {
                    try await mock.calls(on: MockBlueZ.device).contains("Connect")
                }
                try await mock.advertise([0x33, 0x00, 0x00, 0x38])
                await log.wait("the first broadcast reading") { _ in broadcastRates(log) == [56] }
                let first = log.all.compactMap { event -> SensorMeasurement? in
                    if case .measurement(let measurement) = event { measurement } else { nil }
                }.first
                #expect(first?.sensor.address == sensor.address)
                #expect(first?.characteristic == .heartRateMeasurement)
                if case .heartRateMeasurement(let frame)? = first?.value {
                    #expect(frame.sensorContact == .detected)
                }
                // The same advertisement again is the same reading; Apple's data is not Polar's.
                try await mock.advertise([0x33, 0x00, 0x00, 0x38])
                try await mock.advertise([0x01, 0x02, 0x03], company: 0x004C)
                try await mock.advertise([0x37, 0x00, 0x00, 0x39])
                await log.wait("the next reading") { _ in broadcastRates(log).count >= 2 }
                #expect(broadcastRates(log) == [56, 57])
                // Five bytes: a layout nobody documented, refused with its reason, and the stream goes on.
                try await mock.advertise([0x3B, 0x00, 0x00, 0x3A, 0xFF])
                await log.wait("the refusal") { events in
                    events.contains { if case .advertisementRefused(sensor, _) = $0 { true } else { false } }
                }
                let refusal = log.all.compactMap { event -> AdvertisementDecodingError? in
                    if case .advertisementRefused(_, let error) = event { error } else { nil }
                }
                #expect(refusal.map(\.reason) == [.unknownLength(5, known: [3, 4])])
                try await mock.advertise([0x3B, 0x00, 0x00, 0x3B])
                await log.wait("a reading after the refusal") { _ in broadcastRates(log) == [56, 57, 59] }
                // BlueZ only reports advertisements while discovering: it runs while the strap waits for a link.
                try await eventually("discovery while the strap waits for a link") {
                    try await mock.calls(on: "/org/bluez/hci0").contains("StartDiscovery")
                }
            }
        }
    }

    @Test(
        "a linked strap's broadcast reading is refused (heard while linked), its own advertising ignored: its notifications carry the data"
    )
    func connectedStrapRefusesBroadcast() async throws {
        try await withMockBlueZ { mock in
            try await mock.addResolvedStrap()
            try await withAdapter(mock) { adapter, log in
                try await adapter.connect(sensor)
                await log.waitUntilReady(sensor)
                // Another radio under the strap's address, or the strap repeating itself: one strap
                // cannot be in two places.
                try await mock.advertise([0x33, 0x00, 0x00, 0x38])
                await log.wait("the refusal") { events in
                    events.contains { if case .advertisementRefused(sensor, _) = $0 { true } else { false } }
                }
                // A layout the decoder does not know from a linked strap is no reading: not reported.
                try await mock.advertise([0x3B, 0x00, 0x00, 0x3A, 0xFF])
                try await mock.notify([0x06, 70])
                await log.wait("the notification") { _ in log.heartRates.contains(70) }
                #expect(broadcastRates(log).isEmpty)
                #expect(log.heartRates == [70])
                let refusals = log.all.compactMap { event -> AdvertisementDecodingError.Reason? in
                    if case .advertisementRefused(_, let error) = event { error.reason } else { nil }
                }
                #expect(refusals == [.heardWhileLinked])
            }
        }
    }

    @Test(
        "a device under a configured strap's address with another address type is not the strap: not connected, its broadcast refused; the configured type connects"
    )
    func addressTypeChecked() async throws {
        try await withMockBlueZ { mock in
            // The template's device is `public`: configured `random`, it is someone else's radio.
            try await mock.addResolvedStrap()
            var options = fastOptions
            options.connectsUnknownDevices = true
            options.addressTypes[sensor.address] = .random
            try await withAdapter(mock, options: options) { adapter, log in
                await #expect(throws: SensorAdapterError.unknownSensor(sensor)) { try await adapter.connect(sensor) }
                try await mock.advertise([0x33, 0x00, 0x00, 0x38])
                await log.wait("the refusal") { events in
                    events.contains { event in
                        guard case .advertisementRefused(sensor, let error) = event else { return false }
                        return error.reason == .addressTypeMismatch(seen: "public")
                    }
                }
                #expect(broadcastRates(log).isEmpty)
                #expect(try await !mock.calls(on: MockBlueZ.device).contains("Connect"), "never connected")
                await #expect(throws: SensorAdapterError.self) { try await adapter.pair(sensor) }
                #expect(try await !mock.calls(on: MockBlueZ.device).contains("Pair"), "never paired")
            }
        }
        try await withMockBlueZ { mock in
            try await mock.addResolvedStrap()
            var options = fastOptions
            options.addressTypes[sensor.address] = .public
            try await withAdapter(mock, options: options) { adapter, log in
                try await adapter.connect(sensor)
                await log.waitUntilReady(sensor)
                // `hrbridge devices` shows what to configure.
                #expect(
                    await adapter.knownDevices().first { $0.identity.address == sensor.address }?.addressType
                        == "public")
            }
        }
    }

    @Test("a frame says whether its link is bonded: not before the strap is paired, at once after")
    func bondedFrames() async throws {
        try await withMockBlueZ { mock in
            try await mock.addResolvedStrap()
            try await withAdapter(mock) { adapter, log in
                try await adapter.connect(sensor)
                await log.waitUntilReady(sensor)
                try await mock.notify([0x06, 70])
                await log.wait("the first frame") { _ in log.heartRates == [70] }
                // BlueZ now holds its key: the template, like BlueZ before 5.58, says only Paired.
                try await mock.setDevice("Paired", .boolean(true))
                // Frames take the loop thread's fast path: the next one is sent once the adapter has
                // taken the change in (it reports the strap paired after rebuilding those routes).
                await log.wait("the strap reported paired") { events in events.contains(.paired(sensor)) }
                try await mock.notify([0x06, 71])
                await log.wait("the second frame") { _ in log.heartRates == [70, 71] }
                let bonded = log.all.compactMap { event -> Bool? in
                    if case .measurement(let measurement) = event { measurement.bonded } else { nil }
                }
                #expect(bonded == [false, true])
            }
        }
    }

    @Test("discovery asks BlueZ for every advertisement (DuplicateData) only when broadcasts are followed")
    func duplicateDataFilter() async throws {
        for follows in [true, false] {
            try await withMockBlueZ { mock in
                var options = fastOptions
                options.followsAdvertisements = follows
                try await withAdapter(mock, options: options) { adapter, _ in
                    try await adapter.startDiscovery(services: [.heartRate])
                    let filter = try await mock.call(
                        "/org/bluez/hci0", "org.freedesktop.DBus.Properties", "Get",
                        [.string("org.bluez.Adapter1"), .string("DiscoveryFilter")])
                    // The template keeps the last filter as the adapter's DiscoveryFilter property.
                    guard case .dictionary(_, _, let entries)? = filter.first?.unwrapped else {
                        Issue.record("no discovery filter: \(filter)")
                        return
                    }
                    let duplicateData = entries.first { $0.key.string == "DuplicateData" }?.value.bool
                    #expect(duplicateData == follows)
                    #expect(entries.first { $0.key.string == "Transport" }?.value.string == "le")
                    try await adapter.stopDiscovery()
                }
            }
        }
    }
}
