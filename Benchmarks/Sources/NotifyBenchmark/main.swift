// Notification benchmark: emit on the bus → decoded measurement delivered by the BlueZ adapter.
//
// Three roles in one binary:
// - `--producer ADDRESS --straps N`: owns org.bluez on the bus and imitates enough of BlueZ for
//   hrbridge, bleak and a libdbus client alike (adapter with Roles, devices with typed advertising
//   properties, RSSI changes while discovering, Connect → Connected + ServicesResolved, GATT
//   service and characteristic, StartNotify). Commands on stdin: `burst FRAMES_PER_STRAP RATE_HZ`
//   (RATE_HZ 0 = as fast as it can) answers `done sent=N seconds=S`. The Python peers top out
//   near 20k/s, hence this producer.
// - no role: a self-contained run: a private dbus-daemon, a producer, and `NotifyConsumer` (the
//   hrbridge participant, a separate executable so that it links only what a library client links).
//
// Each 0x2A37 frame carries its emit time (CLOCK_BOOTTIME, shared by all processes) in four RR
// fields, so latency is measured per frame by every participant the same way.
import DBus
import Foundation
import GATT
import Logging

#if canImport(Glibc)
    import Glibc
#endif

func nowNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_BOOTTIME, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

let logger = Logger(label: "bench")
let heartRateUUID = GATTService.heartRate.uuid.description
let measurementUUID = GATTCharacteristic.heartRateMeasurement.uuid.description

/// The fourth address byte (`--page`): gateways of one benchmark each imitate their own straps.
nonisolated(unsafe) var addressPage = 0
func address(ofStrap index: Int) -> String {
    String(format: "C0:FF:EE:%02X:%02X:%02X", addressPage, index >> 8, index & 0xFF)
}
func devicePath(ofStrap index: Int, adapter: Int = 0) -> String {
    "/org/bluez/hci\(adapter)/dev_" + address(ofStrap: index).replacingOccurrences(of: ":", with: "_")
}

// MARK: Producer

/// The imitated object tree: path → interface → properties.
final class FakeBlueZ: @unchecked Sendable {
    private let lock = NSLock()
    private var objects: [String: [String: [(String, DBusValue)]]] = [:]
    let bus: DBusConnection
    let straps: Int
    /// Adapters hci0…: every strap is heard by each, best by its home adapter (index % adapters).
    let adapters: Int
    /// Links each adapter's controller holds (0: no limit); one more Connect is refused.
    let linkLimit: Int
    /// The adapter each connected strap is linked through.
    private var linkedThrough: [Int: Int] = [:]

    init(bus: DBusConnection, straps: Int, adapters: Int = 1, linkLimit: Int = 0) {
        self.bus = bus
        self.straps = straps
        self.adapters = max(1, adapters)
        self.linkLimit = linkLimit
        for adapter in 0..<self.adapters { addAdapter(adapter) }
    }

    private func addAdapter(_ adapter: Int) {
        let adapterPath = "/org/bluez/hci\(adapter)"
        objects[adapterPath] = [
            "org.bluez.Adapter1": [
                ("Address", .string(String(format: "00:00:00:00:00:%02X", adapter + 1))),
                ("AddressType", .string("public")),
                ("Name", .string("bench")), ("Alias", .string("bench")), ("Powered", .boolean(true)),
                ("Discoverable", .boolean(false)), ("Pairable", .boolean(true)), ("Discovering", .boolean(false)),
                ("UUIDs", .array(elementSignature: "s", [])),
                ("Roles", .array(elementSignature: "s", [.string("central"), .string("peripheral")])),
            ]
        ]
        for index in 1...straps {
            let device = devicePath(ofStrap: index, adapter: adapter)
            let service = device + "/service0010"
            let rssi: Int16 = index % adapters == adapter ? -45 : -70 - Int16(adapter)
            // Bonded, as a gym's straps are once paired: a class signs straps in only through a bonded link.
            objects[device] = [
                "org.bluez.Device1": [
                    ("Address", .string(address(ofStrap: index))), ("AddressType", .string("random")),
                    ("Name", .string("Bench Strap \(index)")), ("Alias", .string("Bench Strap \(index)")),
                    ("Adapter", .objectPath(adapterPath)), ("Paired", .boolean(true)),
                    ("Bonded", .boolean(true)), ("Trusted", .boolean(false)), ("Blocked", .boolean(false)),
                    ("LegacyPairing", .boolean(false)), ("Connected", .boolean(false)),
                    ("ServicesResolved", .boolean(false)), ("RSSI", .int16(rssi)),
                    ("UUIDs", .array(elementSignature: "s", [.string(heartRateUUID)])),
                    ("ManufacturerData", .dictionary(keySignature: "q", valueSignature: "v", [])),
                    ("ServiceData", .dictionary(keySignature: "s", valueSignature: "v", [])),
                ]
            ]
            objects[service] = [
                "org.bluez.GattService1": [
                    ("UUID", .string(heartRateUUID)), ("Primary", .boolean(true)), ("Device", .objectPath(device)),
                    ("Includes", .array(elementSignature: "o", [])),
                ]
            ]
            objects[service + "/char0011"] = [
                "org.bluez.GattCharacteristic1": [
                    ("UUID", .string(measurementUUID)), ("Service", .objectPath(service)), ("Value", .bytes([])),
                    ("Notifying", .boolean(false)), ("Flags", .array(elementSignature: "s", [.string("notify")])),
                    ("MTU", .uint16(23)),
                ]
            ]
        }
    }

    var managedObjects: DBusValue {
        lock.lock()
        defer { lock.unlock() }
        return .dictionary(
            keySignature: "o", valueSignature: "a{sa{sv}}",
            objects.map { path, interfaces in
                DBusDictionaryEntry(
                    key: .objectPath(path),
                    value: .dictionary(
                        keySignature: "s", valueSignature: "a{sv}",
                        interfaces.map { DBusDictionaryEntry(key: .string($0.key), value: .propertyMap($0.value)) }))
            })
    }

    func properties(_ path: String, _ interface: String) -> [(String, DBusValue)] {
        lock.lock()
        defer { lock.unlock() }
        return objects[path]?[interface] ?? []
    }

    /// Sets properties and emits PropertiesChanged, as bluetoothd does.
    func set(_ path: String, _ interface: String, _ changes: [(String, DBusValue)]) {
        lock.lock()
        var current = objects[path]?[interface] ?? []
        for (name, value) in changes {
            if let index = current.firstIndex(where: { $0.0 == name }) {
                current[index].1 = value
            } else {
                current.append((name, value))
            }
        }
        objects[path]?[interface] = current
        lock.unlock()
        try? bus.emitSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string(interface), .propertyMap(changes), .array(elementSignature: "s", [])])
    }

    func export() throws {
        try bus.export(path: "/") { [self] call in
            call.member == "GetManagedObjects" ? .success([managedObjects]) : .success([])
        }
        try bus.export(path: "/org/bluez") { _ in .success([]) }
        for adapter in 0..<adapters { try exportAdapter(adapter) }
    }

    private func exportAdapter(_ adapter: Int) throws {
        let adapterPath = "/org/bluez/hci\(adapter)"
        try bus.export(path: adapterPath) { [self] call in
            switch call.member {
            case "StartDiscovery":
                set(adapterPath, "org.bluez.Adapter1", [("Discovering", .boolean(true))])
                // Every strap advertises: an RSSI change each, as bluetoothd reports.
                for index in 1...straps {
                    let rssi: Int16 = index % adapters == adapter ? -45 : -70 - Int16(adapter)
                    set(devicePath(ofStrap: index, adapter: adapter), "org.bluez.Device1", [("RSSI", .int16(rssi))])
                }
            case "StopDiscovery":
                set(adapterPath, "org.bluez.Adapter1", [("Discovering", .boolean(false))])
            default: break
            }
            return properties(call)
        }
        for index in 1...straps {
            let device = devicePath(ofStrap: index, adapter: adapter)
            try bus.export(path: device) { [self] call in
                switch call.member {
                case "Connect":
                    guard link(index, through: adapter) else {
                        return .failure(
                            DBusError(
                                name: "org.bluez.Error.Failed", message: "le-connection-concurrent-connection-limit"))
                    }
                    set(device, "org.bluez.Device1", [("Connected", .boolean(true))])
                    set(device, "org.bluez.Device1", [("ServicesResolved", .boolean(true))])
                case "Disconnect":
                    unlink(index)
                    set(device, "org.bluez.Device1", [("ServicesResolved", .boolean(false))])
                    set(device, "org.bluez.Device1", [("Connected", .boolean(false))])
                default: break
                }
                return properties(call)
            }
            try bus.export(path: device + "/service0010") { [self] call in properties(call) }
            let characteristic = device + "/service0010/char0011"
            try bus.export(path: characteristic) { [self] call in
                switch call.member {
                case "StartNotify":
                    set(characteristic, "org.bluez.GattCharacteristic1", [("Notifying", .boolean(true))])
                case "StopNotify":
                    set(characteristic, "org.bluez.GattCharacteristic1", [("Notifying", .boolean(false))])
                default: break
                }
                return properties(call)
            }
        }
    }

    /// Takes a link slot on `adapter` for strap `index`; false when the controller is full.
    private func link(_ index: Int, through adapter: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if linkedThrough[index] == adapter { return true }
        if linkLimit > 0, linkedThrough.values.filter({ $0 == adapter }).count >= linkLimit { return false }
        linkedThrough[index] = adapter
        return true
    }

    /// Whether strap `index` holds a link.
    func isLinked(_ index: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return linkedThrough[index] != nil
    }

    private func unlink(_ index: Int) {
        lock.lock()
        linkedThrough[index] = nil
        lock.unlock()
    }

    /// The characteristic a strap notifies on: under the adapter it is linked through.
    func characteristicPath(ofStrap index: Int) -> String {
        lock.lock()
        let adapter = linkedThrough[index] ?? index % adapters
        lock.unlock()
        return devicePath(ofStrap: index, adapter: adapter) + "/service0010/char0011"
    }

    /// Answers org.freedesktop.DBus.Properties Get/GetAll; other methods succeed with no reply values.
    private func properties(_ call: DBusMethodCall) -> DBusMethodReply {
        guard call.interface == "org.freedesktop.DBus.Properties", let interface = call.arguments.first?.string
        else { return .success([]) }
        let values = properties(call.path, interface)
        if call.member == "GetAll" { return .success([.propertyMap(values)]) }
        if call.member == "Get", call.arguments.count > 1, let name = call.arguments[1].string,
            let value = values.first(where: { $0.0 == name })?.1
        {
            return .success([.variant(value)])
        }
        return .success([])
    }

    /// Emits `perStrap` frames from every strap at `rate` Hz each (0: as fast as possible),
    /// staggered evenly across straps.
    func burst(perStrap: Int, rate: Double) throws -> (sent: Int, seconds: Double) {
        let total = perStrap * straps
        let spacing = rate > 0 ? 1e9 / rate / Double(straps) : 0
        let start = nowNanoseconds()
        let characteristics = (1...straps).map { characteristicPath(ofStrap: $0) }
        for sequence in 0..<total {
            if spacing > 0 {
                let due = start + UInt64(Double(sequence) * spacing)
                let now = nowNanoseconds()
                if due > now { usleep(UInt32((due - now) / 1000)) }
            }
            let stamp = nowNanoseconds()
            // A heart rate a heart beats at (60–179 bpm, one step a round): one outside 20–300
            // becomes no sample, and a recording daemon would be spared the builders' work.
            let heartRate = 60 + (sequence / straps) % 120
            var frame: [UInt8] = [
                0x11, UInt8(truncatingIfNeeded: heartRate), UInt8(truncatingIfNeeded: heartRate >> 8),
            ]
            for shift in stride(from: 0, to: 64, by: 8) {
                frame.append(UInt8(truncatingIfNeeded: stamp >> UInt64(shift)))
            }
            try bus.emitSignal(
                path: characteristics[sequence % straps], interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged",
                arguments: [
                    .string("org.bluez.GattCharacteristic1"), .propertyMap([("Value", .bytes(frame))]),
                    .array(elementSignature: "s", []),
                ])
        }
        return (total, Double(nowNanoseconds() - start) / 1e9)
    }
}

extension FakeBlueZ {
    /// A class beyond the link slots: for `seconds`, every linked strap notifies at 4 Hz (its emit
    /// time in the RR fields, as ``burst(perStrap:rate:)``) and every other strap broadcasts Polar
    /// manufacturer data at 1 Hz, heart rate `40 + second` (so each broadcast is told apart). Returns
    /// each broadcast's address, heart rate and emit time (CLOCK_BOOTTIME), for the latency.
    func classRun(seconds: Int) throws -> (frames: Int, broadcasts: [(String, Int, UInt64)]) {
        let linked = (1...straps).filter(isLinked)
        let waiting = (1...straps).filter { !isLinked($0) }
        var schedule: [(due: Double, strap: Int, round: Int, broadcast: Bool)] = []
        for (position, strap) in linked.enumerated() {
            for round in 0..<(4 * seconds) {
                schedule.append((Double(round) / 4 + Double(position) / Double(4 * linked.count), strap, round, false))
            }
        }
        for (position, strap) in waiting.enumerated() {
            for round in 0..<seconds {
                schedule.append((Double(round) + Double(position) / Double(waiting.count), strap, round, true))
            }
        }
        schedule.sort { $0.due < $1.due }
        let start = nowNanoseconds()
        var broadcasts: [(String, Int, UInt64)] = []
        for event in schedule {
            let due = start + UInt64(event.due * 1e9)
            let now = nowNanoseconds()
            if due > now { usleep(UInt32((due - now) / 1000)) }
            let stamp = nowNanoseconds()
            if event.broadcast {
                let rate = UInt8(40 + event.round % 200)
                let flags = UInt8(0x22 | (event.round % 8) << 2)
                set(
                    devicePath(ofStrap: event.strap, adapter: event.strap % adapters), "org.bluez.Device1",
                    [
                        (
                            "ManufacturerData",
                            .dictionary(
                                keySignature: "q", valueSignature: "v",
                                [
                                    DBusDictionaryEntry(
                                        key: .uint16(0x006B), value: .variant(.bytes([flags, 0, rate, rate])))
                                ])
                        )
                    ])
                broadcasts.append((address(ofStrap: event.strap), Int(rate), stamp))
                continue
            }
            var frame: [UInt8] = [0x11, UInt8(60 + event.round % 120), 0]
            for shift in stride(from: 0, to: 64, by: 8) {
                frame.append(UInt8(truncatingIfNeeded: stamp >> UInt64(shift)))
            }
            try bus.emitSignal(
                path: characteristicPath(ofStrap: event.strap), interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged",
                arguments: [
                    .string("org.bluez.GattCharacteristic1"), .propertyMap([("Value", .bytes(frame))]),
                    .array(elementSignature: "s", []),
                ])
        }
        return (linked.count * 4 * seconds, broadcasts)
    }
}

func runProducer(address: String, straps: Int, adapters: Int, linkLimit: Int) async throws {
    let bus = try await DBusConnection.connect(bus: .address(address), logger: logger)
    let bluez = FakeBlueZ(bus: bus, straps: straps, adapters: adapters, linkLimit: linkLimit)
    try bluez.export()
    try await bus.requestName("org.bluez")
    print("ready")
    fflush(nil)
    // Commands arrive on stdin; reading blocks, so it runs off the cooperative pool.
    let commands = AsyncStream<String> { continuation in
        Thread.detachNewThread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
    }
    for await command in commands {
        let words = command.split(separator: " ")
        if words.first == "class", words.count == 2, let seconds = Int(words[1]) {
            let (frames, broadcasts) = try bluez.classRun(seconds: seconds)
            for (strap, rate, stamp) in broadcasts { print("broadcast \(strap) \(rate) \(stamp)") }
            print("done frames=\(frames) broadcasts=\(broadcasts.count)")
            fflush(nil)
            continue
        }
        guard words.first == "burst", words.count == 3, let perStrap = Int(words[1]), let rate = Double(words[2])
        else { continue }
        let (sent, seconds) = try bluez.burst(perStrap: perStrap, rate: rate)
        print("done sent=\(sent) seconds=\(String(format: "%.3f", seconds))")
        fflush(nil)
    }
    await bus.close()
}

// MARK: Consumer (hrbridge)

/// When the last frame arrived (boot-time nanoseconds), shared with the watchdog.
// MARK: Self-contained run

enum BenchmarkError: Error { case consumerNotReady }

/// Lines from a pipe, read as they come.
struct LineReader {
    let handle: FileHandle
    var pending = ""
    init(_ handle: FileHandle) { self.handle = handle }

    mutating func next() -> String? {
        while true {
            if let newline = pending.firstIndex(of: "\n") {
                defer { pending = String(pending[pending.index(after: newline)...]) }
                return String(pending[..<newline])
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            pending += String(decoding: chunk, as: UTF8.self)
        }
    }
}

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

func runSelfContained(count: Int, rate: Double) async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let daemon = try startDaemon(directory: directory)
    defer {
        // SIGKILL: the daemon inherits this process's blocked signals (SIGTERM among them), and it
        // is a throwaway private bus.
        kill(daemon.pid, SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
    let producer = Process()
    producer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    producer.arguments = ["--producer", daemon.address, "--straps", "1"]
    let producerInput = Pipe()
    let producerOutput = Pipe()
    producer.standardInput = producerInput
    producer.standardOutput = producerOutput
    try producer.run()
    _ = producerOutput.fileHandleForReading.availableData
    // The consumer is its own process, as a client of the library is: CPU and RSS are its own.
    let consumer = Process()
    consumer.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("NotifyConsumer")
    consumer.arguments = ["--bus", daemon.address, "--straps", "1", "--expect", String(count)]
    let consumerOutput = Pipe()
    consumer.standardOutput = consumerOutput
    try consumer.run()
    var lines = LineReader(consumerOutput.fileHandleForReading)
    guard lines.next() == "ready" else { throw BenchmarkError.consumerNotReady }
    let wallBefore = nowNanoseconds()
    producerInput.fileHandleForWriting.write(Data("burst \(count) \(rate)\n".utf8))
    guard let resultLine = lines.next(),
        let result = try JSONSerialization.jsonObject(with: Data(resultLine.utf8)) as? [String: Any]
    else { throw BenchmarkError.consumerNotReady }
    consumer.waitUntilExit()
    let wall = Double(nowNanoseconds() - wallBefore) / 1e9
    let received = result["received"] as? Int ?? 0
    func figure(_ key: String, _ format: String = "%.0f") -> String {
        String(format: format, result[key] as? Double ?? 0)
    }
    let pace = rate > 0 ? String(Int(rate)) + "/s" : "unpaced"
    let throughput = String(format: "%.0f", Double(received) / wall)
    let peak = result["peak_rss_kb"] as? Int ?? 0
    var line = "notifications=\(received) rate=\(pace) p50_us=\(figure("p50_us")) p99_us=\(figure("p99_us")) "
    line += "max_us=\(figure("max_us")) cpu_us_per_notification=\(figure("cpu_us_per_notification", "%.1f")) "
    line += "throughput_per_s=\(throughput) peak_rss_kb=\(peak)"
    print(line)
    producerInput.fileHandleForWriting.closeFile()
    producer.terminate()
}

// MARK: Main

var arguments = CommandLine.arguments.dropFirst().makeIterator()
var producerAddress: String?
var straps = 1
var adapters = 1
var linkLimit = 0
var count = 20_000
var rate = 2_000.0
var expected = 0
while let argument = arguments.next() {
    switch argument {
    case "--producer": producerAddress = arguments.next()
    case "--straps": straps = max(1, Int(arguments.next() ?? "") ?? straps)
    case "--adapters": adapters = max(1, Int(arguments.next() ?? "") ?? adapters)
    case "--link-limit": linkLimit = max(0, Int(arguments.next() ?? "") ?? linkLimit)
    case "--page": addressPage = min(255, max(0, Int(arguments.next() ?? "") ?? 0))
    case "--expect": expected = Int(arguments.next() ?? "") ?? expected
    case "--count": count = Int(arguments.next() ?? "") ?? count
    case "--rate": rate = Double(arguments.next() ?? "") ?? rate
    default:
        print(
            """
            usage: NotifyBenchmark [--count N] [--rate PER_SECOND (0 = unpaced)]
                   NotifyBenchmark --producer BUS_ADDRESS [--straps N] [--adapters N] [--link-limit N]
            """)
        exit(64)
    }
}
if let producerAddress {
    try await runProducer(address: producerAddress, straps: straps, adapters: adapters, linkLimit: linkLimit)
} else {
    try await runSelfContained(count: count, rate: rate)
}
