import BlueZ
import BusHarness
import DBus
import Foundation
import GATT
import Sensors
import Testing

private let straps = (1...5).map { "C0:FF:EE:00:00:0\($0)" }

extension EventLog {
    /// The adapter each strap last became ready through.
    var readyAdapters: [String: String] {
        var placed: [String: String] = [:]
        for event in all {
            if case .connectionChanged(let sensor, let state) = event, state == .ready {
                placed[sensor.address] = sensor.adapter
            }
        }
        return placed
    }

    /// Heart rates delivered per strap, with the adapter each came through.
    var delivered: [String: [String]] {
        var result: [String: [String]] = [:]
        for event in all {
            guard case .measurement(let measurement) = event, case .heartRateMeasurement(let frame) = measurement.value
            else { continue }
            result[measurement.sensor.address, default: []].append("\(measurement.sensor.adapter):\(frame.heartRate)")
        }
        return result
    }
}

extension EventLog {
    /// Heart rates heard from each strap's advertisements (no link).
    var passive: [String: [Int]] {
        var result: [String: [Int]] = [:]
        for event in all {
            guard case .measurement(let measurement) = event, measurement.via == .advertisement,
                case .heartRateMeasurement(let frame) = measurement.value
            else { continue }
            result[measurement.sensor.address, default: []].append(Int(frame.heartRate))
        }
        return result
    }
}

@Suite("Every adapter at once (python-dbusmock with three adapters)", .serialized)
struct MultiAdapterTests {
    @Test("straps on different adapters all stream; a full controller's next strap goes to another adapter")
    func spreadAndFull() async throws {
        try await withMockBlueZ { mock in
            try await mock.addAdapter("hci1")
            try await mock.addAdapter("hci2")
            // Four straps heard best by hci0 (and faintly by hci1), one heard only by hci2.
            for address in straps.prefix(4) {
                try await mock.addStrap(address, on: "hci0", rssi: -40)
                try await mock.addStrap(address, on: "hci1", rssi: -75)
            }
            try await mock.addStrap(straps[4], on: "hci2", rssi: -60)
            try await mock.limitLinks("hci0", 3)
            try await withAdapter(mock) { adapter, log in
                for address in straps { try await adapter.connect(SensorIdentity(adapter: "hci0", address: address)) }
                await log.wait("all five ready") { _ in log.readyAdapters.count == 5 }
                #expect(
                    log.readyAdapters == [
                        straps[0]: "hci0", straps[1]: "hci0", straps[2]: "hci0", straps[3]: "hci1", straps[4]: "hci2",
                    ])
                let hci0Connects = try await mock.calls(on: MockBlueZ.devicePath("hci0", straps[3]))
                #expect(hci0Connects.filter { $0 == "Connect" }.count == 1, "refused once by the full hci0")
                for (index, address) in straps.enumerated() {
                    let through = log.readyAdapters[address] ?? "?"
                    try await mock.notify(address, on: through, [0x06, UInt8(100 + index)])
                }
                await log.wait("a frame from each") { _ in log.delivered.count == 5 }
                #expect(log.delivered[straps[3]] == ["hci1:103"])
                #expect(log.delivered[straps[4]] == ["hci2:104"])
                let statuses = Dictionary(uniqueKeysWithValues: await adapter.adapterStatuses().map { ($0.name, $0) })
                #expect(statuses["hci0"]?.sensors == Array(straps.prefix(3)))
                #expect(statuses["hci0"]?.linksInUse == 3)
                #expect(statuses["hci0"]?.linkLimit == 3 && statuses["hci0"]?.slotRefusals == 1)
                #expect(statuses["hci1"]?.sensors == [straps[3]])
                #expect(statuses["hci2"]?.sensors == [straps[4]] && statuses["hci2"]?.slotRefusals == 0)
            }
        }
    }

    @Test("an adapter unplugged: its straps move to another adapter that hears them, and stream there")
    func unpluggedMoves() async throws {
        try await withMockBlueZ { mock in
            try await mock.addAdapter("hci1")
            for address in straps.prefix(2) {
                try await mock.addStrap(address, on: "hci0", rssi: -40)
                try await mock.addStrap(address, on: "hci1", rssi: -70)
            }
            try await withAdapter(mock) { adapter, log in
                for address in straps.prefix(2) {
                    try await adapter.connect(SensorIdentity(adapter: "hci0", address: address))
                }
                // connect() returns when the strap is ready; the event reaches the log a moment later.
                await log.wait("both straps ready on hci0") { _ in
                    log.readyAdapters == [straps[0]: "hci0", straps[1]: "hci0"]
                }
                try await mock.call("/", "org.bluez.Mock", "RemoveAdapterWithDevices", [.string("hci0")])
                await log.wait("both straps on hci1") { _ in
                    log.readyAdapters == [straps[0]: "hci1", straps[1]: "hci1"]
                }
                for address in straps.prefix(2) { try await mock.notify(address, on: "hci1", [0x06, 90]) }
                await log.wait("their frames through hci1") { _ in
                    log.delivered == [straps[0]: ["hci1:90"], straps[1]: ["hci1:90"]]
                }
                #expect(await adapter.adapterStatuses().map(\.name) == ["hci0", "hci1"])
                #expect(await adapter.adapterStatuses().first?.availability == .absent)
            }
        }
    }

    @Test("a strap bound to hci1 only ever uses hci1, though hci0 hears it better and hci1 goes off for a while")
    func bindingRespected() async throws {
        try await withMockBlueZ { mock in
            try await mock.addAdapter("hci1")
            let address = straps[0]
            try await mock.addStrap(address, on: "hci0", rssi: -30)
            try await mock.addStrap(address, on: "hci1", rssi: -80)
            var options = fastOptions
            options.bindings = [address: "hci1"]
            try await withAdapter(mock, options: options) { adapter, log in
                let sensor = SensorIdentity(adapter: "hci1", address: address)
                try await adapter.connect(sensor)
                await log.waitUntilReady(sensor, "ready on hci1")
                #expect(log.readyAdapters == [address: "hci1"])
                try await mock.power("hci1", false)
                await log.wait("the drop") {
                    $0.contains(.connectionChanged(sensor, .disconnected(.adapterUnavailable)))
                }
                // hci0 is powered and hears it: a bound strap still waits for hci1.
                try await mock.power("hci1", true)
                await log.waitUntilReady(sensor, times: 2, "back on hci1")
                let hci0Calls = try await mock.calls(on: MockBlueZ.devicePath("hci0", address))
                #expect(!hci0Calls.contains("Connect"), "\(hci0Calls)")
                #expect(
                    !log.all.contains {
                        if case .connectionChanged(let s, _) = $0 { s.adapter == "hci0" } else { false }
                    })
            }
        }
    }

    @Test("an adapter plugged in later joins the pool: a strap waiting for a free slot connects through it")
    func lateAdapterJoins() async throws {
        try await withMockBlueZ { mock in
            for address in straps.prefix(2) { try await mock.addStrap(address, on: "hci0", rssi: -50) }
            try await mock.limitLinks("hci0", 1)
            try await withAdapter(mock) { adapter, log in
                try await adapter.connect(SensorIdentity(adapter: "hci0", address: straps[0]))
                let second = SensorIdentity(adapter: "hci0", address: straps[1])
                await #expect(throws: SensorAdapterError.self, "no free slot anywhere yet") {
                    try await adapter.connect(second)
                }
                await log.wait("the no-free-slot report") {
                    $0.contains(.connectionChanged(second, .disconnected(.failed("no free link slot on hci0"))))
                }
                try await mock.addAdapter("hci2")
                try await mock.addStrap(straps[1], on: "hci2", rssi: -65)
                await log.wait("the second strap on hci2") { _ in log.readyAdapters[straps[1]] == "hci2" }
                try await mock.notify(straps[1], on: "hci2", [0x06, 77])
                await log.wait("its frame") { _ in log.delivered[straps[1]] == ["hci2:77"] }
            }
        }
    }
}

@Suite("A class beyond the link slots (python-dbusmock: 40 straps, 2 adapters of 7 slots)", .serialized)
struct ClassBeyondSlotsTests {
    private let straps = (1...40).map { String(format: "C0:FF:EE:00:01:%02X", $0) }

    @Test(
        "14 connect, 26 followed by their broadcasts; a freed slot goes to the highest priority, then the configured one"
    )
    func freedSlotsByPriority() async throws {
        try await withMockBlueZ { mock in
            try await mock.addAdapter("hci1")
            for (index, address) in straps.enumerated() {
                try await mock.addStrap(address, on: "hci0", rssi: index.isMultiple(of: 2) ? -50 : -60)
                try await mock.addStrap(address, on: "hci1", rssi: index.isMultiple(of: 2) ? -60 : -50)
            }
            try await mock.limitLinks("hci0", 7)
            try await mock.limitLinks("hci1", 7)
            var options = fastOptions
            // The instructor's strap, configured.
            options.priorities[straps[32]] = 10
            try await withAdapter(mock, options: options) { adapter, log in
                for address in straps {
                    try? await adapter.connect(SensorIdentity(adapter: "hci0", address: address))
                }
                await log.wait("14 straps ready") { _ in log.readyAdapters.count == 14 }
                let statuses = Dictionary(uniqueKeysWithValues: await adapter.adapterStatuses().map { ($0.name, $0) })
                #expect(statuses["hci0"]?.linksInUse == 7 && statuses["hci1"]?.linksInUse == 7)
                #expect(statuses["hci0"]?.linkLimit == 7 && statuses["hci1"]?.linkLimit == 7)
                let firstFourteen = Set(log.readyAdapters.keys)
                #expect(!firstFourteen.contains(straps[32]) && !firstFourteen.contains(straps[37]))
                // The 26 waiting straps broadcast their heart rate: each is followed without a link.
                let waiting = straps.filter { !firstFourteen.contains($0) }
                #expect(waiting.count == 26)
                for (index, address) in waiting.enumerated() {
                    let rate = UInt8(100 + index)
                    try await mock.advertise(
                        address, on: index.isMultiple(of: 2) ? "hci0" : "hci1", [0x22, 0, rate, rate])
                }
                await log.wait("26 straps followed passively") { _ in log.passive.count == 26 }
                for (index, address) in waiting.enumerated() {
                    #expect(log.passive[address] == [100 + index], "\(address): its own broadcast, once")
                }
                #expect(log.readyAdapters.count == 14, "following a broadcast takes no slot")
                for address in firstFourteen { #expect(log.passive[address] == nil) }
                // A session starts for strap 38: it outranks the instructor's.
                await adapter.setPriority(20, for: straps[37])
                let leaving = try #require(firstFourteen.sorted().first)
                try await adapter.disconnect(SensorIdentity(adapter: "hci0", address: leaving))
                await log.wait("the freed slot taken") { _ in log.readyAdapters[straps[37]] != nil }
                #expect(log.readyAdapters[straps[32]] == nil, "one slot: the highest priority only")
                let second = try #require(firstFourteen.sorted().dropFirst().first)
                try await adapter.disconnect(SensorIdentity(adapter: "hci0", address: second))
                await log.wait("the next slot taken") { _ in log.readyAdapters[straps[32]] != nil }
                let lowAddressWaiting = straps.first { !firstFourteen.contains($0) }!
                #expect(log.readyAdapters[lowAddressWaiting] == nil, "priority, not address order")
            }
        }
    }
}
