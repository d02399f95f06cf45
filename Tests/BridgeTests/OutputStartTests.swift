import BridgeOut
import BusHarness
import DBus
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import ServiceLifecycle
import Testing
import Wire

@testable import Bridge

/// Outputs started while their strap already streams (the daemon's sensors come up beside them,
/// in any order): the state they report comes from the sensors, not from events they never heard.
@Suite("Outputs that start after their strap came up", .serialized)
struct OutputStartTests {
    static let logger = Logger(label: "test")

    @Test("[peripheral]: a strap streaming before the service ran is reported up in its first state")
    func peripheralSourceUpAtStart() async throws {
        try await InProcessBridge.with { bridge in
            try await withBlueZoo(adapters: [Self.peripheralAddress]) { bed in
                let connection = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: Self.logger)
                var settings = PeripheralSettings()
                settings.source = .strap(address: DaemonUnderTest.straps[0])
                let messages = bridge.core.hub.subscribe(kinds: [.peripheral])
                let service = PeripheralService(
                    settings: settings, core: bridge.core, connection: connection,
                    placement: PeripheralPlacement(peripheral: "hci0", straps: nil, isShared: false),
                    alpha1Adapter: nil, simulatorStrap: nil, logger: Self.logger)
                try await bridge.running(service) {
                    let first = try await Self.state(messages) { _ in true }
                    messages.finish()
                    #expect(first?.following == DaemonUnderTest.straps[0])
                    #expect(first?.sourceUp == true, "the strap streamed before the service ran")
                }
                await connection.close()
            }
        }
    }

    @Test("[peripheral] following the session's strap serves that strap's battery level, none without one")
    func batteryOfTheFollowedStrap() async throws {
        try await InProcessBridge.with { bridge in
            try await withBlueZoo(adapters: [Self.peripheralAddress, "00:00:00:00:0C:02"]) { bed in
                let connection = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: Self.logger)
                let app = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: Self.logger)
                let messages = bridge.core.hub.subscribe(kinds: [.peripheral])
                let service = PeripheralService(
                    settings: PeripheralSettings(), core: bridge.core, connection: connection,
                    placement: PeripheralPlacement(peripheral: "hci0", straps: nil, isShared: false),
                    alpha1Adapter: nil, simulatorStrap: nil, logger: Self.logger)
                try await bridge.running(service) {
                    try await Self.state(messages) { $0.advertising }
                    let battery = try await Self.batteryCharacteristic(from: app)
                    func read() async -> [UInt8]? {
                        let reply = try? await callBlueZ(
                            app, battery, "org.bluez.GattCharacteristic1", "ReadValue", [.propertyMap([])])
                        return reply?.first?.bytes
                    }
                    #expect(await read() == nil, "no session, no strap: the level is unknown, the read refused")

                    let strap = DaemonUnderTest.straps[1]
                    var level: Int?
                    try await eventually("the strap's battery level read") {
                        level = await bridge.core.sensors.status(strap)?.batteryLevel
                        return level != nil
                    }
                    let created = try await bridge.test { client in
                        try await client.send(.post, "/v1/sessions", json: ["sensors": [strap]])
                    }
                    #expect(created.status == .created)
                    try await Self.state(messages) { $0.following == strap }
                    #expect(
                        await read() == level.map { [UInt8($0)] },
                        "the followed strap's level, known before it was followed")

                    // The session ends: no strap is passed on, and its level is not left standing.
                    struct Identified: Decodable { var id: String }
                    let id = try #require(created.decode(Identified.self)?.id)
                    let stopped = try await bridge.test { client in
                        try await client.send(.post, "/v1/sessions/\(id)/stop")
                    }
                    #expect(stopped.status == .ok)
                    try await Self.state(messages) { $0.following == nil }
                    #expect(await read() == nil, "no strap passed on: the last strap's level withdrawn")

                    messages.finish()
                }
                await app.close()
                await connection.close()
            }
        }
    }

    /// The first `peripheral` message on the hub whose state `holds`.
    @discardableResult
    static func state(
        _ messages: LiveSubscription, _ holds: (PeripheralJSON) -> Bool
    ) async throws -> PeripheralJSON? {
        for await delivery in messages {
            guard case .message(let message) = delivery else { continue }
            let json = try JSONDecoder().decode(TaggedJSON<PeripheralJSON>.self, from: Data(message.json.utf8)).payload
            if holds(json) { return json }
        }
        return nil
    }

    static let peripheralAddress = "00:00:00:00:0C:01"
    static let peripheralDevice = "/org/bluez/hci1/dev_00_00_00_00_0C_01"

    /// An app on hci1 finds the peripheral on hci0, connects, and gives the path of its Battery Level.
    static func batteryCharacteristic(from app: DBusConnection) async throws -> String {
        _ = try await discoverAdvertisement(app, central: "hci1", peripheral: "hci0", device: peripheralDevice)
        _ = try await callBlueZ(app, peripheralDevice, "org.bluez.Device1", "Connect")
        var battery: String?
        try await eventually("the battery level on the app's side") {
            battery = try await blueZObjects(app).first { path, interfaces in
                path.hasPrefix(peripheralDevice + "/")
                    && interfaces["org.bluez.GattCharacteristic1"]?["UUID"]?.string?.hasPrefix("00002a19") == true
            }?.key
            return battery != nil
        }
        return try #require(battery)
    }
}
