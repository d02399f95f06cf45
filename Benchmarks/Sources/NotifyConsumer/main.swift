// The hrbridge participant of the notification benchmarks: the real `BlueZAdapter` on a bus,
// decoding every frame, exactly as a client of the library would link it (no Foundation).
//
// `NotifyConsumer --straps N --expect TOTAL [--bus ADDRESS]` (default: DBUS_SYSTEM_BUS_ADDRESS)
// connects straps C0:FF:EE:00:00:01…, prints `ready` once every strap streams, then one JSON
// line: received, expected, p50_us, p99_us, max_us, cpu_us_per_notification, peak_rss_kb.
// Each frame carries its emit time (CLOCK_BOOTTIME) in its four RR fields.
import BlueZ
import DBus
import GATT
import Logging
import Sensors
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

func nowNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_BOOTTIME, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

func resourceUsage() -> (cpuSeconds: Double, peakKilobytes: Int) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let cpu =
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
    return (cpu, peakResidentKilobytes())
}

/// VmHWM from /proc: `ru_maxrss` survives exec and would count the parent's pages at fork.
func peakResidentKilobytes() -> Int {
    guard let status = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(status) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), status) != nil {
        let text = String(cString: line)
        if text.hasPrefix("VmHWM:") {
            return Int(text.dropFirst(6).filter { $0.isNumber }) ?? 0
        }
    }
    return 0
}

/// `C0:FF:EE:00:HH:LL` for strap `index`, as the producer names them.
func address(ofStrap index: Int) -> String {
    func hex(_ byte: Int) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
    return "C0:FF:EE:00:" + hex(index >> 8) + ":" + hex(index & 0xFF)
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

final class LastArrival: Sendable { let value = Mutex<UInt64>(0) }

let logger = Logger(label: "bench")

/// Connects every strap, then collects `expected` frames (or stops after 5 s without one) and
/// returns the result as a JSON object.
func consume(bus: DBusConnection.Bus, straps: Int, expected: Int) async throws -> String {
    let connection = try await DBusConnection.connect(bus: bus, logger: logger)
    var options = BlueZAdapter.Options()
    options.reconnects = false
    let adapter = try await BlueZAdapter.open(connection: connection, options: options, logger: logger)
    let events = adapter.events()
    let sensors = (1...straps).map { SensorIdentity(adapter: "hci0", address: address(ofStrap: $0)) }
    let (readyStream, readyContinuation) = AsyncStream<Void>.makeStream()
    let lastArrival = LastArrival()
    // The receiving task runs on the D-Bus loop thread: a notification is read, decoded and
    // consumed on one thread, without a wake-up in between.
    let receiver = Task(executorPreference: connection.executor) { () -> [Double] in
        var ready = Set<SensorIdentity>()
        var latencies: [Double] = []
        latencies.reserveCapacity(expected)
        for await event in events {
            switch event {
            case .connectionChanged(let sensor, .ready):
                ready.insert(sensor)
                if ready.count == straps { readyContinuation.yield() }
            case .measurement(let measurement):
                guard case .heartRateMeasurement(let frame) = measurement.value, frame.rrIntervals.count == 4 else {
                    continue
                }
                let arrived = nowNanoseconds()
                var stamp: UInt64 = 0
                for (index, interval) in frame.rrIntervals.enumerated() {
                    stamp |= UInt64(interval.raw) << UInt64(16 * index)
                }
                latencies.append(Double(arrived &- stamp) / 1000)
                lastArrival.value.withLock { $0 = arrived }
                if latencies.count == expected { return latencies }
            default: break
            }
        }
        return latencies
    }
    for sensor in sensors { try await adapter.connect(sensor) }
    for await _ in readyStream { break }
    let before = resourceUsage()
    print("ready")
    fflush(nil)
    // Stop after 5 s without a frame once frames flowed (loss), or 180 s without any. The watchdog
    // sleeps until that deadline rather than ticking, so it costs (almost) nothing while frames flow.
    let started = nowNanoseconds()
    let watchdog = Task(executorPreference: connection.executor) {
        while !Task.isCancelled {
            let last = lastArrival.value.withLock { $0 }
            let deadline = last > 0 ? last + 5_000_000_000 : started + 180_000_000_000
            let now = nowNanoseconds()
            if now >= deadline {
                receiver.cancel()
                return
            }
            try? await Task.sleep(for: .nanoseconds(deadline - now))
        }
    }
    var latencies = await receiver.value
    watchdog.cancel()
    let after = resourceUsage()
    receiver.cancel()
    await adapter.shutdown()
    await connection.close()
    latencies.sort()
    let cpu = (after.cpuSeconds - before.cpuSeconds) / Double(max(latencies.count, 1)) * 1e6
    let fields: [(String, String)] = [
        ("cpu_us_per_notification", "\(cpu)"), ("expected", "\(expected)"), ("max_us", "\(latencies.last ?? 0)"),
        ("p50_us", "\(percentile(latencies, 0.5))"), ("p99_us", "\(percentile(latencies, 0.99))"),
        ("participant", "\"hrbridge\""), ("peak_rss_kb", "\(after.peakKilobytes)"),
        ("received", "\(latencies.count)"),
    ]
    return "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
}

var arguments = CommandLine.arguments.dropFirst().makeIterator()
var straps = 1
var expected = 0
var bus = DBusConnection.Bus.system
while let argument = arguments.next() {
    switch argument {
    case "--straps": straps = max(1, Int(arguments.next() ?? "") ?? straps)
    case "--expect": expected = Int(arguments.next() ?? "") ?? expected
    case "--bus": bus = .address(arguments.next() ?? "")
    default:
        print("usage: NotifyConsumer [--straps N] --expect TOTAL [--bus ADDRESS]")
        exit(64)
    }
}
print(try await consume(bus: bus, straps: straps, expected: expected))
