import ArgumentParser
import BlueZ
import DBus
@preconcurrency import Foundation
import GATT
import Logging
import Sensors

/// Options shared by the commands that talk to BlueZ.
struct BluetoothOptions: ParsableArguments {
    @Option(help: "Bluetooth adapter to use, e.g. hci1; repeat for several (default: every adapter).")
    var adapter: [String] = []

    @Flag(help: "Receive notifications through AcquireNotify sockets instead of StartNotify.")
    var acquireNotify = false

    @Flag(help: "Log D-Bus and sensor details to stderr.")
    var verbose = false

    /// The plain settings these options stand for.
    var settings: BluetoothSettings {
        BluetoothSettings(adapter: adapter, acquireNotify: acquireNotify, verbose: verbose)
    }

    /// Connects to the system bus and opens the adapter; on failure prints one line and exits 69.
    /// With `waiting`, no adapter (or no bluetoothd) is not a failure: it is reported and waited for.
    func open(
        clock: any WallClock = SystemWallClock(), waiting: (@Sendable (AdapterAvailability) -> Void)? = nil
    ) async throws -> (DBusConnection, BlueZAdapter) {
        try await settings.open(clock: clock, waiting: waiting)
    }
}

/// Which adapter to use and how; built from ``BluetoothOptions`` or by other commands.
struct BluetoothSettings: Sendable {
    /// The adapters to use; empty: every adapter.
    var adapter: [String] = []
    var acquireNotify = false
    var verbose = false

    var logger: Logger {
        var logger = Logger(label: "hrbridge")
        logger.logLevel = verbose ? .info : .error
        return logger
    }

    /// How many times opening is tried while bluetoothd leaves its calls unanswered: each try
    /// already waited out a call's 25 s, so a busy or just-started daemon gets a minute and more.
    static let openAttempts = 3

    /// A connection to the system bus; without one, prints one line and exits 69.
    static func systemBus(logger: Logger) async throws -> DBusConnection {
        do {
            return try await DBusConnection.connect(bus: .system, logger: logger)
        } catch {
            StandardError.write("hrbridge: cannot reach the system D-Bus (\(error)); is dbus running?")
            throw ExitCode(69)
        }
    }

    /// The adapters BlueZ has (none when bluetoothd is not there), asked again while bluetoothd
    /// leaves the call unanswered, like ``open(clock:waiting:)``.
    static func adapterNames(on bus: DBusConnection) async -> [String] {
        for attempt in 1...openAttempts {
            do {
                return try await BlueZAdapter.adapterNames(on: bus)
            } catch  where BlueZError.isUnanswered(error) && attempt < openAttempts {
                StandardError.write(
                    "hrbridge: bluetoothd did not answer (\(error)); asking again (\(attempt + 1) of \(openAttempts))")
            } catch {
                return []
            }
        }
        return []
    }

    /// Connects to the system bus and opens the adapter; on failure prints one line and exits 69.
    func open(
        clock: any WallClock = SystemWallClock(), waiting: (@Sendable (AdapterAvailability) -> Void)? = nil
    ) async throws -> (DBusConnection, BlueZAdapter) {
        var attempt = 0
        while true {
            attempt += 1
            let connection = try await Self.systemBus(logger: logger)
            do {
                var options = BlueZAdapter.Options()
                options.notifications = acquireNotify ? .acquireNotify : .startNotify
                if let waiting {
                    _ = try await BlueZAdapter.waitForAdapter(
                        named: self.adapter.first, connection: connection, report: waiting)
                }
                let adapter = try await BlueZAdapter.open(
                    adapters: self.adapter.isEmpty ? nil : self.adapter, connection: connection, options: options,
                    clock: clock, logger: logger)
                return (connection, adapter)
            } catch {
                // A fresh connection for a new try: nothing of the failed start is left subscribed.
                await connection.close()
                if BlueZError.isUnanswered(error) && attempt < Self.openAttempts {
                    StandardError.write(
                        "hrbridge: bluetoothd did not answer (\(error)); trying again (\(attempt + 1) of \(Self.openAttempts))"
                    )
                    continue
                }
                switch error {
                case .adapterUnavailable(let why) where why.contains("org.bluez"):
                    StandardError.write(
                        "hrbridge: \(why); start it with: sudo systemctl start bluetooth (hrbridge doctor explains more)"
                    )
                default:
                    StandardError.write("hrbridge: \(error)")
                }
                throw ExitCode(69)
            }
        }
    }
}

extension GATTService {
    /// A short lowercase name for output: `heart-rate`.
    var commandLineName: String { name.lowercased().replacingOccurrences(of: " ", with: "-") }
}
