import Bridge
import BridgeClient
import BusHarness
import DBus
import Foundation
import NIOHTTP1
import Synchronization
import Testing
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// A daemon on `bus` (kind = "bluez") with the mock's strap configured (or, with `configured`
/// false, no strap configured: it follows BlueZ's paired ones), its store and API socket in `directory`.
private func bluezDaemon(
    bus: PrivateBus, in directory: URL, label: String, environment: [String: String] = [:], configured: Bool = true,
    moreSettings: String = ""
) throws -> (daemon: Spawned, socket: String) {
    let socket = directory.appendingPathComponent("api.sock").path
    try Data(
        ("""
        [adapter]
        kind = "bluez"
        [store]
        path = "\(directory.path)/store.sqlite"
        [api]
        socket = "\(socket)"
        """ + (configured ? "\n[[sensors]]\naddress = \"11:22:33:44:55:66\"\n" : "\n") + moreSettings).utf8
    ).write(to: directory.appendingPathComponent("config.toml"))
    let daemon = try Spawned(
        DaemonUnderTest.daemonBinary,
        ["--config", directory.appendingPathComponent("config.toml").path, "--log-level", "info"],
        environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address].merging(environment) { $1 }, label: label)
    return (daemon, socket)
}

@Suite("hrbridged on BlueZ (python-dbusmock): zero adapters is a state, not a failure", .serialized)
struct DaemonBlueZTests {
    @Test("a strap paired beside the running daemon (`hrbridge pair`) is followed at once, without a restart")
    func followsAStrapPairedWhileRunning() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let mock = try await MockBlueZ.start(on: bus)
        defer { mock.process.stop() }
        try await mock.addResolvedStrap()
        try await mock.announce([MockBlueZ.device + "/service0010", MockBlueZ.characteristic])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrbridge-bluez-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (daemon, socket) = try bluezDaemon(bus: bus, in: directory, label: "daemon", configured: false)
        defer { daemon.stop() }
        let client = APIClient(endpoint: .unix(socket))
        // The API answers once the daemon connected every strap it follows at start: none yet.
        try await eventually("the API: \(daemon.output.suffix(5))") {
            (try? await client.send(.GET, "/v1/health"))?.status == 200
        }
        #expect(try await client.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self).isEmpty)
        #expect(try await !mock.calls(on: MockBlueZ.device).contains("Connect"), "not the user's strap yet")

        // Another client (the CLI) pairs it: BlueZ says Paired, and the daemon follows it.
        try await mock.setDevice("Paired", .boolean(true))
        try await eventually("the paired strap to stream: \(daemon.output.suffix(15).joined(separator: "\n"))") {
            let sensors = try await client.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
            return sensors.first { $0.address == "11:22:33:44:55:66" }?.state == .ready
        }
        try await mock.notify([0x06, 97])
        try await eventually("the frame through BlueZ, the daemon and the API") {
            try await client.send(.GET, "/v1/sensors/11:22:33:44:55:66").decoded(SensorStatus.self).heartRate == 97
        }
    }

    @Test("without bluetoothd the daemon is READY and says it waits; when BlueZ and the strap appear, it streams")
    func waitsForBluetoothd() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrbridge-bluez-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let listener = try NotifyListener()
        let (daemon, socket) = try bluezDaemon(
            bus: bus, in: directory, label: "daemon",
            environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "2000000"])
        defer { daemon.stop() }
        // Read the notify socket all along, as systemd does (its queue holds only 10 datagrams).
        let datagrams = Mutex<[String]>([])
        let reader = Task {
            while !Task.isCancelled {
                if let datagram = await listener.receive(timeout: .seconds(1)) {
                    datagrams.withLock { $0.append(datagram) }
                }
            }
        }
        defer { reader.cancel() }
        try await eventually("READY=1 on the notify socket: \(daemon.output.suffix(5))") {
            datagrams.withLock { $0 }.contains { $0.hasPrefix("READY=1") }
        }
        let ready = datagrams.withLock { $0 }.first { $0.hasPrefix("READY=1") }
        #expect(ready?.contains("STATUS=waiting: bluetoothd not running") == true)
        let client = APIClient(endpoint: .unix(socket))
        let health = try await client.send(.GET, "/v1/health")
        #expect(try health.decoded(HealthJSON.self).adapter == "bluetoothd not running")

        // bluetoothd starts with an adapter; the strap is there and advertises its Heart Rate service.
        let mock = try await MockBlueZ.start(on: bus)
        defer { mock.process.stop() }
        try await mock.addResolvedStrap()
        try await mock.announce([MockBlueZ.device + "/service0010", MockBlueZ.characteristic])
        try await eventually(
            "the strap to stream: \(daemon.output.suffix(15).joined(separator: "\n"))"
        ) {
            let sensors = try await client.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
            return sensors.first?.state == .ready
        }
        let status = try await client.send(.GET, "/v1/health").decoded(HealthJSON.self)
        #expect(status.adapter == "ready")
        try await mock.notify([0x06, 99])
        try await eventually("the frame through BlueZ, the daemon and the API") {
            let sensor = try await client.send(.GET, "/v1/sensors/11:22:33:44:55:66").decoded(SensorStatus.self)
            return sensor.heartRate == 99
        }
        try await eventually("the streaming status") {
            datagrams.withLock { $0 }.contains { $0.contains("STATUS=1 sensor streaming") }
        }
        // The watchdog pings only when the D-Bus loop answered its heartbeat: it does, so pings go on.
        try await eventually("watchdog pings to go on") {
            datagrams.withLock { $0 }.filter { $0 == "WATCHDOG=1" }.count >= 3
        }
        // The control role is not a Bluetooth admin: an address that is neither configured nor a
        // fitness sensor in range is refused, and BlueZ is asked nothing about it.
        let callsBefore = try await mock.calls(on: "/org/bluez/hci0")
        for action in ["connect", "pair", "disconnect"] {
            let reply = try await client.send(.POST, "/v1/sensors/AA:BB:CC:DD:EE:FF/\(action)")
            #expect(reply.status == 404, "\(action): \(String(decoding: reply.body, as: UTF8.self))")
        }
        #expect(try await client.send(.DELETE, "/v1/sensors/AA:BB:CC:DD:EE:FF").status == 404)
        #expect(try await mock.calls(on: "/org/bluez/hci0") == callsBefore, "no discovery, no RemoveDevice")

        // SIGTERM: the adapter ends last, releasing the strap's notifications before the exit.
        #expect(try await mock.calls(on: MockBlueZ.characteristic).contains("StartNotify"))
        #expect(!(try await mock.calls(on: MockBlueZ.characteristic).contains("StopNotify")))
        daemon.stop()
        #expect(daemon.exitStatus == 0, "a clean exit: \(daemon.report)")
        #expect(try await mock.calls(on: MockBlueZ.characteristic).contains("StopNotify"), "released at shutdown")
        await mock.control.close()
    }

    @Test(
        "a configured strap whose link never comes up is followed through its broadcast: the API says via advertisement"
    )
    func broadcastThroughTheDaemon() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrbridge-broadcast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let mock = try await MockBlueZ.start(on: bus)
        defer { mock.process.stop() }
        try await mock.addHeartRateService()
        try await mock.failConnect("in-progress", times: 1_000)
        let (daemon, socket) = try bluezDaemon(bus: bus, in: directory, label: "daemon")
        defer { daemon.stop() }
        let client = APIClient(endpoint: .unix(socket))
        try await eventually("the daemon to try the strap: \(daemon.output.suffix(5))") {
            try await mock.calls(on: MockBlueZ.device).contains("Connect")
        }
        // Each advertisement carries a new reading (the frame counter moves on) until one is through.
        // One answer carries both (a failed link attempt in between clears the shown heart rate).
        var counter: UInt8 = 0
        var sensor: SensorStatus?
        try await eventually("the broadcast through BlueZ, the daemon and the API") {
            counter &+= 1
            try await mock.advertise([0x22 | (counter & 7) << 2, 0x00, 0x00, 0x38])
            // (The API socket may not be up yet: not an answer, so try again.)
            sensor = try? await client.send(.GET, "/v1/sensors/11:22:33:44:55:66").decode(SensorStatus.self)
            return sensor?.via == "advertisement" && sensor?.heartRate != nil
        }
        #expect(sensor?.heartRate == 56)
        #expect(sensor?.state != .ready, "no link: the heart rate came by broadcast")
        await mock.control.close()
    }

    @Test(
        "a strap BlueZ knows only by its address (the alias bluetoothd makes of it) has no name; the name heard later, and an alias set after it, reach the API and Home Assistant's device"
    )
    func aNameHeardLaterIsShownAndAnnounced() async throws {
        try await withMosquitto { broker in
            let bus = try PrivateBus()
            defer { bus.stop() }
            let mock = try await MockBlueZ.start(on: bus)
            defer { mock.process.stop() }
            try await mock.addResolvedStrap()
            // No name yet: bluetoothd's alias is then the address, written with dashes.
            try await mock.setDevice("Name", .string(""))
            try await mock.setDevice("Alias", .string("11-22-33-44-55-66"))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "hrbridge-rename-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let (daemon, socket) = try bluezDaemon(
                bus: bus, in: directory, label: "daemon", moreSettings: "\n" + DaemonMQTTTests.settings(broker))
            defer { daemon.stop() }
            let client = APIClient(endpoint: .unix(socket))
            let path = "/v1/sensors/11:22:33:44:55:66"
            try await eventually("the strap to stream: \(daemon.output.suffix(5))") {
                (try? await client.send(.GET, path).decode(SensorStatus.self))?.state == .ready
            }
            #expect(try await client.send(.GET, path).decoded(SensorStatus.self).name == nil)
            let config = "homeassistant/sensor/gym_112233445566/heart_rate/config"
            let reader = try await MQTTSubscriber(broker: broker, filters: [config])
            defer { reader.stop() }
            func deviceName(_ message: MQTTSubscriber.Received) -> String? {
                guard message.topic == config, !message.payload.isEmpty,
                    let object = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any],
                    let device = object["device"] as? [String: Any]
                else { return nil }
                return device["name"] as? String
            }
            try await reader.waitFor("announced without a name") {
                deviceName($0) == "Heart-rate strap 11:22:33:44:55:66"
            }

            // The scan response brings the name (bluetoothd changes both).
            try await mock.setDevice("Name", .string("Polar H10 4B2E0A1C"))
            try await mock.setDevice("Alias", .string("Polar H10 4B2E0A1C"))
            try await eventually("the name in the API") {
                try await client.send(.GET, path).decoded(SensorStatus.self).name == "Polar H10 4B2E0A1C"
            }
            try await reader.waitFor("announced again with its name") { deviceName($0) == "Polar H10 4B2E0A1C" }

            // The user's alias (`bluetoothctl set-alias`) replaces it.
            try await mock.setDevice("Alias", .string("Bob's strap"))
            try await eventually("the alias in the API") {
                try await client.send(.GET, path).decoded(SensorStatus.self).name == "Bob's strap"
            }
            try await reader.waitFor("announced again with the alias") { deviceName($0) == "Bob's strap" }
        }
    }
}
