import BusHarness
import Logging
import Synchronization
import Testing

@testable import MQTT

/// stop() in a network partition: the broker went away and the reconnect's TCP connect sits in
/// SYN_SENT (its SYNs are dropped). libmosquitto's own thread reconnected with a blocking connect
/// there, which undid the stop's disconnect, so the thread never ended; ours ends within its turns.
@Suite struct MQTTPartitionStopTests {
    /// A "broker" that answers one CONNECT, then drops the connection and drops every later SYN
    /// (its accept queue, one long, is held full), as a partitioned broker does. It prints
    /// `syn-sent` once the client's reconnect waits in SYN_SENT, and lives until its parent exits:
    /// the client's thread, left behind, then keeps retrying a port nobody else can take.
    static let blackhole = """
        import os, socket, time
        # This peer outlives its test: it must not hold open what other tests' sockets it inherited.
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        print("port", port, flush=True)
        client, _ = server.accept()
        def read(count):
            data = b""
            while len(data) < count:
                chunk = client.recv(count - len(data))
                if not chunk:
                    raise SystemExit("closed")
                data += chunk
            return data
        read(1)
        length, shift = 0, 0
        while True:
            byte = read(1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if byte & 0x80 == 0:
                break
        read(length)
        client.sendall(bytes([0x20, 0x02, 0x00, 0x00]))
        print("connected", flush=True)
        filler = socket.create_connection(("127.0.0.1", port))
        client.close()
        print("dropped", flush=True)
        parent = os.getppid()
        wanted = ":%04X" % port
        said = False
        while os.getppid() == parent:
            if not said:
                with open("/proc/net/tcp") as table:
                    for row in table.readlines()[1:]:
                        fields = row.split()
                        if fields[2].endswith(wanted) and fields[3] == "02":
                            print("syn-sent", flush=True)
                            said = True
                            break
            time.sleep(0.05)
        """

    @Test func stopEndsTheLoopThreadWhileTheReconnectWaitsInSynSent() async throws {
        let peer = try await Spawned.startPeer(
            "/usr/bin/python3", ["-c", Self.blackhole], label: "blackhole broker",
            readyLine: { $0.hasPrefix("port ") })
        defer { peer.stop() }
        let line = try #require(peer.output.first { $0.hasPrefix("port ") })
        let port = try #require(Int(line.dropFirst(5)))
        var options = MQTTClient.Options(
            broker: MQTTBrokerURL(host: "127.0.0.1", port: port, usesTLS: false), clientID: "partition-stop-test")
        options.stopTimeout = .seconds(7)
        options.reconnectDelay = 1...3600
        // Only the loop's own bound may end it: no keepalive closes the half-open connect first.
        options.keepalive = 3600
        let clock = ManualClock()
        let connectClock = ManualClock()
        let client = try MQTTClient(
            options: options, logger: Logger(label: "mqtt-test"), clock: clock, connectClock: connectClock)
        try await client.start()
        try #require(await peer.waitForLine { $0 == "dropped" } != nil, "\(peer.report)")
        // The connection's end parks the loop thread; the reconnect waits for its backoff on the clock.
        await clock.waitUntilSleeping()
        #expect(clock.requestedSleeps == [.seconds(1)])
        clock.advance(by: .seconds(1))
        try #require(await peer.waitForLine { $0 == "syn-sent" } != nil, "reconnecting: \(peer.report)")

        let stopped = Atomic(false)
        let stopping = Task {
            await client.stop()
            stopped.store(true, ordering: .relaxed)
        }
        // The thread ends by itself within its last turns: the stop's timeout on the clock never runs out.
        try await eventually("stop returns without its timeout") { stopped.load(ordering: .relaxed) }
        await stopping.value
        #expect(await client.isConnected == false)
        #expect(connectClock.sleeperCount == 0)
        #expect(clock.sleeperCount == 0, "no reconnect after the stop")
    }
}
