import BlueZ
import BusHarness
import DBus
import Logging
import Sensors
import Testing

@testable import hrbridge

/// BlueZ's answer to a search it refuses, as the tests' adapter raises it.
private let refusal = SensorAdapterError.failed(name: "org.bluez.Error.Failed", message: "Operation failed")

/// Runs `body` with a BlueZ adapter (dbusmock's bluez5) whose `StartDiscovery` always fails.
private func withRefusingAdapter(_ body: (BlueZAdapter, MockBlueZ) async throws -> Void) async throws {
    try await withMockBlueZ { mock in
        try await mock.call(
            "/org/bluez/hci0", "org.freedesktop.DBus.Mock", "AddMethod",
            [
                .string("org.bluez.Adapter1"), .string("StartDiscovery"), .string(""), .string(""),
                .string("raise dbus.exceptions.DBusException('Operation failed', name='org.bluez.Error.Failed')"),
            ])
        let logger = Logger(label: "test")
        let connection = try await DBusConnection.connect(bus: .address(mock.bus.address), logger: logger)
        let adapter = try await BlueZAdapter.open(connection: connection, logger: logger)
        try await body(adapter, mock)
        await adapter.shutdown()
        await connection.close()
    }
}

@Suite("Choosing straps")
struct StrapSelectionTests {
    // Searches of an hour: a choice that waited out its search would fail the time limit.

    @Test("a search BlueZ refuses ends the choice at once, and the message says why, not 'is it worn'")
    func refusedSearch() async throws {
        try await withRefusingAdapter { adapter, mock in
            let choice = await StrapSelection.choose(
                adapter: adapter, addresses: ["C0:FF:EE:00:00:99"], searchFor: 3600)
            #expect(choice.straps.isEmpty)
            #expect(choice.discoveryFailure == refusal)
            #expect(
                choice.nothingFound
                    == "hrbridge: no heart-rate strap found: discovery did not start "
                    + "(org.bluez.Error.Failed: Operation failed)")
            let calls = try await mock.calls(on: "/org/bluez/hci0")
            #expect(calls.contains("StartDiscovery"))
        }
    }

    @Test("looking for one sensor to pair: a refused search throws BlueZ's error at once")
    func refusedFind() async throws {
        try await withRefusingAdapter { adapter, _ in
            do {
                let found = try await StrapSelection.find("C0:FF:EE:00:00:99", on: adapter, within: 3600)
                Issue.record("the search was refused, yet it answered \(found)")
            } catch {
                #expect(error as? SensorAdapterError == refusal)
            }
        }
    }

    @Test("without a refusal, nothing found is a strap out of range")
    func nothingHeard() {
        #expect(
            StrapSelection.Choice(straps: []).nothingFound
                == "hrbridge: no heart-rate strap found; is it worn and advertising?")
    }
}
