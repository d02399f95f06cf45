// Notification benchmark: emit on the bus → decoded measurement delivered by the BlueZ adapter.
//
// The process starts a private dbus-daemon and a producer (this binary with --producer), which
// owns org.bluez and imitates just enough of BlueZ (object tree, Connect, StartNotify) to notify
// as fast as needed: the Python peers top out near 20k/s. Each frame carries its emit time
// (CLOCK_BOOTTIME, shared by both processes) in four RR fields, so latency is measured per frame.
// CPU per notification is this process's user+system time while receiving, divided by the count.
import BlueZ
import DBus
import Foundation
import GATT
import Logging
import Sensors

#if canImport(Glibc)
    import Glibc
#endif

func nowNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_BOOTTIME, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

let logger = Logger(label: "bench")
let devicePath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
let characteristicPath = devicePath + "/service0010/char0011"

// MARK: Producer

func runProducer(address: String, count: Int, rate: Double) async throws {
    let bus = try DBusConnection(bus: .address(address), logger: logger)
    let subscribed = AsyncStream<Void>.makeStream()
    try bus.export(path: "/") { call in
        guard call.member == "GetManagedObjects" else { return .success([]) }
        return .success([
            .dictionary(
                keySignature: "o", valueSignature: "a{sa{sv}}",
                entries: [
                    DBusDictionaryEntry(
                        key: .objectPath("/org/bluez/hci0"),
                        value: .dictionary(
                            keySignature: "s", valueSignature: "a{sv}",
                            entries: [
                                DBusDictionaryEntry(
                                    key: .string("org.bluez.Adapter1"),
                                    value: .propertyMap([
                                        ("Address", .string("00:00:00:00:00:01")), ("Powered", .boolean(true)),
                                    ]))
                            ])),
                    DBusDictionaryEntry(
                        key: .objectPath(devicePath),
                        value: .dictionary(
                            keySignature: "s", valueSignature: "a{sv}",
                            entries: [
                                DBusDictionaryEntry(
                                    key: .string("org.bluez.Device1"),
                                    value: .propertyMap([
                                        ("Address", .string("C0:FF:EE:00:00:01")), ("Name", .string("Bench Strap")),
                                        (
                                            "UUIDs",
                                            .array(
                                                elementSignature: "s", [.string(GATTService.heartRate.uuid.description)]
                                            )
                                        ),
                                        ("Connected", .boolean(false)), ("ServicesResolved", .boolean(false)),
                                    ]))
                            ])),
                    DBusDictionaryEntry(
                        key: .objectPath(characteristicPath),
                        value: .dictionary(
                            keySignature: "s", valueSignature: "a{sv}",
                            entries: [
                                DBusDictionaryEntry(
                                    key: .string("org.bluez.GattCharacteristic1"),
                                    value: .propertyMap([
                                        ("UUID", .string(GATTCharacteristic.heartRateMeasurement.uuid.description)),
                                        ("Flags", .array(elementSignature: "s", [.string("notify")])),
                                    ]))
                            ])),
                ])
        ])
    }
    try bus.export(path: "/org/bluez") { _ in .success([]) }
    try bus.export(path: devicePath) { call in
        if call.member == "Connect" {
            try? bus.emitSignal(
                path: devicePath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arguments: [
                    .string("org.bluez.Device1"),
                    .propertyMap([("Connected", .boolean(true)), ("ServicesResolved", .boolean(true))]),
                    .array(elementSignature: "s", []),
                ])
        }
        return .success([])
    }
    try bus.export(path: characteristicPath) { call in
        if call.member == "StartNotify" { subscribed.continuation.yield() }
        return .success([])
    }
    try await bus.requestName("org.bluez")
    print("ready")
    fflush(nil)
    for await _ in subscribed.stream { break }
    let interval = rate > 0 ? 1.0 / rate : 0
    let start = nowNanoseconds()
    for sequence in 0..<count {
        if interval > 0 {
            let due = start + UInt64(Double(sequence) * interval * 1e9)
            while nowNanoseconds() < due {}
        }
        let stamp = nowNanoseconds()
        var frame: [UInt8] = [0x11, UInt8(truncatingIfNeeded: sequence), UInt8(truncatingIfNeeded: sequence >> 8)]
        for shift in stride(from: 0, to: 64, by: 16) {
            frame.append(UInt8(truncatingIfNeeded: stamp >> UInt64(shift)))
            frame.append(UInt8(truncatingIfNeeded: stamp >> UInt64(shift + 8)))
        }
        try bus.emitSignal(
            path: characteristicPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [
                .string("org.bluez.GattCharacteristic1"), .propertyMap([("Value", .bytes(frame))]),
                .array(elementSignature: "s", []),
            ])
    }
    try await Task.sleep(for: .seconds(2))
    await bus.close()
}

// MARK: Consumer

func startDaemon(directory: URL) throws -> (address: String, pid: Int32) {
    let config = directory.appendingPathComponent("bus.conf")
    try Data(
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig><type>system</type><listen>unix:path=\(directory.path)/bus</listen><auth>EXTERNAL</auth>
        <policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/>
        <allow send_type="signal"/><allow send_type="method_return"/><allow send_type="error"/>
        <allow receive_type="method_call"/><allow receive_type="signal"/><allow receive_type="method_return"/>
        <allow receive_type="error"/></policy>
        <limit name="max_incoming_bytes">1000000000</limit><limit name="max_outgoing_bytes">1000000000</limit>
        </busconfig>
        """.utf8
    ).write(to: config)
    let launcher = Process()
    launcher.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
    launcher.arguments = ["--config-file=\(config.path)", "--fork", "--print-address=1", "--print-pid=1"]
    let output = Pipe()
    launcher.standardOutput = output
    launcher.standardError = FileHandle.nullDevice
    try launcher.run()
    var text = ""
    while text.split(separator: "\n").count < 2 {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        text += String(decoding: chunk, as: UTF8.self)
    }
    let lines = text.split(separator: "\n").map(String.init)
    return (lines[0], Int32(lines[1]) ?? 0)
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

func measure(count: Int, rate: Double, acquire: Bool) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let daemon = try startDaemon(directory: directory)
    defer {
        kill(daemon.pid, SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }
    let producer = Process()
    producer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    producer.arguments = ["--producer", daemon.address, "--count", String(count), "--rate", String(rate)]
    let producerOutput = Pipe()
    producer.standardOutput = producerOutput
    try producer.run()
    _ = producerOutput.fileHandleForReading.availableData
    let connection = try DBusConnection(bus: .address(daemon.address), logger: logger)
    var options = BlueZAdapter.Options()
    options.reconnects = false
    let adapter = try await BlueZAdapter.open(connection: connection, options: options, logger: logger)
    let events = adapter.events()
    var latencies: [Double] = []
    latencies.reserveCapacity(count)
    let sensor = SensorIdentity(adapter: "hci0", address: "C0:FF:EE:00:00:01")
    let cpuBefore = cpuSeconds()
    let wallBefore = nowNanoseconds()
    let receiver = Task { () -> [Double] in
        var latencies: [Double] = []
        for await event in events {
            guard case .measurement(let measurement) = event,
                case .heartRateMeasurement(let frame) = measurement.value, frame.rrIntervals.count == 4
            else { continue }
            let arrived = nowNanoseconds()
            var stamp: UInt64 = 0
            for (index, interval) in frame.rrIntervals.enumerated() {
                stamp |= UInt64(interval.raw) << UInt64(16 * index)
            }
            latencies.append(Double(arrived &- stamp) / 1000)
            if latencies.count == count { break }
        }
        return latencies
    }
    try await adapter.connect(sensor)
    latencies = await receiver.value
    let cpu = cpuSeconds() - cpuBefore
    let wall = Double(nowNanoseconds() - wallBefore) / 1e9
    latencies.sort()
    print(
        "notifications=\(latencies.count) rate=\(rate > 0 ? String(Int(rate)) + "/s" : "unpaced") "
            + "p50_us=\(String(format: "%.0f", percentile(latencies, 0.5))) "
            + "p99_us=\(String(format: "%.0f", percentile(latencies, 0.99))) "
            + "max_us=\(String(format: "%.0f", latencies.last ?? 0)) "
            + "cpu_us_per_notification=\(String(format: "%.1f", cpu / Double(max(latencies.count, 1)) * 1e6)) "
            + "throughput_per_s=\(String(format: "%.0f", Double(latencies.count) / wall))")
    await adapter.shutdown()
    await connection.close()
    producer.terminate()
}

// MARK: Main

var arguments = CommandLine.arguments.dropFirst().makeIterator()
var producerAddress: String?
var count = 20_000
var rate = 2_000.0
while let argument = arguments.next() {
    switch argument {
    case "--producer": producerAddress = arguments.next()
    case "--count": count = Int(arguments.next() ?? "") ?? count
    case "--rate": rate = Double(arguments.next() ?? "") ?? rate
    default:
        print("usage: NotifyBenchmark [--count N] [--rate PER_SECOND (0 = unpaced)]")
        exit(64)
    }
}
if let producerAddress {
    try await runProducer(address: producerAddress, count: count, rate: rate)
} else {
    try await measure(count: count, rate: rate, acquire: false)
}
