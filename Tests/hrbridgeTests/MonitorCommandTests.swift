import Foundation
import Testing

@Suite("hrbridge monitor")
struct MonitorCommandTests {
    @Test("--edf into a directory that does not exist: exit 73 at once, before any strap is looked for")
    func edfDirectoryCheckedFirst() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrbridge-none-\(UUID().uuidString)")
        let result = try await runHRBridge([
            "monitor", "--ecg", "--edf", missing.appendingPathComponent("s01").path, "--duration", "5",
        ])
        #expect(result.status == 73)
        #expect(result.stderr.contains("--edf") && result.stderr.contains("cannot create files in"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test(
        "--osc-preset names only the presets monitor takes: custom is refused with where it goes",
        arguments: [("bogus", false), ("CUSTOM", true)])
    func oscPresetRefused(preset: String, custom: Bool) async throws {
        let result = try await runHRBridge(["monitor", "--osc", "127.0.0.1:9000", "--osc-preset", preset])
        #expect(result.status == 64)
        #expect(
            result.stderr.contains(
                "is not one of hrtovrchat, hrpresence, iron-heart, vrcosc\(custom ? " (custom" : "\n")"),
            "\(result.stderr)")
    }
}
