import BusHarness
import Foundation
import Testing

/// The whole-system bed (Tests/Fixtures/system): the package installed with apt in a Debian 12
/// guest booted twice under QEMU with systemd as PID 1, real D-Bus and bluetoothd, and a Bumble
/// strap. The guest's driver (guest.py) records what it saw per scenario; the tests assert on it.
enum SystemBed {
    /// The two packages `make test-system` built: the one installed, and a newer one for the upgrade.
    struct Packages: Sendable {
        let installed: URL
        let upgrade: URL
    }

    static let strap = "C1:00:00:00:00:39"

    static let packages: Packages? = {
        let named = (ProcessInfo.processInfo.environment["HRBRIDGE_SYSTEM_DEBS"] ?? "").split(separator: ":")
        guard named.count == 2 else { return nil }
        return Packages(
            installed: URL(fileURLWithPath: String(named[0])), upgrade: URL(fileURLWithPath: String(named[1])))
    }()

    /// Why this host's architecture cannot run the bed, or nil on x86-64.
    static func otherArchitecture() -> String? {
        #if arch(x86_64)
            nil
        #else
            "the bed boots an x86-64 guest with this host's packages: it runs on x86-64 hosts only"
        #endif
    }

    /// Why this run cannot use the bed, or nil. Printed when the suite is skipped.
    static var unavailableReason: String? {
        // The guest is Debian's amd64 kernel under qemu-system-x86_64, booting this host's packages.
        if let reason = otherArchitecture() { return reason }
        if getuid() != 0 {
            return "the system bed builds a root filesystem with its files' owners: run make test-system as root"
        }
        guard let packages else {
            return "HRBRIDGE_SYSTEM_DEBS names no packages (make test-system builds them and runs this suite)"
        }
        for deb in [packages.installed, packages.upgrade] where !FileManager.default.fileExists(atPath: deb.path) {
            return "no package at \(deb.path)"
        }
        return nil
    }

    static func runs() -> Bool {
        guard let reason = unavailableReason else { return true }
        print("SystemTests skipped: \(reason)")
        return false
    }

    enum BedError: Error, CustomStringConvertible {
        case bootFailed(status: Int32?, report: String)
        var description: String {
            switch self {
            case .bootFailed(let status, let report):
                "the system bed did not run (exit \(status.map(String.init) ?? "none")); \(report)"
            }
        }
    }

    /// What the guest recorded in a run's folder.
    struct Run: Sendable {
        let folder: URL

        /// One scenario's facts from boot 1 or 2 (phase-N.json).
        func facts(_ scenario: String, boot: Int) -> [String: Any] {
            let url = folder.appendingPathComponent("phase-\(boot).json")
            guard let data = try? Data(contentsOf: url),
                let phase = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return [:] }
            return phase[scenario] as? [String: Any] ?? [:]
        }

        func text(_ file: String) -> String {
            (try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)) ?? ""
        }

        /// The frames the strap sent: (wall time, heart rate).
        var sentFrames: [(time: Double, heartRate: Int)] {
            text("sent.jsonl").split(separator: "\n").compactMap { line in
                guard let frame = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let time = (frame["t"] as? NSNumber)?.doubleValue, let rate = (frame["hr"] as? NSNumber)?.intValue
                else { return nil }
                return (time, rate)
            }
        }

        /// The last lines of the consoles and the driver's log: why a boot stopped short.
        var report: String {
            ["console-1.log", "console-2.log", "driver.log", "strap.log"].map { file in
                let lines = text(file).split(separator: "\n").suffix(15)
                return "\(folder.path)/\(file) ends:\n" + lines.map { "  \($0)" }.joined(separator: "\n")
            }.joined(separator: "\n")
        }
    }

    /// The bed's one run (two boots), started by the first test that asks.
    private static let run = Task<Result<Run, BedError>, Never> {
        guard let packages else { return .failure(.bootFailed(status: nil, report: unavailableReason ?? "")) }
        let runs = packageRoot.appendingPathComponent(".build/system-bed/runs")
        // The last run's output stays until the next run, for reading after a failure.
        try? FileManager.default.removeItem(at: runs)
        let folder = runs.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = packageRoot.appendingPathComponent("Tests/Fixtures/system/run.sh").path
        let status: Int32?
        do {
            let process = try Spawned(
                "/bin/bash", [script, folder.path, packages.installed.path, packages.upgrade.path],
                label: "system bed")
            // Two boots under TCG; run.sh bounds each boot itself.
            status = await process.wait(timeout: .seconds(3_600))
            if status == nil { process.stop() }
        } catch {
            return .failure(.bootFailed(status: nil, report: "\(error)"))
        }
        let run = Run(folder: folder)
        guard status == 0 else { return .failure(.bootFailed(status: status, report: run.report)) }
        return .success(run)
    }

    /// A scenario's facts, once the bed has run; stops the test when the guest never got to it, and
    /// records the traceback when the driver broke in it.
    static func facts(
        _ scenario: String, boot: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (facts: [String: Any], run: Run) {
        let run = try await run.value.get()
        let facts = run.facts(scenario, boot: boot)
        try #require(
            !facts.isEmpty, "boot \(boot) never ran scenario \(scenario); \(run.report)", sourceLocation: sourceLocation
        )
        #expect(facts["error"] == nil, "\(facts["error"] ?? "")", sourceLocation: sourceLocation)
        return (facts, run)
    }
}
