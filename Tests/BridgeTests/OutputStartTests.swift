import BridgeOut
import BusHarness
import DBus
import Foundation
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
        let bridge = try await InProcessBridge()
        do {
            try await withBlueZoo(adapters: ["00:00:00:00:0C:01"]) { bed in
                let connection = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: Self.logger)
                var settings = PeripheralSettings()
                settings.source = .strap(address: DaemonUnderTest.straps[0])
                let messages = bridge.core.hub.subscribe(kinds: [.peripheral])
                let service = PeripheralService(
                    settings: settings, core: bridge.core, connection: connection,
                    placement: PeripheralPlacement(peripheral: "hci0", straps: nil, isShared: false),
                    alpha1Adapter: nil, simulatorStrap: nil, logger: Self.logger)
                let group = ServiceGroup(services: [service], logger: Self.logger)
                let running = Task { try await group.run() }
                var first: PeripheralJSON?
                for await delivery in messages {
                    guard case .message(let message) = delivery else { continue }
                    first = try JSONDecoder().decode(TaggedJSON<PeripheralJSON>.self, from: Data(message.json.utf8))
                        .payload
                    break
                }
                messages.finish()
                #expect(first?.following == DaemonUnderTest.straps[0])
                #expect(first?.sourceUp == true, "the strap streamed before the service ran")
                await group.triggerGracefulShutdown()
                try await running.value
                await connection.close()
            }
        } catch {
            try await bridge.stop()
            throw error
        }
        try await bridge.stop()
    }
}
