import ArgumentParser
import BlueZ
import DBus
import Foundation
import JSONSupport
import Sensors
import Wire

/// `hrbridge devices`: sensors BlueZ knows, with their state.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List the sensors BlueZ knows: paired, trusted, connected.")

    @OptionGroup var bluetooth: BluetoothOptions

    @Flag(help: "JSON lines.")
    var json = false

    func run() async throws {
        let (connection, adapter) = try await bluetooth.open()
        for device in await adapter.knownDevices() {
            if json {
                let line = DeviceJSON(
                    address: device.identity.address, adapter: device.identity.adapter, name: device.identity.name,
                    rssi: device.rssi, services: device.services.map(\.commandLineName).sorted(), paired: device.paired,
                    trusted: device.trusted, bonded: device.bonded, connected: device.connected,
                    servicesResolved: device.servicesResolved, addressType: device.addressType)
                if let text = try? JSONText.line(line) { print(text) }
            } else {
                var flags: [String] = []
                if device.paired { flags.append("paired") }
                if device.trusted { flags.append("trusted") }
                if device.connected { flags.append("connected") }
                // What `[[sensors]] address_type` pins: a radio repeating the address with another type is not the strap.
                if let type = device.addressType { flags.append(type) }
                print(
                    "\(device.identity.address)  \((device.identity.name ?? "(no name)").padding(toLength: 20, withPad: " ", startingAt: 0))"
                        + "  \(flags.isEmpty ? "known" : flags.joined(separator: ", "))  "
                        + device.services.map(\.commandLineName).sorted().joined(separator: ", "))
            }
        }
        await adapter.shutdown()
        await connection.close()
    }
}

/// `hrbridge pair` and `hrbridge forget`.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair (and trust) a sensor; discovers it first if BlueZ has not seen it. Already paired is fine.")

    @OptionGroup var bluetooth: BluetoothOptions

    @Argument(help: "The sensor's address, AA:BB:CC:DD:EE:FF.")
    var address: String

    @Option(help: "Seconds to look for the sensor when BlueZ does not know it yet.")
    var timeout: Double = 15

    func validate() throws {
        try AddressArguments.check([address])
        try SecondsOption.check(timeout, "--timeout")
    }

    func run() async throws {
        let (connection, adapter) = try await bluetooth.open()
        let sensor = SensorIdentity(adapter: adapter.name, address: address.uppercased())
        if await !adapter.knownDevices().contains(where: { $0.identity.address == sensor.address }) {
            let found: Bool
            do {
                found = try await StrapSelection.find(sensor.address, on: adapter, within: timeout)
            } catch {
                StandardError.write("hrbridge: \(sensor.address) not found: discovery did not start (\(error))")
                await adapter.shutdown()
                await connection.close()
                throw ExitCode(69)
            }
            guard found else {
                StandardError.write(
                    "hrbridge: \(sensor.address) not found in \(Int(timeout)) s; is it worn and advertising?")
                await adapter.shutdown()
                await connection.close()
                throw ExitCode(69)
            }
        }
        do {
            try await adapter.pair(sensor)
            print("paired \(sensor.address)")
        } catch {
            StandardError.write("hrbridge: pairing \(sensor.address) failed: \(error)")
            await adapter.shutdown()
            await connection.close()
            throw ExitCode(1)
        }
        await adapter.shutdown()
        await connection.close()
    }
}

/// `hrbridge forget`.
struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "Remove a sensor and its bond from BlueZ.")

    @OptionGroup var bluetooth: BluetoothOptions

    @Argument(help: "The sensor's address.")
    var address: String

    func validate() throws { try AddressArguments.check([address]) }

    func run() async throws {
        let (connection, adapter) = try await bluetooth.open()
        let sensor = SensorIdentity(adapter: adapter.name, address: address.uppercased())
        do {
            try await adapter.forget(sensor)
            print("forgot \(sensor.address)")
        } catch {
            StandardError.write("hrbridge: cannot forget \(sensor.address): \(error)")
            await adapter.shutdown()
            await connection.close()
            throw ExitCode(1)
        }
        await adapter.shutdown()
        await connection.close()
    }
}

/// A line of `devices --json`: what BlueZ knows of a device; unknown name and RSSI are `null`.
struct DeviceJSON: Codable {
    var address: String
    var adapter: String
    @Nullable var name: String?
    @Nullable var rssi: Int?
    var services: [String]
    var paired: Bool
    var trusted: Bool
    var bonded: Bool
    var connected: Bool
    var servicesResolved: Bool
    /// `public` or `random` (what `[[sensors]] address_type` pins).
    @Nullable var addressType: String?
}
