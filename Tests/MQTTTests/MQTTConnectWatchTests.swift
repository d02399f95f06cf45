import BusHarness
import Logging
import Testing

@testable import MQTT

/// The first connect's timeout, on a clock the test moves, against a "broker" that accepts the TCP
/// connection and never answers: the client starts the connect again from a fresh loop thread.
@Suite struct MQTTConnectWatchTests {
    /// A listener on a free loopback port that accepts connections, reads nothing back and prints
    /// `accepted N` for each.
    static let silentListener = """
        import socket
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        print("port", server.getsockname()[1], flush=True)
        held = []
        while True:
            connection, _ = server.accept()
            held.append(connection)
            print("accepted", len(held), flush=True)
        """

    @Test func anUnansweredFirstConnectIsStartedAgainAfterTheTimeoutOnTheClock() async throws {
        let listener = try await Spawned.startPeer(
            "/usr/bin/python3", ["-c", Self.silentListener], label: "silent listener",
            readyLine: { $0.hasPrefix("port ") })
        defer { listener.stop() }
        let line = try #require(listener.output.first { $0.hasPrefix("port ") })
        let port = try #require(Int(line.dropFirst(5)))
        var options = MQTTClient.Options(
            broker: MQTTBrokerURL(host: "127.0.0.1", port: port, usesTLS: false), clientID: "watch-test")
        options.connectTimeout = .seconds(15)
        let connectClock = ManualClock()
        let client = try MQTTClient(
            options: options, logger: Logger(label: "mqtt-test"), clock: ManualClock(), connectClock: connectClock)
        try await client.start()
        #expect(await listener.waitForLine { $0 == "accepted 1" } != nil, "\(listener.report)")

        await connectClock.waitUntilSleeping()
        #expect(connectClock.requestedSleeps == [.seconds(15)])
        connectClock.advance(by: .seconds(15) - .milliseconds(1))
        #expect(!listener.output.contains("accepted 2"), "not before the timeout")
        connectClock.advance(by: .milliseconds(1))
        #expect(await listener.waitForLine { $0 == "accepted 2" } != nil, "connected again: \(listener.report)")
        #expect(await client.isConnected == false)

        // Once more, then stop() ends the watch: no connect after it.
        await connectClock.waitUntilSleeping()
        connectClock.advance(by: .seconds(15))
        #expect(await listener.waitForLine { $0 == "accepted 3" } != nil)
        await client.stop()
        connectClock.advance(by: .seconds(60))
        #expect(connectClock.sleeperCount == 0)
        #expect(!listener.output.contains("accepted 4"))
    }
}
