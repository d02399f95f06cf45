public import Foundation

/// The repository root, found from this file's path.
public let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The Python interpreter of the test venv (`scripts/setup-python.sh`, run by `make test`).
public let venvPython = packageRoot.appendingPathComponent(".venv/bin/python").path

/// The Python that has Debian's dbus-python and PyGObject, for fixtures.
public let systemPython = "/usr/bin/python3"

/// A private system bus with BlueZoo (an independent org.bluez imitation) and virtual straps.
///
/// Everything started here is stopped by PID in ``stop()``, which `withBlueZoo` always calls.
public final class BlueZooBed: Sendable {
    /// The bus.
    public let bus: PrivateBus
    /// The BlueZoo process.
    public let bluezoo: Spawned
    private let children: LockedList<Spawned>

    /// Starts BlueZoo with one virtual adapter per address (hci0, hci1…).
    public init(adapters: [String]) async throws {
        bus = try PrivateBus()
        let venv = packageRoot.appendingPathComponent(".venv/bin/bluezoo").path
        guard FileManager.default.isExecutableFile(atPath: venv) else {
            bus.stop()
            throw HarnessError("BlueZoo is not installed: run scripts/setup-python.sh (make test does)")
        }
        let lastAdapter = "Adding adapter[\(adapters.count - 1)]"
        do {
            bluezoo = try await Spawned.startPeer(
                venv, ["--auto-enable", "--scan-interval", "1"] + adapters.flatMap { ["-a", $0] },
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], label: "bluezoo",
                readyLine: { $0.contains(lastAdapter) })
        } catch {
            bus.stop()
            throw error
        }
        children = LockedList()
    }

    /// Starts a virtual strap on the adapter with `address`, notifying `frames` (hex) every `interval`
    /// once subscribed; `gated`: not before ``Strap/send(_:)`` says `resume`; `more` are further
    /// options of `strap.py` (`--pmd`, `--mtu N`).
    public func startStrap(
        address: String, frames: [String], interval: Double = 0.02, service: String = "180d",
        name: String = "Test Strap", gated: Bool = false, more: [String] = []
    ) async throws -> Strap {
        let directory = bus.directory
        let framesFile = directory.appendingPathComponent("frames-\(address).txt")
        try Data(frames.joined(separator: "\n").utf8).write(to: framesFile)
        let control = directory.appendingPathComponent("control-\(address)").path
        guard mkfifo(control, 0o600) == 0 else { throw HarnessError("cannot create \(control)") }
        let script = packageRoot.appendingPathComponent("Tests/Fixtures/bluez/strap.py").path
        let process = try await Spawned.startPeer(
            systemPython,
            [
                script, "--adapter-address", address, "--frames", framesFile.path, "--interval", String(interval),
                "--service", service, "--name", name, "--control", control,
            ] + (gated ? ["--gated"] : []) + more, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address],
            label: "strap \(address)",
            readyLine: { $0 == "ready" })
        children.append(process)
        return Strap(process: process, control: control)
    }

    /// Stops every strap, BlueZoo and the bus, by PID.
    public func stop() {
        for child in children.all { child.stop() }
        bluezoo.stop()
        bus.stop()
    }
}

/// A running virtual strap.
public struct Strap: Sendable {
    /// Its process.
    public let process: Spawned
    let control: String

    /// Sends a control line: `hold`, `resume`, `disconnect`, `quit`.
    public func send(_ command: String) throws {
        let descriptor = open(control, O_WRONLY | O_NONBLOCK)
        guard descriptor >= 0 else { throw HarnessError("cannot open \(control)") }
        defer { close(descriptor) }
        let bytes = Array((command + "\n").utf8)
        _ = write(descriptor, bytes, bytes.count)
    }
}

/// Runs `body` with a BlueZoo bed and stops everything afterwards, even when `body` throws.
public func withBlueZoo<T>(adapters: [String], _ body: (BlueZooBed) async throws -> T) async throws -> T {
    let bed = try await BlueZooBed(adapters: adapters)
    defer { bed.stop() }
    return try await body(bed)
}

/// A harness failure with a message.
public struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// Creates an error.
    public init(_ description: String) { self.description = description }
}

/// A list behind a lock.
final class LockedList<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []

    func append(_ element: Element) {
        lock.lock()
        elements.append(element)
        lock.unlock()
    }

    var all: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return elements
    }
}
