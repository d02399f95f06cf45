import BusHarness
import Foundation
import Testing

/// A bus left by a test process that died is stopped by the next run; its recorded PID may belong
/// to another process by then, which must live.
@Suite("leftover private buses: their daemons stopped, nobody else")
struct PrivateBusLeftoversTests {
    /// Makes `directory` look 20 minutes old, past the age at which a bus counts as left over.
    func age(_ directory: URL) throws {
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-1200)], ofItemAtPath: directory.path)
    }

    @Test("a leftover bus whose PID is now another process's: that process lives, the directory goes")
    func reusedPID() async throws {
        let bystander = try Spawned("/bin/sleep", ["600"])
        defer { bystander.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrbridge-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("<busconfig/>".utf8).write(to: directory.appendingPathComponent("bus.conf"))
        try String(bystander.pid).write(to: directory.appendingPathComponent("pid"), atomically: true, encoding: .utf8)
        try age(directory)

        let bus = try PrivateBus()
        bus.stop()
        #expect(PrivateBus.isAlive(bystander.pid), "a process that is not the leftover daemon was killed")
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test("a leftover bus's own daemon is stopped and its directory removed")
    func leftoverDaemon() async throws {
        let leftover = try PrivateBus()
        #expect(PrivateBus.isAlive(leftover.pid))
        try age(leftover.directory)

        let bus = try PrivateBus()
        bus.stop()
        try await eventually("the leftover daemon to end") { !PrivateBus.isAlive(leftover.pid) }
        #expect(!FileManager.default.fileExists(atPath: leftover.directory.path))
    }
}
