import BusHarness
import Foundation
import Testing

/// A heart-rate frame a virtual strap sends, and what hrbridge must print for it.
struct PlannedFrame: Sendable {
    let hex: String
    let heartRate: Int
    /// In seconds (1/1024 s on the wire).
    let rrIntervals: [Double]
    let energyExpended: Int?
    /// A malformed frame: hrbridge must refuse it and go on.
    var refused = false
}

/// What one scenario left in the output folder.
struct ScenarioOutput {
    let folder: URL

    /// The JSON lines of a file hrbridge printed (`<name>.out`); other lines are skipped.
    func lines(_ name: String) -> [[String: Any]] {
        let text = (try? String(contentsOf: folder.appendingPathComponent("\(name).out"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    func text(_ file: String) -> String {
        (try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)) ?? ""
    }

    /// What the straps did (bed.py's result.json).
    var result: [String: Any] {
        guard let data = try? Data(contentsOf: folder.appendingPathComponent("result.json")) else { return [:] }
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// The bed's traceback when the scenario itself broke, for the failure message.
    var failure: String? {
        let text = text("failure.txt")
        return text.isEmpty ? nil : text
    }

    /// Measurement lines for one sensor, as (heart rate, RR in s, energy).
    func measurements(_ name: String, sensor: String) -> [PlannedFrame] {
        lines(name).filter { $0["heartRate"] != nil && $0["sensor"] as? String == sensor }.map { line in
            PlannedFrame(
                hex: "", heartRate: line["heartRate"] as? Int ?? -1,
                rrIntervals: (line["rrIntervals"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.doubleValue },
                energyExpended: line["energyExpended"] as? Int)
        }
    }
}

/// The real-BlueZ bed (Tests/Fixtures/real-bluez): one QEMU boot of Debian's kernel with
/// bluetoothd 5.66 and Bumble virtual controllers and straps runs every scenario; each test then
/// asserts on what hrbridge printed in its scenario.
enum RealBlueZBed {
    /// Every scenario, in the order the guest plays them. The relay's come last: `relaylimited`
    /// adds a third controller, and `relay` expects hrbridge to place itself among two.
    static let allScenarios = [
        "scan", "monitor", "pair", "away", "restart", "adapters", "daemon", "broadcast", "spoof", "pmd",
        "relay", "relayrestart", "relaysim", "relaydaemon", "relay1", "relaylimited",
    ]

    /// The scenarios this run plays: all of them, or those `REAL_BLUEZ_SCENARIOS` names
    /// (comma-separated, e.g. `relay,relay1`) to iterate on a few; the tests of the others then
    /// fail with "left no result".
    static let scenarios: [String] = {
        let named = (ProcessInfo.processInfo.environment["REAL_BLUEZ_SCENARIOS"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return named.isEmpty ? allScenarios : allScenarios.filter(named.contains)
    }()

    /// Sent in this order in every streaming scenario; flags 0x06 = contact detected. One frame
    /// is malformed (a 16-bit heart rate with one byte): it is refused, and the stream goes on.
    static let frames: [PlannedFrame] = [
        PlannedFrame(hex: "0648", heartRate: 72, rrIntervals: [], energyExpended: nil),
        PlannedFrame(hex: "1649a003", heartRate: 73, rrIntervals: [928 / 1024], energyExpended: nil),
        PlannedFrame(hex: "0e4a6400", heartRate: 74, rrIntervals: [], energyExpended: 100),
        PlannedFrame(hex: "1e4b0a00c003", heartRate: 75, rrIntervals: [960 / 1024], energyExpended: 10),
        PlannedFrame(hex: "074d00", heartRate: 77, rrIntervals: [], energyExpended: nil),
        PlannedFrame(hex: "164e9a03a203", heartRate: 78, rrIntervals: [922 / 1024, 930 / 1024], energyExpended: nil),
        PlannedFrame(hex: "0650", heartRate: 80, rrIntervals: [], energyExpended: nil),
        PlannedFrame(hex: "0751", heartRate: 81, rrIntervals: [], energyExpended: nil, refused: true),
        PlannedFrame(hex: "075100", heartRate: 81, rrIntervals: [], energyExpended: nil),
        PlannedFrame(hex: "1652b003", heartRate: 82, rrIntervals: [944 / 1024], energyExpended: nil),
        PlannedFrame(hex: "0653", heartRate: 83, rrIntervals: [], energyExpended: nil),
    ]

    /// What hrbridge must deliver: every frame but the malformed one, in order.
    static var delivered: [PlannedFrame] { frames.filter { !$0.refused } }

    /// A frame with ten RR intervals: 22 bytes, more than a 20-byte notification (the default
    /// ATT MTU of 23) carries, so the relay splits it in two.
    static let longFrame =
        "165a"
        + (0..<10).map { index in
            let value = 900 + index
            return String(format: "%02x%02x", value & 0xFF, value >> 8)
        }.joined()

    /// The relay's scenarios send these first: every frame of the plan, then the long one.
    static var relayFrames: [String] { frames.map(\.hex) + [longFrame] }

    static let script = packageRoot.appendingPathComponent("Tests/Fixtures/real-bluez/boot.sh").path

    /// The hrbridge built beside this test bundle: the guest runs it from the shared host root.
    static let hrbridge = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("hrbridge").path

    /// Why this host's architecture cannot run the bed, or nil on x86-64.
    static func otherArchitecture() -> String? {
        #if arch(x86_64)
            nil
        #else
            "the bed boots an x86-64 guest with this host's executables: it runs on x86-64 hosts only"
        #endif
    }

    /// Why this host cannot run the bed, or nil. Printed when the suite is skipped.
    static var unavailableReason: String? {
        if ProcessInfo.processInfo.environment["HRBRIDGE_SKIP_REAL_BLUEZ"] == "1" {
            return "HRBRIDGE_SKIP_REAL_BLUEZ=1"
        }
        // The guest is Debian's amd64 kernel under qemu-system-x86_64, running this host's executables.
        if let reason = otherArchitecture() { return reason }
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        if !paths.contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/qemu-system-x86_64") }) {
            return "qemu-system-x86_64 is not installed (make test-setup installs qemu-system-x86)"
        }
        if !FileManager.default.isExecutableFile(atPath: hrbridge) {
            return "no hrbridge executable beside the tests at \(hrbridge)"
        }
        if !FileManager.default.isExecutableFile(atPath: hrbridge + "d") {
            return "no hrbridged executable beside the tests at \(hrbridge)d"
        }
        return nil
    }

    /// Whether the suite runs; says why not on standard output.
    static func runs() -> Bool {
        guard let reason = unavailableReason else { return true }
        print("RealBlueZTests skipped: \(reason)")
        return false
    }

    enum BedError: Error, CustomStringConvertible {
        case bootFailed(status: Int32?, console: String)
        var description: String {
            switch self {
            case .bootFailed(let status, let console):
                "the guest did not run (exit \(status.map(String.init) ?? "none")); \(console)"
            }
        }
    }

    /// The last lines of the guest's console and of bed.log in a run's folder: why a guest that
    /// did not get through its scenarios stopped (a script it could not see, a crash, a timeout).
    static func guestReport(_ run: URL, lines count: Int = 20) -> String {
        func tail(_ file: String) -> String? {
            let url = run.appendingPathComponent(file)
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { return nil }
            // Without the terminal escapes SeaBIOS prints (reset, clear screen).
            let plain = (try? Regex(#"\x1B(\[[0-9;?]*[A-Za-z]|.)"#)).map { text.replacing($0, with: "") } ?? text
            let lines = plain.split(separator: "\n").filter {
                !$0.allSatisfy(\.isWhitespace)
            }
            guard !lines.isEmpty else { return nil }
            return "\(url.path) ends:\n" + lines.suffix(count).map { "  \($0)" }.joined(separator: "\n")
        }
        var parts = [
            "the guest's console, " + (tail("console.log") ?? "console.log in \(run.path), is empty or missing")
        ]
        if let bed = tail("bed.log") { parts.append(bed) }
        return parts.joined(separator: "\n")
    }

    /// Why a scenario left nothing behind (neither result.json nor failure.txt: the guest never got
    /// to it or died in it), with the guest's report; nil when it ran.
    static func missingResult(_ scenario: String, in run: URL) -> String? {
        let folder = run.appendingPathComponent(scenario)
        let ran = ["result.json", "failure.txt"].contains {
            FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path)
        }
        return ran ? nil : "scenario \(scenario) left no result: the guest did not run it; \(guestReport(run))"
    }

    /// The plan's hrbridge: a link to the built one in a folder under /tmp, where the guest mounts
    /// a tmpfs, so every run shows that the guest still sees the host paths it needs there (as it
    /// must for a checkout under /tmp or /root); `hrbridged` is linked beside it. The built one
    /// when /tmp cannot take the links.
    private static func linkedHrbridge() -> (path: String, folder: URL?) {
        let folder = URL(fileURLWithPath: "/tmp/hrbridge-real-bluez-\(UUID().uuidString)")
        let link = folder.appendingPathComponent("hrbridge")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: hrbridge)
            try FileManager.default.createSymbolicLink(
                atPath: folder.appendingPathComponent("hrbridged").path, withDestinationPath: hrbridge + "d")
            return (link.path, folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            return (hrbridge, nil)
        }
    }

    /// The hrbridge path the run's plan gave the guest.
    static func plannedHrbridge(_ run: URL) -> String? {
        guard let data = try? Data(contentsOf: run.appendingPathComponent("plan.json")),
            let plan = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return plan["hrbridge"] as? String
    }

    /// The pmd scenario's synthetic ECG (µV at 130 Hz), in the run's folder: the strap sends it,
    /// and the test compares hrbridge's samples with it.
    static let syntheticECGFile = "pmd-ecg.json"

    /// Made on the host with NeuroKit2 (the guest's Bumble venv has none); without it the
    /// scenario fails in the guest and says the file is missing.
    private static func writeSyntheticECG(to file: URL) async {
        let script = packageRoot.appendingPathComponent("Tests/Fixtures/real-bluez/pmd_ecg.py").path
        guard let process = try? Spawned(venvPython, [script, file.path], label: "synthetic ECG") else { return }
        if await process.wait(timeout: .seconds(120)) == nil { process.stop() }
    }

    /// The synthetic ECG of a run (empty when it was not made).
    static func syntheticECG(in run: URL) -> [Int] {
        guard let data = try? Data(contentsOf: run.appendingPathComponent(syntheticECGFile)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [] }
        return (object["microvolts"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue }
    }

    /// The one boot, started by the first test that asks.
    private static let boot = Task<Result<URL, BedError>, Never> {
        let runs = packageRoot.appendingPathComponent(".build/real-bluez/runs")
        // Earlier runs' output is kept until the next run, for reading after a failure.
        try? FileManager.default.removeItem(at: runs)
        let folder = runs.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let linked = linkedHrbridge()
        defer { linked.folder.map { try? FileManager.default.removeItem(at: $0) } }
        let plan: [String: Any] = [
            "hrbridge": linked.path, "scenarios": scenarios, "frames": frames.map(\.hex),
            "relayFrames": relayFrames,
        ]
        try? JSONSerialization.data(withJSONObject: plan).write(to: folder.appendingPathComponent("plan.json"))
        if scenarios.contains("pmd") { await writeSyntheticECG(to: folder.appendingPathComponent(syntheticECGFile)) }
        let status: Int32?
        do {
            let process = try Spawned("/bin/bash", [script, folder.path], label: "real-bluez guest")
            // Under TCG the whole run takes a few minutes; boot.sh has its own QEMU timeout.
            status = await process.wait(timeout: .seconds(1_800))
            if status == nil { process.stop() }
        } catch {
            return .failure(.bootFailed(status: nil, console: "\(error)"))
        }
        guard status == 0 else {
            return .failure(.bootFailed(status: status, console: guestReport(folder)))
        }
        return .success(folder)
    }

    /// The output of one scenario, recording an issue when the bed itself broke in it, and
    /// stopping the test, with the guest's console, when the guest never ran it.
    static func checkedOutput(
        _ scenario: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ScenarioOutput {
        let output = try await output(scenario)
        let missing = missingResult(scenario, in: output.folder.deletingLastPathComponent())
        try #require(missing == nil, "\(missing ?? "")", sourceLocation: sourceLocation)
        #expect(output.failure == nil, "\(output.failure ?? "")", sourceLocation: sourceLocation)
        return output
    }

    /// The output of one scenario, once the guest has run (booting it if no test has yet).
    static func output(_ scenario: String) async throws -> ScenarioOutput {
        let folder = try await boot.value.get()
        return ScenarioOutput(folder: folder.appendingPathComponent(scenario))
    }
}
