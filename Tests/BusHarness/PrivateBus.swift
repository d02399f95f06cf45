public import Foundation

/// A private `dbus-daemon` for one test, configured as a "system" bus in a temporary directory.
///
/// `withPrivateBus` stops the daemon by its PID whatever the test does; a daemon left by a test
/// process that died is stopped by the next run (its PID is kept in its directory).
public final class PrivateBus: Sendable {
    /// The temporary directory holding the socket and configuration.
    public let directory: URL
    /// The bus address, for DBUS_SYSTEM_BUS_ADDRESS.
    public let address: String
    /// The daemon's PID.
    public let pid: pid_t

    /// Starts a daemon; `policy` adds rules to the default policy (e.g. a `deny` to test refusals).
    public init(policy: String = "") throws {
        Self.stopLeftovers()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus")
        let config = directory.appendingPathComponent("bus.conf")
        try Data(Self.configuration(socket: socket.path, policy: policy).utf8).write(to: config)
        // --fork: the launcher prints the address and the daemon's PID, then exits.
        let launcher = Process()
        launcher.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        launcher.arguments = ["--config-file=\(config.path)", "--fork", "--print-address=1", "--print-pid=1"]
        let output = Pipe()
        launcher.standardOutput = output
        launcher.standardError = FileHandle.nullDevice
        try launcher.run()
        var text = ""
        while text.split(separator: "\n").count < 2 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.count >= 2, let pid = pid_t(lines[1]) else { throw CocoaError(.fileReadUnknown) }
        address = lines[0]
        self.pid = pid
        try String(pid).write(to: directory.appendingPathComponent("pid"), atomically: true, encoding: .utf8)
    }

    /// Stops the daemon by its PID. SIGKILL: a throwaway bus has nothing to save, and the daemon
    /// inherits the test runner's blocked SIGTERM (Foundation's Process keeps the signal mask).
    public func stop() {
        kill(pid, SIGKILL)
        for _ in 0..<40 where Self.isAlive(pid) { usleep(25_000) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Alive and not a zombie (a reparented daemon may wait a while to be reaped).
    public static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(close, offsetBy: 2)...].prefix(1)
        return state != "Z" && state != "X"
    }

    /// Buses left by a test process that died: their directories still hold a PID file.
    private static func stopLeftovers() {
        let temporary = FileManager.default.temporaryDirectory
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        for entry in entries where entry.hasPrefix("hrbridge-bus-") {
            let directory = temporary.appendingPathComponent(entry)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: directory.path),
                let modified = attributes[.modificationDate] as? Date, modified.timeIntervalSinceNow < -900,
                let text = try? String(contentsOf: directory.appendingPathComponent("pid"), encoding: .utf8),
                let pid = pid_t(text)
            else { continue }
            // The daemon may be long gone and its PID another process's now (this test runner's,
            // once): only a dbus-daemon started with this directory's configuration is stopped.
            if isBusDaemon(pid, configuration: directory.appendingPathComponent("bus.conf").path) {
                kill(pid, SIGKILL)
            }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Whether `pid` is the dbus-daemon started with `configuration` (its command line says so).
    static func isBusDaemon(_ pid: pid_t, configuration: String) -> Bool {
        guard pid > 0, let commandLine = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else {
            return false
        }
        let arguments = commandLine.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        return arguments.first?.hasSuffix("dbus-daemon") == true
            && arguments.contains("--config-file=\(configuration)")
    }

    private static func configuration(socket: String, policy: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_type="method_return"/>
            <allow send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="signal"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            \(policy)
          </policy>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">100000000</limit>
        </busconfig>
        """
    }
}

/// Runs `body` with a private bus, and stops the bus afterwards even when `body` throws.
public func withPrivateBus<T>(_ body: (PrivateBus) async throws -> T) async throws -> T {
    let bus = try PrivateBus()
    defer { bus.stop() }
    return try await body(bus)
}
