import BusHarness
import Foundation
import Testing

/// `hrbridge monitor --osc` end to end: a virtual strap on BlueZoo, the command, and python-osc
/// receiving what an avatar would.
@Suite(.timeLimit(.minutes(3))) struct MonitorOSCTests {
    static let central = "00:00:00:00:00:01"
    static let strapAddress = "00:00:00:00:00:02"

    @Test func monitorSendsTheStrapAsOSCAndTheDropAtTheEnd() async throws {
        let server = try await PythonOSCServer()
        defer { server.stop() }
        try await withBlueZoo(adapters: [Self.central, Self.strapAddress]) { bed in
            // 72 bpm, skin contact, one RR of 1 s per frame.
            _ = try await bed.startStrap(
                address: Self.strapAddress, frames: Array(repeating: "16 48 00 04", count: 20), interval: 0.1)
            let executable = packageRoot.appendingPathComponent(".build/debug/hrbridge").path
            let binary =
                FileManager.default.isExecutableFile(atPath: executable)
                ? executable
                : URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                    .appendingPathComponent("hrbridge").path
            let monitor = try Spawned(
                binary,
                [
                    "monitor", "--adapter", "hci0", "--json", "--duration", "5", "--osc", "127.0.0.1:\(server.port)",
                    "--osc-preset", "hrpresence",
                ], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address], label: "monitor")
            defer { monitor.stop() }
            let summary = await monitor.waitForLine { $0.hasPrefix("hrbridge: OSC: ") }
            #expect(summary?.hasSuffix(", 0 send errors") == true, "\(monitor.report)")
            #expect(await monitor.wait() == 0)
            let sent = Int(summary?.split(separator: " ")[2] ?? "") ?? -1
            try await server.waitUntil("the \(sent) datagrams monitor sent") { $0.count == sent }

            let messages = server.messages
            #expect(
                messages.contains {
                    $0.address == "/avatar/parameters/HR" && $0.values == [.int(72)] && $0.tags == ",i"
                })
            #expect(messages.contains { $0.address == "/avatar/parameters/RRInterval" && $0.values == [.int(1000)] })
            #expect(messages.contains { $0.address == "/avatar/parameters/isHRBeat" && $0.values == [.bool(true)] })
            let connected = messages.filter { $0.address == "/avatar/parameters/isHRConnected" }.map(\.tags)
            #expect(connected.first == ",T")
            #expect(connected.last == ",F", "the end tells the avatar the strap is gone")
            let lastHR = messages.last { $0.address == "/avatar/parameters/HR" }
            #expect(lastHR?.values == [.int(0)])
            #expect(server.refused.isEmpty)
        }
    }
}
