// OSC beat timing on the wall clock: the release build's OSC runner (SystemWallClock, the real
// UDP sender) plays beats from an RR series to a UDP socket on loopback; each `isHRBeat` rise's
// receipt time is compared with the beat's own time plus the configured delay.
// Usage: OSCBeatBenchmark [--beats N] [--rr-ms M] [--runs R]
import BridgeOut
import Foundation
import GATT
import Logging
import Sensors

#if canImport(Glibc)
    import Glibc
#endif

func option(_ name: String, _ fallback: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count,
        let value = Int(arguments[index + 1])
    else { return fallback }
    return value
}

let beats = option("--beats", 60)
let rrMilliseconds = option("--rr-ms", 500)
let runs = option("--runs", 3)

/// Receives datagrams and notes when each `isHRBeat` True arrived (Date, wall clock).
final class Receiver: @unchecked Sendable {
    let socket: Int32
    let port: UInt16
    private let lock = NSLock()
    private var rises: [Date] = []

    init() {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    func listen() {
        let socket = self.socket
        let marker = Array("/avatar/parameters/isHRBeat\0".utf8)
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 2048)
            while true {
                let count = recv(socket, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                let now = Date()
                // Address padded to 4 bytes, then the type tags: ",T" is a rise.
                guard count >= 32, Array(buffer[0..<marker.count]) == marker, buffer[28] == 0x2C, buffer[29] == 0x54
                else { continue }
                lock.lock()
                rises.append(now)
                lock.unlock()
            }
        }
    }

    var received: [Date] {
        lock.lock()
        defer { lock.unlock() }
        return rises
    }
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

var logger = Logger(label: "osc-bench")
logger.logLevel = .error
print("beats \(beats), RR \(rrMilliseconds) ms, delay 1 s, pulse 100 ms")
print("run  beats  p50 ms  p99 ms  max ms  (|receipt − (beat + delay)|)")
var medians: [Double] = []
for run in 1...runs {
    let receiver = Receiver()
    receiver.listen()
    let sender = try OSCSender(target: OSCTarget(host: "127.0.0.1", port: receiver.port), logger: logger)
    let configuration = OSCFeed.Configuration(
        preset: .ironHeart, beatPulse: .milliseconds(100), beatDelay: .seconds(1))
    let (facts, input) = AsyncStream.makeStream(of: OSCFact.self)
    let output = OSCOutput(
        configuration: configuration, facts: facts, clock: SystemWallClock(), transport: sender, logger: logger)
    let running = Task { await output.run() }
    // One beat per frame, each frame received at its beat: beat i at start + i × RR.
    let start = Date().addingTimeInterval(0.2)
    let interval = Double(rrMilliseconds) / 1000
    let raw = UInt16((interval * 1024).rounded())
    var expected: [Date] = []
    for index in 0..<beats {
        let beat = start.addingTimeInterval(Double(index) * Double(raw) / 1024)
        expected.append(beat.addingTimeInterval(1))
        // Yielded when it happens, as a strap's frame would be.
        let wait = beat.timeIntervalSinceNow
        if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
        input.yield(
            .reading(
                OSCReading(
                    heartRate: 120, rrIntervals: [RRInterval(raw: raw)], contact: .detected, receivedAt: beat)))
    }
    try await Task.sleep(for: .seconds(1.5))
    input.finish()
    await running.value
    let received = receiver.received
    let errors = zip(received, expected).map { abs($0.timeIntervalSince($1)) * 1000 }
    guard received.count == beats else {
        print("run \(run): \(received.count) of \(beats) rises received")
        continue
    }
    medians.append(percentile(errors, 0.5))
    print(
        String(
            format: "%3d  %5d  %6.2f  %6.2f  %6.2f", run, errors.count, percentile(errors, 0.5),
            percentile(errors, 0.99),
            errors.max() ?? 0))
    // Left open: a closed descriptor number reused by the next run would feed this run's reader thread.
}
if !medians.isEmpty { print(String(format: "median of the runs' p50: %.2f ms", percentile(medians, 0.5))) }
