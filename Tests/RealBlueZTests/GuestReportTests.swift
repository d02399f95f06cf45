import Foundation
import Testing

/// How the real-BlueZ bed says why its guest did not run a scenario (no QEMU needed): the failure
/// carries the last lines of the guest's console and of bed.log, and where they are.
struct GuestReportTests {
    /// A run folder as a guest that could not see its script leaves it: a console, no results.
    private func run(console: [String], bedLog: String? = nil) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guest-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try console.joined(separator: "\n").write(
            to: folder.appendingPathComponent("console.log"), atomically: true, encoding: .utf8)
        if let bedLog {
            try bedLog.write(to: folder.appendingPathComponent("bed.log"), atomically: true, encoding: .utf8)
        }
        return folder
    }

    @Test("a scenario the guest never ran fails with the console's last lines and its path")
    func missingScenarioShowsTheConsole() throws {
        let boot = (1...40).map { "[    \($0).000000] boot line \($0)" }
        let folder = try run(
            console: boot + [
                "", "\u{1B}c\u{1B}[?7l\u{1B}[2J[    4.1] drbg", "init: guest ready",
                "/bin/bash: /tmp/hrbridge/Tests/Fixtures/real-bluez/guest.sh: No such file or directory",
                "init: guest script exited with 127", "[   5.034105] reboot: Power down",
            ])
        defer { try? FileManager.default.removeItem(at: folder) }
        let message = try #require(RealBlueZBed.missingResult("broadcast", in: folder))
        #expect(message.contains("scenario broadcast left no result"))
        #expect(message.contains(folder.appendingPathComponent("console.log").path))
        #expect(message.contains("guest.sh: No such file or directory"))
        #expect(message.contains("init: guest script exited with 127"))
        #expect(message.contains("\n  [    4.1] drbg\n"), "terminal escapes left in")
        // The last 20 lines that say something (15 of the boot's), not the whole boot.
        #expect(message.contains("boot line 26\n"))
        #expect(!message.contains("boot line 25\n"))
    }

    @Test("a bed that died mid-run adds bed.log's last lines; a scenario that ran or broke is not reported")
    func bedLogAndScenariosThatRan() throws {
        let folder = try run(
            console: ["init: guest ready", "guest: bed exited with 1"],
            bedLog: "Traceback (most recent call last):\nModuleNotFoundError: No module named 'bumble'\n")
        defer { try? FileManager.default.removeItem(at: folder) }
        let message = try #require(RealBlueZBed.missingResult("scan", in: folder))
        #expect(message.contains("guest: bed exited with 1"))
        #expect(message.contains(folder.appendingPathComponent("bed.log").path))
        #expect(message.contains("No module named 'bumble'"))
        for file in ["result.json", "failure.txt"] {
            let scenario = folder.appendingPathComponent(file == "result.json" ? "scan" : "pair")
            try FileManager.default.createDirectory(at: scenario, withIntermediateDirectories: true)
            try "{}".write(to: scenario.appendingPathComponent(file), atomically: true, encoding: .utf8)
        }
        #expect(RealBlueZBed.missingResult("scan", in: folder) == nil)
        #expect(RealBlueZBed.missingResult("pair", in: folder) == nil)
    }

    @Test("a guest that did not boot reports its console too")
    func bootFailureShowsTheConsole() throws {
        let folder = try run(console: ["SeaBIOS", "init: insmod 9p.ko failed"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = RealBlueZBed.BedError.bootFailed(status: 124, console: RealBlueZBed.guestReport(folder))
        #expect("\(error)".contains("exit 124"))
        #expect("\(error)".contains("init: insmod 9p.ko failed"))
    }
}
