import BusHarness
import Logging
import Testing

@testable import MQTT

/// stop() in a network partition: libmosquitto's thread sits in a blocking TCP connect to a broker
/// whose SYNs are dropped, and its next reconnect overwrites the disconnect that should end it.
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

    @Test func stopReturnsAfterItsTimeoutAndKeepsTheClientAnsweringWhileLibmosquittosThreadIsStuck() async throws {
        let peer = try await Spawned.startPeer(
            "/usr/bin/python3", ["-c", Self.blackhole], label: "blackhole broker",
            readyLine: { $0.hasPrefix("port ") })
        let line = try #require(peer.output.first { $0.hasPrefix("port ") })
        let port = try #require(Int(line.dropFirst(5)))
        var options = MQTTClient.Options(
            broker: MQTTBrokerURL(host: "127.0.0.1", port: port, usesTLS: false), clientID: "partition-stop-test")
        options.stopTimeout = .seconds(7)
        // After the first retry, the thread left behind waits long between attempts.
        options.reconnectDelay = 1...3600
        let connectClock = ManualClock()
        let client = try MQTTClient(
            options: options, logger: Logger(label: "mqtt-test"), clock: ManualClock(), connectClock: connectClock)
        try await client.start()
        try #require(await peer.waitForLine { $0 == "dropped" } != nil, "\(peer.report)")
        // libmosquitto's reconnect now blocks in connect() for as long as the kernel retries the
        // SYN (net.ipv4.tcp_syn_retries: 6 here, about 127 s), well past this test's end.
        try #require(await peer.waitForLine { $0 == "syn-sent" } != nil, "reconnecting: \(peer.report)")

        let stopping = Task { await client.stop() }
        try await eventually("stop waits on the clock") { connectClock.requestedSleeps.contains(.seconds(7)) }
        // The stop's join blocks a thread of its own: the client still answers meanwhile.
        #expect(await client.waiting == 0)
        #expect(await client.isConnected == false)
        connectClock.advance(by: .seconds(7) - .milliseconds(1))
        #expect(connectClock.sleeperCount == 1, "still waiting for libmosquitto's thread")
        connectClock.advance(by: .milliseconds(1))
        await stopping.value
        #expect(connectClock.sleeperCount == 0)
        #expect(peer.isRunning, "the port stays held for the thread left behind")
    }
}
