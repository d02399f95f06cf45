import BridgeOut
import BusHarness
import Foundation
import GATT
import Logging
import Sensors
import Testing

private typealias OSCValue = PythonOSCServer.OSCValue

/// hrbridge's OSC through the real UDP sender to a third-party receiver (python-osc) on
/// loopback: names, types and values arrive in order, beat pulses go out at the beats' own times
/// from RR (on the injected clock, so a loaded machine cannot blur them; the wall-clock accuracy
/// is a benchmark's, Benchmarks/README.md), and the drop sequence ends it.
@Suite(.timeLimit(.minutes(3))) struct OSCPythonPeerTests {
    static let beat = "/avatar/parameters/isHRBeat"
    static let toggle = "/avatar/parameters/HeartBeatToggle"

    /// The float values received at `address`.
    static func floats(_ messages: [PythonOSCServer.Received], _ address: String) -> [Double] {
        messages.compactMap { message in
            guard message.address == address, case .float(let value) = message.values.first else { return nil }
            return value
        }
    }

    @Test func ironHeartOverUDPToPythonOSC() async throws {
        let server = try await PythonOSCServer()
        defer { server.stop() }
        let sender = try OSCSender(
            target: OSCTarget(host: "127.0.0.1", port: server.port), logger: Logger(label: "osc-peer-test"))
        let clock = ManualWallClock()
        let transport = ClockedTransport(clock: clock, next: sender)
        // Frames are dated in the recent past and beats played 5 s after their own time, so every
        // beat is still ahead when the facts are in: the runner's clock alone decides when it goes.
        let delay = 5.0
        let configuration = OSCFeed.Configuration(
            preset: .ironHeart, beatPulse: .milliseconds(100), beatDelay: .seconds(delay),
            chatbox: OSCChatbox(format: "❤ {hr} bpm", every: .seconds(5)))
        let (facts, continuation) = AsyncStream.makeStream(of: OSCFact.self)
        let output = OSCOutput(
            configuration: configuration, facts: facts, clock: clock, transport: transport,
            logger: Logger(label: "osc-peer-test"))
        let running = Task { await output.run() }

        let frames: [(bpm: Int, rr: [UInt16])] = [(75, [800, 830]), (76, [790, 810]), (77, [780])]
        let after = frames.dropFirst().flatMap(\.rr).reduce(0.0) { $0 + Double($1) / 1024 }
        let first = clock.now().addingTimeInterval(-after - 0.1)
        var receipt = first
        continuation.yield(.battery(percent: 90, at: first))
        for (index, frame) in frames.enumerated() {
            if index > 0 { receipt = receipt.addingTimeInterval(frame.rr.reduce(0.0) { $0 + Double($1) / 1024 }) }
            continuation.yield(
                .reading(
                    OSCReading(
                        heartRate: frame.bpm, rrIntervals: frame.rr.map(RRInterval.init(raw:)), contact: .detected,
                        receivedAt: receipt)))
        }
        let series = frames.flatMap(\.rr)
        // Each beat's own time: a frame's last beat at its receipt, earlier ones before it.
        var beats: [Date] = []
        receipt = first
        for (index, frame) in frames.enumerated() {
            if index > 0 { receipt = receipt.addingTimeInterval(frame.rr.reduce(0.0) { $0 + Double($1) / 1024 }) }
            var time = receipt
            var times: [Date] = []
            for interval in frame.rr.reversed() {
                times.insert(time, at: 0)
                time = time.addingTimeInterval(-Double(interval) / 1024)
            }
            beats += times
        }
        // The clock moves to each rise and fall in turn; each must go out exactly then.
        let steps = beats.flatMap { [$0.addingTimeInterval(delay), $0.addingTimeInterval(delay + 0.1)] }.sorted()
        for step in steps {
            try await eventually("the runner to sleep on the clock") { clock.sleeperCount == 1 }
            clock.advance(to: step)
        }

        // Every beat's pulse has fallen.
        try await server.waitUntil("\(series.count) beat pulses") { messages in
            messages.filter { $0.address == Self.beat && $0.values == [.bool(false)] }.count == series.count
        }
        let messages = server.messages

        // Values: iron-heart's names with their OSC types, as python-osc decodes them.
        let typesByAddress = Dictionary(messages.map { ($0.address, $0.tags) }, uniquingKeysWith: { $1 })
        #expect(typesByAddress["/avatar/parameters/HR"] == ",i")
        #expect(typesByAddress["/avatar/parameters/floatHR"] == ",f")
        #expect(typesByAddress["/avatar/parameters/RRInterval"] == ",i")
        #expect(typesByAddress["/avatar/parameters/HRBattery"] == ",i")
        #expect(typesByAddress["/avatar/parameters/HRBatteryFloat"] == ",f")
        #expect(typesByAddress["/avatar/parameters/isHRConnected"] == ",T")
        #expect(typesByAddress["/chatbox/input"] == ",sTF")
        // The battery came first (no reading yet: 0), then each reading's value, resent between them.
        var heartRates: [OSCValue] = []
        for message in messages where message.address == "/avatar/parameters/HR" {
            if heartRates.last != message.values.first, let value = message.values.first { heartRates.append(value) }
        }
        #expect(heartRates == [.int(0), .int(75), .int(76), .int(77)])
        let lastRR = messages.last { $0.address == "/avatar/parameters/RRInterval" }
        #expect(lastRR?.values == [.int(762)], "780/1024 s in ms")
        #expect(messages.contains { $0.address == "/avatar/parameters/HRBattery" && $0.values == [.int(90)] })
        #expect(Self.floats(messages, "/avatar/parameters/HRBatteryFloat").contains { abs($0 - 0.9) < 1e-6 })
        #expect(Self.floats(messages, "/avatar/parameters/floatHR").contains { abs($0 - (75.0 / 255 * 2 - 1)) < 1e-6 })
        #expect(
            messages.first { $0.address == "/chatbox/input" }?.values == [
                .string("❤ 75 bpm"), .bool(true), .bool(false),
            ])

        // Beats: each rise at its beat's own time (plus the delay), each pulse 100 ms, on the clock;
        // python-osc got them in that order.
        let rises = transport.times { $0.address == Self.beat && $0.arguments == [.bool(true)] }
        let falls = transport.times { $0.address == Self.beat && $0.arguments == [.bool(false)] }
        #expect(rises.count == series.count)
        for (rise, beat) in zip(rises, beats) {
            #expect(
                abs(rise.timeIntervalSince(beat) - delay) < 0.001,
                "a rise \(rise.timeIntervalSince(beat)) s after its beat")
        }
        for (rise, fall) in zip(rises, falls) {
            #expect(abs(fall.timeIntervalSince(rise) - 0.1) < 0.001, "pulse \(fall.timeIntervalSince(rise)) s")
        }
        let beatsAtPython = messages.filter { $0.address == Self.beat }.map(\.values)
        #expect(
            beatsAtPython
                == Array(repeating: [[OSCValue.bool(true)], [.bool(false)]], count: series.count).flatMap { $0 })
        let toggles = messages.filter { $0.address == Self.toggle }.map(\.values)
        #expect(toggles == [[.bool(true)], [.bool(false)], [.bool(true)], [.bool(false)], [.bool(true)]])

        // The drop: connected false, heart rate 0, and no beat after it.
        let countBeforeDrop = server.messages.count
        continuation.yield(.disconnected(at: clock.now()))
        // Each is a datagram of its own: the wait is for all four (a loaded machine delivers them
        // to python-osc one by one, and "connected false" may come first).
        let dropped: [(address: String, values: [OSCValue])] = [
            ("/avatar/parameters/isHRConnected", [.bool(false)]), ("/avatar/parameters/HR", [.int(0)]),
            ("/avatar/parameters/RRInterval", [.int(0)]), ("/avatar/parameters/floatHR", [.float(-1)]),
        ]
        try await server.waitUntil("the drop") { messages in
            let drop = messages.dropFirst(countBeforeDrop)
            return dropped.allSatisfy { expected in
                drop.contains { $0.address == expected.address && $0.values == expected.values }
            }
        }

        continuation.finish()
        await running.value
        let sent = sender.datagramsSent
        try await server.waitUntil("all \(sent) datagrams") { $0.count == sent }
        #expect(
            !server.messages.dropFirst(countBeforeDrop).contains {
                $0.address == Self.beat && $0.values == [.bool(true)]
            })
        #expect(sender.sendErrors == 0)
        #expect(server.refused.isEmpty, "python-osc took every datagram for OSC")
        #expect(await output.sentCount == sent)
    }
}
