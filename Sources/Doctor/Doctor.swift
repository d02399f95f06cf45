public import DBus
import Foundation
public import Logging

/// `hrbridge doctor`: each layer from the kernel up, in order, with evidence and a fix.
public enum Doctor {
    /// Where to look; tests point these at fixtures and private buses.
    public struct Environment: Sendable {
        /// The sysfs root (for rfkill).
        public var sysfsRoot = "/sys"
        /// The bus to ask: the system bus by default.
        public var bus: DBusConnection.Bus = .system
        /// The BlueZ version, when known; `nil` asks `bluetoothctl --version`.
        public var bluezVersion: String?
        /// The systemd unit of the service (`hrbridged.service` is only an alias, there while it is enabled).
        public var unit = "hrbridge.service"
        /// The service's API socket.
        public var apiSocket = "/run/hrbridge/api.sock"
        /// Present when systemd is running.
        public var systemdDirectory = "/run/systemd/system"

        /// The real machine's places.
        public init() {}
    }

    /// Runs every check in order.
    public static func run(_ environment: Environment = Environment(), logger: Logger) async -> [DoctorCheck] {
        var checks = KernelCheck.run()
        checks += RfkillCheck.run(sysfsRoot: environment.sysfsRoot)
        do {
            let connection = try await DBusConnection.connect(bus: environment.bus, logger: logger)
            let version = environment.bluezVersion ?? bluetoothctlVersion()
            checks += await BusChecks.run(connection: connection, bluezVersion: version)
            await connection.close()
        } catch {
            checks.append(
                DoctorCheck(
                    name: "dbus", status: .fail, detail: "cannot reach the system D-Bus: \(error)",
                    fix: "sudo systemctl start dbus"))
        }
        checks += ServiceCheck.run(
            unit: environment.unit, socketPath: environment.apiSocket, systemdDirectory: environment.systemdDirectory)
        return checks
    }

    /// `5.66` from `bluetoothctl --version` ("bluetoothctl: 5.66").
    static func bluetoothctlVersion() -> String? {
        for path in ["/usr/bin/bluetoothctl", "/bin/bluetoothctl"]
        where FileManager.default.isExecutableFile(atPath: path) {
            guard let output = runCommand(path, ["--version"]) else { continue }
            return output.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        }
        return nil
    }

    /// Runs a command and returns its standard output, or `nil` when it cannot start.
    static func runCommand(_ executable: String, _ arguments: [String]) -> String? {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        return String(decoding: data, as: UTF8.self)
    }
}
