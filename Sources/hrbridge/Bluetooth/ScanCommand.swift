import ArgumentParser
import BlueZ
import DBus
import Foundation
import GATT
import JSONSupport
import Sensors
import Wire

/// `hrbridge scan`: heart-rate straps and fitness sensors in range.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Discover heart-rate straps and fitness sensors in range.",
        discussion: """
            Sets BlueZ's discovery filter to the fitness services (LE only), then lists each sensor as it
            is found: name, address, RSSI and services. --json prints one object per line:
            {"event":"found"|"updated"|"lost","name":…,"address":…,"rssi":…,"services":[…]}.
            Exit status 69 when bluetoothd is not running; 0 when the scan ends, by its timeout or
            by Ctrl-C/SIGTERM.
            """
    )

    @OptionGroup var bluetooth: BluetoothOptions

    @Option(help: "Seconds to scan.")
    var timeout: Double = 10

    func validate() throws { try SecondsOption.check(timeout, "--timeout") }

    @Flag(help: "JSON lines.")
    var json = false

    func run() async throws {
        // An interrupt before the scan runs ends it as one during the scan does (exit 0).
        let interrupt = InterruptWatch { _ in Glibc.exit(0) }
        let (connection, adapter) = try await bluetooth.open()
        let events = adapter.events()
        let printer = Task {
            for await event in events {
                switch event {
                case .discovered(let sensor):
                    report("found", sensor.identity, rssi: sensor.rssi, services: sensor.services)
                case .updated(let identity, let rssi) where json:
                    report("updated", identity, rssi: rssi, services: nil)
                case .lost(let identity):
                    report("lost", identity, rssi: nil, services: nil)
                default:
                    break
                }
            }
        }
        do {
            try await adapter.startDiscovery(services: Set(GATTService.allCases))
        } catch {
            StandardError.write("hrbridge: cannot start discovery: \(error)")
            throw ExitCode(69)
        }
        interrupt.ready()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in interrupt.signals { return } }
            group.addTask { try? await Task.sleep(for: .seconds(timeout)) }
            await group.next()
            group.cancelAll()
        }
        try? await adapter.stopDiscovery()
        await adapter.shutdown()
        await printer.value
        await connection.close()
    }

    /// A line of `scan --json`: `found`, `updated` or `lost`; unknown name and RSSI are `null`,
    /// `services` only when known.
    struct Line: Codable {
        var event: String
        var address: String
        var adapter: String
        @Nullable var name: String?
        @Nullable var rssi: Int?
        var services: [String]?
    }

    private func report(_ event: String, _ identity: SensorIdentity, rssi: Int?, services: Set<GATTService>?) {
        if json {
            let line = Line(
                event: event, address: identity.address, adapter: identity.adapter, name: identity.name, rssi: rssi,
                services: services?.map(\.commandLineName).sorted())
            if let text = try? JSONText.line(line) { print(text) }
        } else if event == "found" {
            let serviceText = (services ?? []).map(\.commandLineName).sorted().joined(separator: ", ")
            print(
                "\(identity.address)  \((identity.name ?? "(no name)").padding(toLength: 20, withPad: " ", startingAt: 0))"
                    + "  \(rssi.map { "\($0) dBm" } ?? "    -  ")  \(serviceText)")
        } else if event == "lost" {
            print("\(identity.address)  lost")
        }
    }
}
