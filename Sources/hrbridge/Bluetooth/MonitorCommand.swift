import ArgumentParser
import BlueZ
import BridgeOut
import DBus
import Foundation
import GATT
import JSONSupport
import LabStreaming
import Logging
import Sensors
import Synchronization
import Wire
import WorkoutExport

#if canImport(Glibc)
    import Glibc
#endif

/// `hrbridge monitor`: connect to straps and stream their measurements.
struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Connect to straps and stream their measurements.",
        discussion: """
            Connects to the given addresses, else to every paired or trusted strap with the Heart Rate
            service, else to the first one found (within 30 s), and keeps them connected (a dropped link
            is re-established).

            On a terminal: one line per strap, updated in place (HR, contact, RR, battery, state).
            --json: one object per measurement with the keys time (ISO 8601), sensor (address),
            heartRate, sensorContact, energyExpended and rrIntervals (as in `hrbridge decode`), status
            lines {"event":"connected"|"disconnected"|"reconnecting"|"connectFailed","sensor":…,"adapter":…,
            "time":…} (connectFailed: an attempt failed with no link up, with BlueZ's reason; disconnected:
            a link that was up dropped), refused frames {"event":"frameRefused",…} and broadcasts
            {"event":"broadcastRefused",…}, adapter states {"event":"adapter","adapter":…,
            "state":"ready"|"poweredOff"|"absent"|"serviceStopped"}; the last line is {"event":"stats",…}
            (per strap: frames decoded and refused, refusals by reason — frames and broadcasts alike —,
            connections, disconnections and failed connect attempts by reason, gaps).
            Without bluetoothd or an adapter, monitor says so and waits for them (no polling).
            Ctrl-C (SIGINT) or SIGTERM ends it at any moment, also while it still waits for bluetoothd,
            an adapter or a strap: the stats line, exit status 0. Exit status 69 when no strap is found.

            --ecg and --acc start Polar's raw signals (PMD: an H10's ECG at 130 Hz in µV, acceleration at
            --acc-rate Hz in mG) on every strap that offers them, again after each reconnect, and stop them
            at the end. --json prints each frame as {"kind":"ecg"|"acc","sensor":…,"time":…,"t0":…,
            "interval":…,"rate":…,"continuous":…,"sensorTimestamp":…,"unit":…,"values":[…] (ECG) or
            "x","y","z":[…] (acceleration)}: the first sample's time on the host clock (t0 in Unix seconds),
            the spacing from the strap's own clock, continuous false after a gap; a strap that cannot
            stream says {"event":"waveformFailed",…}. --lsl also publishes every strap's HR, RR, ECG and
            acceleration as Lab Streaming Layer streams (liblsl from --lsl-library, else $HRBRIDGE_LIBLSL
            or the loader's path; docs/lab.md). --edf PREFIX records each strap's raw signals to EDF+ files
            (PREFIX-<address>-ecg.edf, -acc.edf, -ecg-2.edf after a gap: EDF+C, one file per run without a
            gap, one-second records), closed at the end with a line on stderr per file.

            --osc HOST:PORT also sends the first strap's heart rate as OSC for VR avatars (VRChat listens
            on 9000; [v6-address]:port for IPv6), with the parameter names of --osc-preset; at the end the
            avatar is told the strap is gone, and a line on stderr counts the datagrams. Exit status 68
            when the host does not resolve.
            """
    )

    @OptionGroup var bluetooth: BluetoothOptions

    @Argument(help: "Sensor addresses (default: paired or trusted straps, else the first found).")
    var addresses: [String] = []

    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Double?

    @Flag(help: "JSON lines.")
    var json = false

    @Option(name: .customLong("osc"), help: "Also send the first strap's heart rate as OSC to HOST:PORT.")
    var osc: String?

    @Option(
        name: .customLong("osc-preset"),
        help: "OSC parameter names: hrtovrchat (default), hrpresence, iron-heart, vrcosc.")
    var oscPreset = "hrtovrchat"

    @OptionGroup var rawSignals: RawSignalOptions

    @Flag(help: "Also publish HR, RR, HRV, ECG and acceleration as Lab Streaming Layer streams.")
    var lsl = false

    @Option(
        name: .customLong("edf"), help: "Also record raw signals to EDF+ files PREFIX-<address>-ecg.edf and -acc.edf.")
    var edf: String?

    @Option(
        name: .customLong("lsl-library"), help: "liblsl's path (default: $HRBRIDGE_LIBLSL, then the loader's path).")
    var lslLibrary: String?

    func validate() throws {
        try AddressArguments.check(addresses)
        try SecondsOption.check(duration, "--duration")
        _ = try MonitorOSC.settings(target: osc ?? OSCTarget.localVRChat.description, preset: oscPreset)
    }

    /// The raw signals asked for.
    var waveformRequests: [WaveformRequest] { rawSignals.requests }

    func run() async throws {
        let oscOutput = try osc.map {
            try MonitorOSC(
                settings: MonitorOSC.settings(target: $0, preset: oscPreset), logger: bluetooth.settings.logger)
        }
        let statistics = MonitorStatistics()
        let view = MonitorView(json: json)
        let feed: LabStreamingFeed?
        if lsl {
            do {
                let library = try LSLLibrary.load(path: lslLibrary)
                let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "hrbridge"
                feed = LabStreamingFeed(
                    library: library, settings: .init(kinds: [.hr, .rr, .hrv, .ecg, .acc], host: host), now: { Date() },
                    logger: bluetooth.settings.logger)
            } catch {
                StandardError.write("hrbridge: \(error)")
                throw ExitCode(69)
            }
        } else {
            feed = nil
        }
        let requests = waveformRequests
        if let edf {
            // Said before any strap is linked, not after an hour of frames with nowhere to go.
            let directory = (edf as NSString).deletingLastPathComponent
            guard access(directory.isEmpty ? "." : directory, W_OK | X_OK) == 0 else {
                StandardError.write(
                    "hrbridge: --edf \(edf): cannot create files in \(directory.isEmpty ? "." : directory): \(String(cString: strerror(errno)))"
                )
                throw ExitCode(73)
            }
        }
        let edfRecorder = edf.map { EDFWaveformFiles(prefix: $0) }
        // From the first instant: an interrupt while waiting for bluetoothd, an adapter or a strap
        // ends it as one while streaming does (the stats line, exit 0).
        let interrupt = InterruptWatch { _ in
            view.finish(statistics: statistics)
            Glibc.exit(0)
        }
        let (connection, adapter) = try await bluetooth.open(waiting: { view.adapter(nil, $0) })
        let events = adapter.events()
        for status in await adapter.adapterStatuses() where status.availability == .ready {
            view.adapter(status.name, .ready)
        }
        // On the thread that reads the bus: a frame is decoded, counted and printed without
        // waking another thread (Benchmarks/README.md, "print to file").
        let printer = Task(executorPreference: connection.executor) {
            for await event in events {
                statistics.record(event)
                view.show(event, statistics: statistics)
                oscOutput?.forward(event)
                feed?.handle(event)
                if case .waveform(let waveform) = event { edfRecorder?.record(waveform) }
                if case .waveformsAvailable(let sensor, let offered) = event {
                    let wanted = requests.filter { offered.contains($0.kind) }
                    // Not on the bus thread: a START waits for the strap's answer.
                    Task {
                        for request in wanted {
                            do {
                                try await adapter.startWaveform(request, for: sensor)
                            } catch {
                                view.status(
                                    "waveformFailed", sensor: sensor.address, adapter: sensor.adapter,
                                    detail: "\(error)")
                            }
                        }
                    }
                }
            }
        }
        let choice = await StrapSelection.choose(adapter: adapter, addresses: addresses)
        let targets = choice.straps
        guard !targets.isEmpty else {
            StandardError.write(choice.nothingFound)
            await adapter.shutdown()
            await connection.close()
            throw ExitCode(69)
        }
        oscOutput?.follow(address: targets[0].address)
        // From here an interrupt ends the run as the end of --duration does, also while a strap
        // is still being connected: the straps are let go and OSC's drop sequence goes out.
        interrupt.ready()
        let connected = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let connecting = Task {
            defer { connected.continuation.finish() }
            for target in targets {
                guard !Task.isCancelled else { return }
                do {
                    try await adapter.connect(target)
                } catch {
                    // Cut short by the end of the run: not a failure.
                    guard !Task.isCancelled else { return }
                    view.status("connectFailed", sensor: target.address, detail: "\(error)")
                }
            }
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in interrupt.signals { return } }
            if let duration {
                // Counted once the straps are connected, as before.
                group.addTask {
                    // Ends at once when the run is cut short meanwhile (cancelled), unlike a wait on the task.
                    for await _ in connected.stream {}
                    guard !Task.isCancelled else { return }
                    try? await Task.sleep(for: .seconds(duration))
                }
            }
            await group.next()
            group.cancelAll()
        }
        // A connection still pending is answered by its strap's disconnection (or the shutdown).
        connecting.cancel()
        // The strap's battery: its raw signals stop with the monitor.
        for target in targets {
            for request in requests { try? await adapter.stopWaveform(request.kind, for: target) }
        }
        for target in targets { try? await adapter.disconnect(target) }
        await adapter.shutdown()
        await printer.value
        let edfReport = edfRecorder?.finish()
        for line in edfReport?.lines ?? [] { StandardError.write(line) }
        await oscOutput?.finish()
        await connection.close()
        view.finish(statistics: statistics)
        if let edfReport, !edfReport.failures.isEmpty { throw ExitCode(73) }
    }
}

/// `monitor --osc`: the first strap's events as OSC facts, sent by an ``OSCOutput`` beside the
/// printing (the daemon's `[osc]` does the same with more choices).
final class MonitorOSC: Sendable {
    private let sender: OSCSender
    private let facts: AsyncStream<OSCFact>.Continuation
    private let running: Task<Void, Never>
    private let followed = Mutex<String?>(nil)

    /// The command line's target and preset as the daemon's settings; refuses what they refuse.
    static func settings(target: String, preset: String) throws -> OSCSettings {
        var settings = OSCSettings()
        settings.enabled = true
        do {
            try settings.set(.target, to: target)
        } catch {
            throw ValidationError("--osc: \(error.problem)")
        }
        // `custom` needs names, which only the daemon's [osc.custom] takes: not offered here.
        let offered = OSCPresetName.allCases.filter { $0 != .custom }
        let name = try? OSCPresetName(parsing: preset)
        guard let name, offered.contains(name) else {
            // Shown as given, less control characters, at most 64 of them.
            let shown = String(preset.prefix(64)).unicodeScalars.map {
                $0.properties.generalCategory == .control ? "?" : String($0)
            }.joined()
            throw ValidationError(
                "--osc-preset: \"\(shown)\" is not one of \(offered.map(\.rawValue).joined(separator: ", "))"
                    + (name == .custom ? " (custom names go in the daemon's [osc.custom])" : ""))
        }
        settings.preset = name
        return settings
    }

    /// Resolves the target and starts the runner; exits 68 when the host does not resolve.
    init(settings: OSCSettings, logger: Logger) throws {
        do {
            sender = try OSCSender(target: settings.target, logger: logger)
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(68)
        }
        let (stream, facts) = AsyncStream.makeStream(of: OSCFact.self)
        self.facts = facts
        let output = OSCOutput(
            configuration: try settings.feedConfiguration(), facts: stream, clock: SystemWallClock(),
            transport: sender, logger: logger)
        running = Task { await output.run() }
    }

    /// Sends the strap at `address` from now on.
    func follow(address: String) { followed.withLock { $0 = address } }

    /// Passes on what `event` says about the followed strap.
    func forward(_ event: SensorEvent) {
        guard let address = followed.withLock({ $0 }), let fact = OSCFact(event, address: address, now: Date())
        else { return }
        facts.yield(fact)
    }

    /// Ends the runner (it sends the drop sequence) and says how many datagrams went.
    func finish() async {
        facts.finish()
        await running.value
        StandardError.write(
            "hrbridge: OSC: \(sender.datagramsSent) datagrams sent to \(sender.target), \(sender.sendErrors) send errors"
        )
    }
}

/// Counters kept while monitoring, printed at the end.
final class MonitorStatistics: Sendable {
    struct Counters: Sendable {
        var framesDecoded = 0
        var framesRejected = 0
        /// Raw-signal frames (PMD ECG and acceleration) and their samples.
        var waveformFrames = 0
        var waveformSamples = 0
        var connections = 0
        var disconnections = 0
        var reconnects = 0
        /// Connect attempts that failed before the strap was up (never a disconnection: there was no link).
        var connectFailures = 0
        /// Refused frames and broadcasts by reason (`trailingBytes`, `truncated`, `unknownLength`…).
        var refusedByReason: [String: Int] = [:]
        /// Disconnections by reason (`link lost`, `timeout`…).
        var disconnectionsByReason: [String: Int] = [:]
        /// Failed connect attempts by BlueZ's reason.
        var connectFailuresByReason: [String: Int] = [:]
        /// Whether the strap is up (ready) now.
        var isUp = false
        /// Since when the strap is down, while it is.
        var downSince: Date?
        /// The last gap, from disconnection to ready again, in seconds.
        var lastGap: Double?
        /// All gaps together, and the longest.
        var totalGap = 0.0
        var longestGap = 0.0
    }

    private let counters = Mutex<[String: Counters]>([:])

    func record(_ event: SensorEvent, at now: Date = Date()) {
        counters.withLock { counters in
            switch event {
            case .measurement(let measurement):
                counters[measurement.sensor.address, default: Counters()].framesDecoded += 1
            case .decodingFailed(let sensor, let error, _):
                counters[sensor.address, default: Counters()].framesRejected += 1
                counters[sensor.address, default: Counters()].refusedByReason[Self.kind(error.reason), default: 0] += 1
            case .advertisementRefused(let sensor, let error):
                counters[sensor.address, default: Counters()].framesRejected += 1
                counters[sensor.address, default: Counters()].refusedByReason[Self.kind(error.reason), default: 0] += 1
            case .waveform(let waveform):
                counters[waveform.sensor.address, default: Counters()].waveformFrames += 1
                counters[waveform.sensor.address, default: Counters()].waveformSamples += waveform.sampleCount
            case .waveformRefused(let sensor, _, let error):
                counters[sensor.address, default: Counters()].framesRejected += 1
                counters[sensor.address, default: Counters()].refusedByReason[error.reason.metricName, default: 0] += 1
            case .connectionChanged(let sensor, .ready):
                var counter = counters[sensor.address, default: Counters()]
                if counter.connections > 0 { counter.reconnects += 1 }
                counter.connections += 1
                counter.isUp = true
                if let since = counter.downSince {
                    let gap = now.timeIntervalSince(since)
                    counter.lastGap = gap
                    counter.totalGap += gap
                    counter.longestGap = max(counter.longestGap, gap)
                    counter.downSince = nil
                }
                counters[sensor.address] = counter
            case .connectionChanged(let sensor, .disconnected(let reason)) where !Self.wasUp(counters[sensor.address]):
                // No link was up: a connect attempt failed (a broadcast-only strap, out of range).
                counters[sensor.address, default: Counters()].connectFailures += 1
                counters[sensor.address, default: Counters()].connectFailuresByReason[reason.description, default: 0] +=
                    1
            case .connectionChanged(let sensor, .disconnected(let reason)):
                var counter = counters[sensor.address, default: Counters()]
                counter.isUp = false
                counter.disconnections += 1
                counter.disconnectionsByReason[reason.description, default: 0] += 1
                // A strap that was up goes down now; repeated failures while down extend the same gap.
                if counter.downSince == nil && counter.connections > 0 { counter.downSince = now }
                counters[sensor.address] = counter
            default: break
            }
        }
    }

    /// The reason's case name: `trailingBytes(count: 1)` → `trailingBytes`.
    static func kind(_ reason: GATTDecodingError.Reason) -> String { caseName(reason) }

    /// A refused broadcast's reason's case name: `unknownLength(5, known: [3, 4])` → `unknownLength`.
    static func kind(_ reason: AdvertisementDecodingError.Reason) -> String { caseName(reason) }

    private static func caseName(_ reason: some Any) -> String {
        String(String(describing: reason).prefix { $0 != "(" })
    }

    /// Whether a strap with `counter` has a link up now.
    private static func wasUp(_ counter: Counters?) -> Bool { counter?.isUp ?? false }

    var snapshot: [String: Counters] { counters.withLock { $0 } }

    /// The last line of `monitor --json`: `{"event":"stats","sensors":{address: counters}}`.
    struct Report: Encodable {
        struct Sensor: Encodable {
            var framesDecoded: Int
            var framesRejected: Int
            var waveformFrames: Int
            var waveformSamples: Int
            var connections: Int
            var disconnections: Int
            var reconnects: Int
            var connectFailures: Int
            var refusedByReason: [String: Int]
            var disconnectionsByReason: [String: Int]
            var connectFailuresByReason: [String: Int]
            var totalGapSeconds: Double
            var longestGapSeconds: Double
        }

        var event = "stats"
        var sensors: [String: Sensor]

        init(sensors counters: [String: Counters]) {
            sensors = counters.mapValues { counter in
                Sensor(
                    framesDecoded: counter.framesDecoded, framesRejected: counter.framesRejected,
                    waveformFrames: counter.waveformFrames, waveformSamples: counter.waveformSamples,
                    connections: counter.connections, disconnections: counter.disconnections,
                    reconnects: counter.reconnects, connectFailures: counter.connectFailures,
                    refusedByReason: counter.refusedByReason, disconnectionsByReason: counter.disconnectionsByReason,
                    connectFailuresByReason: counter.connectFailuresByReason, totalGapSeconds: counter.totalGap,
                    longestGapSeconds: counter.longestGap)
            }
        }
    }
}

/// Output of `hrbridge monitor`: JSON lines, or one live line per strap on a terminal.
final class MonitorView: @unchecked Sendable {
    private let json: Bool
    private let interactive = isatty(STDOUT_FILENO) == 1
    private let lock = NSLock()
    private var lines: [String: String] = [:]
    private var order: [String] = []
    private var drawn = 0
    private var disconnected: Set<String> = []
    /// Straps with a link up now.
    private var up: Set<String> = []

    init(json: Bool) { self.json = json }

    private func write(_ line: String) { write(bytes: Array(line.utf8)) }

    /// One line straight to standard output with one `write(2)`: no stdio buffer to flush, so a
    /// reader of the pipe sees each line as it is printed.
    private func write(bytes: [UInt8]) {
        var line = bytes
        line.append(UInt8(ascii: "\n"))
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    private func write(_ value: some Encodable) {
        guard let line = try? JSONText.line(value) else { return }
        write(line)
    }

    func status(_ event: String, sensor: String, adapter: String? = nil, detail: String? = nil) {
        lock.lock()
        defer { lock.unlock() }
        if json {
            write(SensorEventJSON(event: event, sensor: sensor, adapter: adapter, detail: detail, time: Date()))
        } else {
            update(sensor, "\(sensor)  \(event)\(detail.map { ": \($0)" } ?? "")")
        }
    }

    /// The adapter's state: "waiting" while it cannot be used, "ready" once it can.
    func adapter(_ name: String?, _ state: AdapterAvailability) {
        lock.lock()
        defer { lock.unlock() }
        if json {
            write(
                SensorEventJSON(
                    event: "adapter", adapter: name, state: Self.key(state), detail: state.description, time: Date()))
        } else {
            let waiting = state == .ready ? "" : "; waiting"
            update("adapter", "adapter \(name ?? "-"): \(state)\(waiting)")
        }
    }

    static func key(_ state: AdapterAvailability) -> String {
        switch state {
        case .ready: "ready"
        case .poweredOff: "poweredOff"
        case .absent: "absent"
        case .serviceStopped: "serviceStopped"
        }
    }

    func show(_ event: SensorEvent, statistics: MonitorStatistics) {
        switch event {
        case .adapterChanged(let name, let state):
            adapter(name, state)
        case .measurement(let measurement):
            guard case .heartRateMeasurement(let frame) = measurement.value else { return }
            lock.lock()
            defer { lock.unlock() }
            if json {
                write(
                    bytes: MeasurementJSON.writer(
                        frame, receivedAt: measurement.receivedAt, sensor: measurement.sensor.address, kind: nil,
                        via: measurement.via
                    ).finish())
            } else {
                let rr = frame.rrIntervals.map { String(format: "%.3f", $0.seconds) }.joined(separator: " ")
                update(
                    measurement.sensor.address,
                    "\(measurement.sensor.name ?? measurement.sensor.address)  \(measurement.sensor.address)  "
                        + "♥ \(frame.heartRate) bpm  contact \(frame.sensorContact.rawValue)  RR \(rr.isEmpty ? "-" : rr)"
                )
            }
        case .connectionChanged(let sensor, .ready):
            let wasDown = lock.withLock {
                up.insert(sensor.address)
                return disconnected.remove(sensor.address) != nil
            }
            // After a drop, say how long the gap was: no sample was invented to fill it.
            let gap = wasDown ? statistics.snapshot[sensor.address]?.lastGap : nil
            if wasDown || json {
                status(
                    "connected", sensor: sensor.address, adapter: sensor.adapter,
                    detail: gap.map { String(format: "after a %.1f s gap", $0) })
            }
        case .connectionChanged(let sensor, .disconnected(let reason)):
            // A link that was up dropped: a disconnection; without one, a connect attempt failed.
            let wasUp = lock.withLock { up.remove(sensor.address) != nil }
            if wasUp { lock.withLock { _ = disconnected.insert(sensor.address) } }
            status(
                wasUp ? "disconnected" : "connectFailed", sensor: sensor.address, adapter: sensor.adapter,
                detail: reason.description)
        case .connectionChanged(let sensor, .connecting):
            if lock.withLock({ disconnected.contains(sensor.address) }) {
                status("reconnecting", sensor: sensor.address)
            }
        case .batteryLevel(let sensor, let percent):
            if json {
                lock.withLock {
                    write(
                        SensorEventJSON(
                            event: "battery", sensor: sensor.address, batteryLevel: Int(percent), time: Date()))
                }
            }
        case .decodingFailed(let sensor, let error, let bytes):
            lock.lock()
            defer { lock.unlock() }
            if json {
                write(
                    SensorEventJSON(
                        event: "frameRefused", sensor: sensor.address, error: error.description, bytes: bytes,
                        time: Date()))
            }
        case .advertisementRefused(let sensor, let error):
            lock.lock()
            defer { lock.unlock() }
            if json {
                write(
                    SensorEventJSON(
                        event: "broadcastRefused", sensor: sensor.address, error: error.description,
                        bytes: error.bytes, time: Date()))
            }
        case .waveformsAvailable(let sensor, let kinds):
            if json {
                status(
                    "waveforms", sensor: sensor.address, adapter: sensor.adapter,
                    detail: kinds.sorted().map(\.rawValue).joined(separator: ","))
            }
        case .waveform(let waveform):
            lock.lock()
            defer { lock.unlock() }
            if json {
                write(bytes: WaveformJSON.line(waveform))
            } else {
                let counters = statistics.snapshot[waveform.sensor.address]
                let last = waveform.values.suffix(waveform.kind.channels).map(String.init).joined(separator: " ")
                update(
                    waveform.sensor.address + " " + waveform.kind.rawValue,
                    "  \(waveform.kind.rawValue.uppercased()) \(waveform.sampleRate) Hz  "
                        + "\(counters?.waveformSamples ?? 0) samples  last \(last) \(waveform.kind.unit)")
            }
        case .waveformRefused(let sensor, let kind, let error):
            lock.lock()
            defer { lock.unlock() }
            if json {
                write(
                    SensorEventJSON(
                        event: "frameRefused", sensor: sensor.address, detail: kind.rawValue,
                        error: error.description, time: Date()))
            }
        default:
            break
        }
    }

    private func update(_ key: String, _ line: String) {
        if !lines.keys.contains(key) { order.append(key) }
        lines[key] = line
        guard interactive else {
            print(line)
            return
        }
        var output = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
        for key in order { output += "\r\u{1B}[2K" + (lines[key] ?? "") + "\n" }
        drawn = order.count
        FileHandle.standardOutput.write(Data(output.utf8))
    }

    func finish(statistics: MonitorStatistics) {
        let counters = statistics.snapshot
        if json {
            write(MonitorStatistics.Report(sensors: counters))
        } else {
            for (address, counter) in counters.sorted(by: { $0.key < $1.key }) {
                StandardError.write(
                    "\(address): \(counter.framesDecoded) frames decoded, \(counter.framesRejected) refused, "
                        + "\(counter.connections) connections, \(counter.disconnections) disconnections, \(counter.reconnects) reconnects"
                        + (counter.connectFailures > 0 ? ", \(counter.connectFailures) failed connect attempts" : "")
                        + (counter.totalGap > 0
                            ? String(
                                format: ", %.1f s without data (longest gap %.1f s)", counter.totalGap,
                                counter.longestGap)
                            : "")
                )
                for (reason, count) in counter.refusedByReason.sorted(by: { $0.key < $1.key }) {
                    StandardError.write("  refused (\(reason)): \(count)")
                }
                for (reason, count) in counter.disconnectionsByReason.sorted(by: { $0.key < $1.key }) {
                    StandardError.write("  disconnected (\(reason)): \(count)")
                }
                for (reason, count) in counter.connectFailuresByReason.sorted(by: { $0.key < $1.key }) {
                    StandardError.write("  connect failed (\(reason)): \(count)")
                }
            }
        }
    }
}

extension NSLock {
    fileprivate func withLock<T>(_ body: () -> T) -> T {
        lock()
        defer { unlock() }
        return body()
    }
}
