import BridgeOut
import BusHarness
import Logging
import Testing

/// The UDP sender against sockets bound on loopback.
@Suite struct OSCSenderTests {
    static let logger = Logger(label: "osc-sender-test")

    @Test(arguments: [false, true])
    func sendsEachMessageAsOneDatagram(ipv6: Bool) async throws {
        guard let receiver = try? UDPReceiver(ipv6: ipv6) else {
            // No ::1 on this machine (IPv6 disabled): nothing to send to.
            #expect(ipv6, "127.0.0.1 must be there")
            return
        }
        let target = try OSCTarget(parsing: ipv6 ? "[::1]:\(receiver.port)" : "127.0.0.1:\(receiver.port)")
        let sender = try OSCSender(target: target, logger: Self.logger)
        let messages = [
            OSCMessage("/avatar/parameters/HR", [.int32(72)]),
            OSCMessage("/chatbox/input", [.string("❤ 72 bpm"), .bool(true), .bool(false)]),
        ]
        for message in messages { sender.send(message) }
        for message in messages {
            let datagram = await receiver.receive()
            #expect(datagram == message.encoded())
        }
        #expect(sender.datagramsSent == 2)
        #expect(sender.sendErrors == 0)
    }

    @Test func aNameResolves() async throws {
        let receiver = try UDPReceiver()
        let sender = try OSCSender(target: OSCTarget(host: "localhost", port: receiver.port), logger: Self.logger)
        sender.send(OSCMessage("/x", [.int32(1)]))
        #expect(await receiver.receive() == OSCMessage("/x", [.int32(1)]).encoded())
    }

    /// A datagram the kernel refuses (larger than UDP allows) is counted, not thrown, and the
    /// next one goes.
    @Test func aSendErrorIsCountedAndNotFatal() async throws {
        let receiver = try UDPReceiver()
        let sender = try OSCSender(target: OSCTarget(host: "127.0.0.1", port: receiver.port), logger: Self.logger)
        sender.send(OSCMessage("/big", [.string(String(repeating: "x", count: 70_000))]))
        sender.send(OSCMessage("/big", [.string(String(repeating: "x", count: 70_000))]))
        #expect(sender.sendErrors == 2)
        #expect(sender.datagramsSent == 0)
        sender.send(OSCMessage("/after", [.bool(true)]))
        #expect(await receiver.receive() == OSCMessage("/after", [.bool(true)]).encoded())
        #expect(sender.datagramsSent == 1)
        #expect(sender.sendErrors == 2)
    }
}
