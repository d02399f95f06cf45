import ArgumentParser
import Doctor
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// `hrbridge doctor`: why a strap does not show up, layer by layer.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check each layer from the kernel up and say what is wrong and the command that fixes it.",
        discussion: """
            Checks, bottom up: kernel (HCI socket and controllers, through libbluetooth), rfkill,
            bluetoothd (on the bus, version and features), D-Bus access (policy, pairing agent),
            adapters (powered, discovering, PowerState, roles), known straps (paired, bonded,
            connected, services resolved, 0x2A37, notifying, advertising), the service and its socket.

            --json prints an array of {"name","status","detail","fix"}; status is ok, warn, fail or skip.
            Exit status: 0 when nothing fails, 1 when something fails.
            """
    )

    @Flag(help: "JSON output.")
    var json = false

    @Option(help: "The sysfs root (for testing against a fixture tree).")
    var sysfs = "/sys"

    func run() async throws {
        var environment = Doctor.Environment()
        environment.sysfsRoot = sysfs
        var logger = Logger(label: "hrbridge")
        logger.logLevel = .error
        let checks = await Doctor.run(environment, logger: logger)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(checks), as: UTF8.self))
        } else {
            let colour = isatty(STDOUT_FILENO) == 1
            let width = checks.map(\.name.count).max() ?? 0
            for check in checks {
                let status = check.status.rawValue.uppercased().padding(toLength: 4, withPad: " ", startingAt: 0)
                let painted: String
                if colour {
                    let code =
                        switch check.status {
                        case .ok: "32"
                        case .warn: "33"
                        case .fail: "31"
                        case .skip: "90"
                        }
                    painted = "\u{1B}[\(code)m\(status)\u{1B}[0m"
                } else {
                    painted = status
                }
                print(
                    "\(painted)  \(check.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(check.detail)")
                if let fix = check.fix, check.status != .ok {
                    print("      \(String(repeating: " ", count: width))  fix: \(fix)")
                }
            }
        }
        if checks.contains(where: { $0.status == .fail }) { throw ExitCode(1) }
    }
}
