import BlueZ
import BusHarness
import DBus
import Logging
import Sensors
import Testing

@testable import hrbridge

@Suite("Choosing straps")
struct StrapSelectionTests {
    @Test("a search BlueZ refuses ends the choice at once, and the message says why, not 'is it worn'")
    func refusedSearch() async throws {
        try await withMockBlueZ { mock in
            try await mock.call(
                "/org/bluez/hci0", "org.freedesktop.DBus.Mock", "AddMethod",
                [
                    .string("org.bluez.Adapter1"), .string("StartDiscovery"), .string(""), .string(""),
                    .string(
                        "raise dbus.exceptions.DBusException('Operation failed', name='org.bluez.Error.Failed')"),
                ])
            let logger = Logger(label: "test")
            let connection = try await DBusConnection.connect(bus: .address(mock.bus.address), logger: logger)
            let adapter = try await BlueZAdapter.open(connection: connection, logger: logger)
            // Long enough that a choice which waited out its search would fail the time limit.
            let choice = await StrapSelection.choose(
                adapter: adapter, addresses: ["C0:FF:EE:00:00:99"], searchFor: 3600)
            #expect(choice.straps.isEmpty)
            #expect(choice.discoveryFailure == .failed(name: "org.bluez.Error.Failed", message: "Operation failed"))
            #expect(
                choice.nothingFound
                    == "hrbridge: no heart-rate strap found: discovery did not start "
                    + "(org.bluez.Error.Failed: Operation failed)")
            #expect(try await mock.calls(on: "/org/bluez/hci0").contains("StartDiscovery"))
            await adapter.shutdown()
            await connection.close()
        }
    }

    @Test("without a refusal, nothing found is a strap out of range")
    func nothingHeard() {
        #expect(
            StrapSelection.Choice(straps: []).nothingFound
                == "hrbridge: no heart-rate strap found; is it worn and advertising?")
    }
}
