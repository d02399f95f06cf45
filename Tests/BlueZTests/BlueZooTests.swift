import BlueZ
import BusHarness
import DBus
import Foundation
import GATT
import Logging
import Sensors
import Synchronization
import Testing

let testLogger = Logger(label: "test")

/// Collects an adapter's events for assertions.
final class EventLog: Sendable {
    private let events = Mutex<[SensorEvent]>([])
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ stream: AsyncStream<SensorEvent>) {
        let collector = Task { [self] in
            for await event in stream { self.events.withLock { $0.append(event) } }
        }
        task.withLock { $0 = collector }
    }

    var all: [SensorEvent] { events.withLock { $0 } }

    var heartRates: [UInt16] {
        all.compactMap {
            if case .measurement(let measurement) = $0, case .heartRateMeasurement(let frame) = measurement.value {
                frame.heartRate
            } else {
                nil
            }
        }
    }

    /// Waits until `condition` holds over the events, or fails the test after `timeout`.
    func wait(
        _ what: String, timeout: Duration = HarnessDeadline.condition,
        sourceLocation: SourceLocation = #_sourceLocation,
        until condition: ([SensorEvent]) -> Bool
    ) async {
        var budget = WaitBudget(timeout)
        while !budget.isSpent() {
            if condition(all) { return }
            try? await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("timed out waiting for \(what); events: \(all.suffix(8))", sourceLocation: sourceLocation)
    }
}

extension EventLog {
    /// Waits until `sensor` has become ready `times` times.
    func waitUntilReady(
        _ sensor: SensorIdentity, times: Int = 1, _ what: String = "the strap to be ready",
        timeout: Duration = HarnessDeadline.condition, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await wait(what, timeout: timeout, sourceLocation: sourceLocation) { events in
            events.filter { $0 == .connectionChanged(sensor, .ready) }.count >= times
        }
    }
}

/// Heart-rate frames with heart rates 60, 61, … and one RR interval each.
func strapFrames(_ count: Int) -> [String] {
    (0..<count).map { index in String(format: "16 %02x 00 04", 60 + index) }
}

var fastOptions: BlueZAdapter.Options {
    var options = BlueZAdapter.Options()
    options.servicesTimeout = .seconds(3)
    options.initialReconnectDelay = .milliseconds(200)
    options.maximumReconnectDelay = .seconds(2)
    return options
}

@Suite("BlueZ adapter against BlueZoo on a private bus", .serialized)
struct BlueZooTests {
    static let central = "00:00:00:00:00:01"
    static let strapAddress = "00:00:00:00:00:02"
    static let thermometer = "00:00:00:00:00:03"

    @Test(
        "discovers the strap through the filter, ignores another device, streams every frame in order, survives a dropped link"
    )
    func streamAndReconnect() async throws {
        try await withBlueZoo(adapters: [Self.central, Self.strapAddress, Self.thermometer]) { bed in
            let strap = try await bed.startStrap(address: Self.strapAddress, frames: strapFrames(40), interval: 0.03)
            _ = try await bed.startStrap(
                address: Self.thermometer, frames: ["00 00"], service: "181a", name: "Thermometer")
            let connection = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            let adapter = try await BlueZAdapter.open(
                adapter: "hci0", connection: connection, options: fastOptions, logger: testLogger)
            let log = EventLog(adapter.events())
            try await adapter.startDiscovery(services: [.heartRate])
            await log.wait("the strap to be discovered") { events in
                events.contains {
                    if case .discovered(let sensor) = $0 { sensor.identity.address == Self.strapAddress } else { false }
                }
            }
            // BlueZ sees the thermometer too (its filter is shared), but the bridge re-checks and ignores it.
            var budget = WaitBudget(HarnessDeadline.condition)
            while !budget.isSpent(),
                await !adapter.knownDevices().contains(where: { $0.identity.address == Self.thermometer })
            {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(await adapter.knownDevices().contains { $0.identity.address == Self.thermometer })
            #expect(
                !log.all.contains {
                    if case .discovered(let sensor) = $0 { sensor.identity.address == Self.thermometer } else { false }
                })
            try await adapter.stopDiscovery()

            let sensor = SensorIdentity(adapter: "hci0", address: Self.strapAddress)
            try await adapter.connect(sensor)
            await log.waitUntilReady(sensor, "the strap to be ready")
            // Battery, location and device information are read once it streams; then services are reported.
            await log.wait("the strap's details") { events in
                events.contains { if case .servicesReady(sensor, _) = $0 { true } else { false } }
            }
            #expect(log.all.contains(.batteryLevel(sensor, 90)))
            #expect(log.all.contains(.bodySensorLocation(sensor, .chest)))
            #expect(
                log.all.contains {
                    if case .deviceInformation(_, let info) = $0 {
                        info.manufacturerName == "hrbridge" && info.modelNumber == "Test Strap"
                    } else {
                        false
                    }
                })
            await log.wait("15 frames") { _ in log.heartRates.count >= 15 }

            // The strap stops sending; the link drops. BlueZoo 1.0.2 does not carry a peripheral-side
            // disconnect to the central's Device1, so the harness drops it there, which is what
            // bluetoothd shows when the radio link is lost: Connected=false, unrequested.
            try strap.send("hold")
            let held = await strap.process.waitForLine { $0.hasPrefix("holding at") }
            let sentBeforeDrop = Int(held?.split(separator: " ").last ?? "") ?? -1
            await log.wait("the frames sent before the drop") { _ in log.heartRates.count >= sentBeforeDrop }
            let radio = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            _ = try await radio.call(
                destination: "org.bluez", path: "/org/bluez/hci0/dev_00_00_00_00_00_02", interface: "org.bluez.Device1",
                member: "Disconnect")
            await radio.close()
            await log.wait("the drop to be reported") {
                $0.contains(.connectionChanged(sensor, .disconnected(.linkLost)))
            }
            await log.waitUntilReady(sensor, times: 2, "the reconnection")
            // The strap comes back: it sends the rest through the notify session BlueZ re-armed.
            try strap.send("resume")
            await log.wait("the rest of the frames") { _ in log.heartRates.count >= 40 }
            #expect(
                log.heartRates == (0..<40).map { UInt16(60 + $0) }, "every frame, in order, nothing lost or repeated")
            #expect(log.all.filter { $0 == .connectionChanged(sensor, .ready) }.count == 2)

            try await adapter.disconnect(sensor)
            await log.wait("the requested disconnect") {
                $0.contains(.connectionChanged(sensor, .disconnected(.requested)))
            }
            await adapter.shutdown()
            await connection.close()
        }
    }

    @Test("`hrbridge monitor --json` streams the strap end to end, as documented")
    func monitorCommand() async throws {
        try await withBlueZoo(adapters: [Self.central, Self.strapAddress]) { bed in
            // A malformed frame in the middle: refused, counted by reason, and the stream goes on.
            var frames = strapFrames(25)
            frames.insert("10 48 2c 03 01", at: 12)
            _ = try await bed.startStrap(address: Self.strapAddress, frames: frames, interval: 0.03)
            let executable = packageRoot.appendingPathComponent(".build/debug/hrbridge").path
            let binary =
                FileManager.default.isExecutableFile(atPath: executable)
                ? executable
                : URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                    .appendingPathComponent("hrbridge").path
            let monitor = try Spawned(
                binary, ["monitor", "--adapter", "hci0", "--json", "--duration", "6"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address], label: "monitor")
            defer { monitor.stop() }
            let stats = await monitor.waitForLine { $0.contains("\"event\":\"stats\"") }
            #expect(stats != nil, "monitor never finished: \(monitor.output.suffix(5))")
            let objects = monitor.output.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let measurements = objects.filter { $0["heartRate"] != nil }
            #expect(measurements.map { $0["heartRate"] as? Int } == (0..<25).map { 60 + $0 })
            let first = try #require(measurements.first)
            #expect(
                Set(first.keys) == [
                    "time", "sensor", "heartRate", "sensorContact", "energyExpended", "rrIntervals", "via",
                ])
            #expect(first["sensor"] as? String == Self.strapAddress)
            #expect(first["via"] as? String == "connection")
            #expect(first["sensorContact"] as? String == "detected")
            #expect(first["energyExpended"] is NSNull)
            #expect(first["rrIntervals"] as? [Double] == [1.0])
            #expect(objects.contains { $0["event"] as? String == "connected" })
            #expect(objects.contains { $0["event"] as? String == "frameRefused" })
            let statistics = try #require(objects.last?["sensors"] as? [String: [String: Any]])
            let strap = try #require(statistics[Self.strapAddress])
            #expect(strap["framesDecoded"] as? Int == 25)
            #expect(strap["framesRejected"] as? Int == 1)
            #expect(strap["refusedByReason"] as? [String: Int] == ["trailingBytes": 1])
            #expect(strap["connections"] as? Int == 1)
        }
    }

    @Test("`hrbridge workout run --adapter bluez` records a workout from a strap through BlueZ")
    func workoutOverBlueZ() async throws {
        try await withBlueZoo(adapters: [Self.central, Self.strapAddress]) { bed in
            _ = try await bed.startStrap(address: Self.strapAddress, frames: strapFrames(60), interval: 0.05)
            let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                .appendingPathComponent("hrbridge").path
            let run = try Spawned(
                binary,
                [
                    "workout", "run", "--adapter", "bluez", "--bluetooth-adapter", "hci0", "--sensor",
                    Self.strapAddress,
                    "--duration", "6s", "--json",
                ],
                environment: [
                    "DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address,
                    // Its own default store, not the user's.
                    "XDG_DATA_HOME": bed.bus.directory.appendingPathComponent("data").path,
                ], label: "workout")
            defer { run.stop() }
            #expect(await run.wait(timeout: .seconds(60)) == 0, "\(run.output.suffix(5))")
            let summary = try #require(
                run.output.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            let statistics = try #require(summary["statistics"] as? [String: [String: Any]])
            let heartRate = try #require(statistics["heartRate"])
            #expect((heartRate["count"] as? Int ?? 0) >= 40)
            #expect(heartRate["min"] as? Double == 60)
            #expect(summary["elapsedTime"] as? Double == 6)
        }
    }

    @Test("without org.bluez on the bus, commands say so in one line and exit 69")
    func noBluetoothd() async throws {
        try await withPrivateBus { bus in
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
                .deletingLastPathComponent()
                .appendingPathComponent("hrbridge").path
            let scan = try Spawned(
                executable, ["scan", "--timeout", "1"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            #expect(await scan.wait() == 69)
            #expect(scan.output.count == 1)
            #expect(scan.output.first?.contains("bluetoothd (org.bluez) is not running") == true)
            let connection = try await DBusConnection.connect(bus: .address(bus.address), logger: testLogger)
            await #expect(
                throws: SensorAdapterError.adapterUnavailable("bluetoothd (org.bluez) is not running on the system bus")
            ) {
                _ = try await BlueZAdapter.open(connection: connection, logger: testLogger)
            }
            await connection.close()
        }
    }
}
