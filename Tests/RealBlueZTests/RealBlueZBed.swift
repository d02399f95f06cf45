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
    static let scenarios = ["scan", "monitor", "pair", "away", "restart", "adapters", "daemon", "broadcast"]

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

    static let script = packageRoot.appendingPathComponent("Tests/Fixtures/real-bluez/boot.sh").path

    /// The hrbridge built beside this test bundle: the guest runs it from the shared host root.
    static let hrbridge = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("hrbridge").path

    /// Why this host cannot run the bed, or nil. Printed when the suite is skipped.
    static var unavailableReason: String? {
        if ProcessInfo.processInfo.environment["HRBRIDGE_SKIP_REAL_BLUEZ"] == "1" {
            return "HRBRIDGE_SKIP_REAL_BLUEZ=1"
        }
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        if !paths.contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/qemu-system-x86_64") }) {
            return "qemu-system-x86_64 is not installed (make test-setup installs qemu-system-x86)"
        }
        if !FileManager.default.isExecutableFile(atPath: hrbridge) {
            return "no hrbridge executable beside the tests at \(hrbridge)"
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
                "the guest did not run (exit \(status.map(String.init) ?? "none")); console tail:\n\(console)"
            }
        }
    }

    /// The one boot, started by the first test that asks.
    private static let boot = Task<Result<URL, BedError>, Never> {
        let runs = packageRoot.appendingPathComponent(".build/real-bluez/runs")
        // Earlier runs' output is kept until the next run, for reading after a failure.
        try? FileManager.default.removeItem(at: runs)
        let folder = runs.appendingPathComponent(UUID().uuidString)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let plan: [String: Any] = [
            "hrbridge": hrbridge, "scenarios": scenarios, "frames": frames.map(\.hex),
        ]
        try? JSONSerialization.data(withJSONObject: plan).write(to: folder.appendingPathComponent("plan.json"))
        let status: Int32?
        do {
            let process = try Spawned("/bin/bash", [script, folder.path], label: "real-bluez guest")
            // Under TCG the whole run takes a few minutes; boot.sh has its own QEMU timeout.
            status = await process.wait(timeout: .seconds(1_200))
            if status == nil { process.stop() }
        } catch {
            return .failure(.bootFailed(status: nil, console: "\(error)"))
        }
        guard status == 0 else {
            let console = (try? String(contentsOf: folder.appendingPathComponent("console.log"), encoding: .utf8)) ?? ""
            return .failure(.bootFailed(status: status, console: String(console.suffix(3_000))))
        }
        return .success(folder)
    }

    /// The output of one scenario, recording an issue when the bed itself broke in it.
    static func checkedOutput(
        _ scenario: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ScenarioOutput {
        let output = try await output(scenario)
        #expect(output.failure == nil, "\(output.failure ?? "")", sourceLocation: sourceLocation)
        return output
    }

    /// The output of one scenario, once the guest has run (booting it if no test has yet).
    static func output(_ scenario: String) async throws -> ScenarioOutput {
        let folder = try await boot.value.get()
        return ScenarioOutput(folder: folder.appendingPathComponent(scenario))
    }
}
