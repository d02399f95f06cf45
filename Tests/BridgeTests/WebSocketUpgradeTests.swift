import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Testing
import Wire

@Suite("WebSocket upgrades reach /v1/ws only", .timeLimit(.minutes(3)))
struct WebSocketUpgradeTests {
    /// Sends METHOD PATH with a WebSocket upgrade's headers on the Unix socket and prints the
    /// answer's status line.
    static let upgrade = """
        import socket, sys
        path, method, target = sys.argv[1], sys.argv[2], sys.argv[3]
        connection = socket.socket(socket.AF_UNIX)
        connection.connect(path)
        connection.sendall((
            f"{method} {target} HTTP/1.1\\r\\nHost: hrbridge\\r\\nConnection: Upgrade\\r\\nUpgrade: websocket\\r\\n"
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\nContent-Length: 0\\r\\n\\r\\n"
        ).encode())
        answer = b""
        while b"\\r\\n" not in answer:
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
        print("status", answer.split(b"\\r\\n")[0].decode(errors="replace"), flush=True)
        """

    /// The status line the daemon answers an upgrade of METHOD PATH with.
    private func statusLine(_ daemon: DaemonUnderTest, _ method: String, _ path: String) async throws -> String {
        let client = try await Spawned.startPeer(
            "/usr/bin/python3",
            ["-c", Self.upgrade, daemon.directory.appendingPathComponent("api.sock").path, method, path],
            label: "upgrade", readyLine: { $0.hasPrefix("status ") })
        defer { client.stop() }
        return client.output.first { $0.hasPrefix("status ") } ?? ""
    }

    @Test("an upgrade asked on another route runs nothing there: a session's stop is not done")
    func otherRoutesNotRun() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let created = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[1]]])
            .decoded(SessionJSON.self)
        let stop = try await statusLine(daemon, "POST", "/v1/sessions/\(created.id.wire)/stop")
        #expect(stop.hasPrefix("status HTTP/1.1 400"), "\(stop)")
        let session = try await daemon.unix.send(.GET, "/v1/sessions/\(created.id.wire)").decoded(SessionJSON.self)
        #expect(session.state == "running", "the stop was not run")
        #expect(
            try await statusLine(daemon, "DELETE", "/v1/sensors/\(DaemonUnderTest.straps[2])").hasPrefix(
                "status HTTP/1.1 400"))
        let sensors = try await daemon.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
        #expect(sensors.contains { $0.address == DaemonUnderTest.straps[2] }, "the strap was not forgotten")
        // The stream itself still upgrades.
        let stream = try await statusLine(daemon, "GET", "/v1/ws?kinds=sensor")
        #expect(stream.hasPrefix("status HTTP/1.1 101"), "\(stream)")
    }
}
