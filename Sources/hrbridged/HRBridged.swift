import ArgumentParser
import Bridge
import Foundation
import Logging

/// `hrbridged`: the service that feeds sessions to local clients (the `hrbridge` command line
/// talks to it through `hrbridge session`).
@main
struct HRBridged: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrbridged",
        abstract: "The hrbridge service: sensors, sessions, store and the live API.",
        discussion: """
            Reads /etc/hrbridge/config.toml (or --config; without either file it runs the simulator \
            with default paths). Listens on a Unix socket (default /run/hrbridge/api.sock, or \
            $RUNTIME_DIRECTORY/api.sock under systemd) and optionally on 127.0.0.1:PORT with bearer \
            tokens. Speaks sd_notify when NOTIFY_SOCKET is set: READY=1, STATUS=, WATCHDOG=1, STOPPING=1. \
            SIGTERM or SIGINT ends every running session (saved), then exits 0.

            Exit status: 0 stopped; 69 adapter unavailable (or [peripheral], [osc] or [lsl] cannot start); 71 API listener failed; 73 store cannot \
            be opened; 75 another process records into the store (systemd retries); 78 bad \
            configuration (one line per problem, with its line number), or MQTT cannot start.
            """
    )

    @Option(help: "Configuration file (default: /etc/hrbridge/config.toml when it exists).")
    var config: String?

    @Option(help: "API Unix socket (overrides the configuration).")
    var socket: String?

    @Option(help: "The store file (overrides the configuration).")
    var store: String?

    @Flag(help: "Check the configuration and exit (0 valid, 78 not).")
    var checkConfig = false

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    func validate() throws {
        // bind() cannot take a longer path: refused here, by name, rather than at start.
        let most = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
        if let socket, socket.utf8.count > most {
            throw ValidationError(
                "--socket is \(socket.utf8.count) bytes long; a Unix socket's path is at most \(most)")
        }
        // As the configuration's `socket` and `path`: the daemon's working directory is no place.
        if let socket, !socket.hasPrefix("/") { throw ValidationError("--socket must be an absolute path") }
        if let store, !store.hasPrefix("/") { throw ValidationError("--store must be an absolute path") }
        // Checked here, so --check-config says it too.
        if Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError(
                "--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() async throws {
        var configuration = BridgeConfiguration()
        let path = config ?? ConfigurationLoader.defaultPath
        if config != nil || FileManager.default.fileExists(atPath: path) {
            do {
                configuration = try ConfigurationLoader.load(path: path)
            } catch {
                writeError(error.description)
                throw ExitCode(78)
            }
        }
        if let socket { configuration.socketPath = socket }
        if let store { configuration.storePath = store }
        if checkConfig {
            // No file (and none named): the defaults are what runs, and that is what is checked.
            print(
                FileManager.default.fileExists(atPath: path) ? "\(path): valid" : "no \(path): the defaults are valid")
            return
        }
        let level = Logger.Level(rawValue: logLevel) ?? .notice
        var logger = Logger(label: "hrbridge") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = level
        do {
            try await BridgeDaemon.run(
                configuration: configuration, metrics: PrometheusExposition.bootstrap(), logger: logger)
        } catch let error as DaemonError {
            writeError("hrbridged: \(error)")
            switch error {
            case .store: throw ExitCode(73)
            case .storeBusy: throw ExitCode(75)
            case .adapter: throw ExitCode(69)
            case .listener: throw ExitCode(71)
            case .mqtt: throw ExitCode(78)
            case .output: throw ExitCode(69)
            }
        }
    }
}

/// One line on standard error.
private func writeError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
