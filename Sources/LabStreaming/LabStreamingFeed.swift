public import FoundationEssentials
import GATT
public import Logging
public import Sensors
import Synchronization
import Workouts

/// Sensor events as LSL streams: per strap an HR, an RR, an HRV, an ECG and an ACC stream, created
/// when the strap can fill them, and one Markers stream. Every timestamp is moved onto liblsl's clock: a
/// heart rate at its frame's arrival, each RR interval at the end of its beat (the last ending at
/// the arrival), each raw sample at the time the strap's clock gives it (``SensorWaveform``).
///
/// Pushes never wait for a consumer; calls from several tasks are serialized.
public final class LabStreamingFeed: Sendable {
    /// Stream names, ids and metadata.
    public struct Settings: Sendable {
        /// The streams offered.
        public var kinds: Set<LSLStreamKind>
        /// This host's name in every `source_id` (`hrbridge:<host>:<address>:<kind>`).
        public var host: String

        public init(kinds: Set<LSLStreamKind> = Set(LSLStreamKind.allCases), host: String) {
            self.kinds = kinds
            self.host = host
        }
    }

    private let library: LSLLibrary
    private let settings: Settings
    private let now: @Sendable () -> Date
    private let logger: Logger
    private struct State {
        var outlets: [String: [LSLStreamKind: LSLOutlet]] = [:]
        var names: [String: String] = [:]
        var information: [String: DeviceInformation] = [:]
        var markers: LSLOutlet?
        var offset = ClockOffsetEstimate()
        /// Each strap's HRV windows so far (straps with RR intervals, while `hrv` is offered).
        var hrv: [String: HRVStreamWindows] = [:]
    }

    private let state = Mutex(State())
    /// About how many outlets of one process liblsl's default port range lets resolvers see.
    static let defaultPortRangeOutlets = 16

    /// A feed on `library`; `now` is the clock the events' dates are on (the daemon's).
    public init(library: LSLLibrary, settings: Settings, now: @escaping @Sendable () -> Date, logger: Logger) {
        self.library = library
        self.settings = settings
        self.now = now
        self.logger = logger
    }

    /// The stream ids open now, sorted.
    public var openStreams: [String] {
        state.withLock { state in
            let strapStreams = state.outlets.values.flatMap { $0.values.map(\.description.sourceID) }
            return (strapStreams + (state.markers.map { [$0.description.sourceID] } ?? [])).sorted()
        }
    }

    /// Opens the Markers stream (so a recorder started before the first event finds it).
    public func openMarkers() throws(LSLError) {
        guard settings.kinds.contains(.markers), state.withLock({ $0.markers == nil }) else { return }
        let markers = try library.outlet(
            LSLStreamDescription(
                name: "hrbridge Markers", type: "Markers", nominalRate: 0, format: .string,
                sourceID: "hrbridge:\(settings.host):markers",
                channels: [.init(label: "Marker", unit: "", type: "Markers")]))
        state.withLock { $0.markers = markers }
    }

    /// A marker at `date` (the events' clock).
    public func mark(_ text: String, at date: Date) {
        let time = lslTime(date)
        state.withLock { $0.markers?.push(marker: text, at: time) }
    }

    /// Opens a strap's HR and RR streams (when offered) before its first frame, so recorders find
    /// them: on its Device Information, or when called (a strap linked before the feed began).
    public func open(_ sensor: SensorIdentity, device: DeviceInformation? = nil) {
        state.withLock { state in
            state.names[sensor.address] = sensor.name
            if let device { state.information[sensor.address] = device }
        }
        for kind in [LSLStreamKind.hr, .rr, .hrv] { _ = outlet(kind, for: sensor, rate: 0) }
    }

    /// Handles one adapter event.
    public func handle(_ event: SensorEvent) {
        switch event {
        case .deviceInformation(let sensor, let device):
            // Read right after the link is up: the streams open with the strap's make and model.
            state.withLock { $0.information[sensor.address] = device }
            open(sensor)
        case .measurement(let measurement):
            guard case .heartRateMeasurement(let frame) = measurement.value, measurement.via == .connection else {
                return
            }
            push(frame, from: measurement.sensor, receivedAt: measurement.receivedAt)
        case .waveform(let waveform):
            push(waveform)
        default:
            break
        }
    }

    private func push(_ frame: HeartRateMeasurement, from sensor: SensorIdentity, receivedAt: Date) {
        let offset = clockOffset()
        let arrival = receivedAt.timeIntervalSince1970 + offset
        let (hr, rr) = (outlet(.hr, for: sensor, rate: 0), outlet(.rr, for: sensor, rate: 0))
        hr?.push([Float(frame.heartRate)], at: arrival)
        if !frame.rrIntervals.isEmpty {
            pushHRV(frame.rrIntervals, from: sensor, receivedAt: receivedAt, offset: offset)
        }
        guard !frame.rrIntervals.isEmpty, let rr else { return }
        // Back-dated: the last beat ends at the arrival, each earlier one an interval before.
        var end = arrival
        var stamped: [(Float, Double)] = []
        for interval in frame.rrIntervals.reversed() {
            stamped.append((Float(interval.seconds * 1000), end))
            end -= interval.seconds
        }
        let ordered = stamped.reversed()
        rr.push(chunk: ordered.map(\.0), timestamps: ordered.map(\.1))
    }

    /// The windows a frame's beats complete, on the HRV stream at each window's end: α1 (NaN under
    /// 100 beats), RMSSD (NaN under 3 intervals) and the artefact share, of the corrected window.
    private func pushHRV(_ intervals: [RRInterval], from sensor: SensorIdentity, receivedAt: Date, offset: Double) {
        guard settings.kinds.contains(.hrv) else { return }
        let windows = state.withLock { state in
            state.hrv[sensor.address, default: HRVStreamWindows()].add(intervals, receivedAt: receivedAt)
        }
        guard let stream = outlet(.hrv, for: sensor, rate: 0) else { return }
        for window in windows {
            let values = [window.alpha1 ?? .nan, window.rmssd ?? .nan, window.artefactPercent].map(Float.init)
            stream.push(values, at: (window.date ?? receivedAt).timeIntervalSince1970 + offset)
        }
    }

    private func push(_ waveform: SensorWaveform) {
        guard let kind = LSLStreamKind.allCases.first(where: { $0.waveform == waveform.kind }),
            let outlet = outlet(kind, for: waveform.sensor, rate: waveform.sampleRate)
        else { return }
        let start = waveform.start.timeIntervalSince1970 + clockOffset()
        let timestamps = (0..<waveform.sampleCount).map { start + Double($0) * waveform.interval }
        outlet.push(chunk: waveform.values.map(Float.init), timestamps: timestamps)
    }

    /// liblsl's clock minus the events' clock, steady across pushes (``ClockOffsetEstimate``).
    private func clockOffset() -> Double {
        let before = library.localClock()
        let events = now().timeIntervalSince1970
        let after = library.localClock()
        return state.withLock { $0.offset.read(lslBefore: before, events: events, lslAfter: after) }
    }

    private func lslTime(_ date: Date) -> Double { date.timeIntervalSince1970 + clockOffset() }

    /// What the lock's holder found of a strap's stream.
    private enum Found {
        case open(LSLOutlet)
        case missing(LSLStreamDescription)
    }

    /// The strap's stream of `kind`, opened on first use; nil when not offered or liblsl refused.
    /// liblsl's calls that open and close a stream (ports bound, threads started and joined) are
    /// made outside the lock: a push from another strap never waits behind them.
    private func outlet(_ kind: LSLStreamKind, for sensor: SensorIdentity, rate: Int) -> LSLOutlet? {
        guard settings.kinds.contains(kind) else { return nil }
        let found: Found = state.withLock { state in
            if let existing = state.outlets[sensor.address]?[kind], existing.fits(kind, rate: rate) {
                return .open(existing)
            }
            return .missing(
                Self.description(
                    kind, sensor: sensor, name: state.names[sensor.address] ?? sensor.name, rate: rate,
                    host: settings.host, device: state.information[sensor.address]))
        }
        let description: LSLStreamDescription
        switch found {
        case .open(let outlet): return outlet
        case .missing(let wanted): description = wanted
        }
        let created: LSLOutlet
        do {
            created = try library.outlet(description)
        } catch {
            logger.warning("LSL stream not opened", metadata: ["error": "\(error)"])
            return nil
        }
        // One opened meanwhile is kept; the stream it replaces (another rate) closes after the lock.
        let (kept, replaced) = state.withLock { state -> (LSLOutlet, LSLOutlet?) in
            if let raced = state.outlets[sensor.address]?[kind], raced.fits(kind, rate: rate) { return (raced, nil) }
            return (created, state.outlets[sensor.address, default: [:]].updateValue(created, forKey: kind))
        }
        withExtendedLifetime(replaced) {}
        if kept === created {
            logger.info(
                "LSL stream open", metadata: ["stream": "\(description.name)", "id": "\(description.sourceID)"])
        }
        return kept
    }

    /// A strap's stream header: the name is the strap's (attacker text: printable and bounded).
    static func description(
        _ kind: LSLStreamKind, sensor: SensorIdentity, name: String?, rate: Int, host: String,
        device: DeviceInformation?
    ) -> LSLStreamDescription {
        let strap = printable(name ?? "", limit: 64).isEmpty ? sensor.address : printable(name!, limit: 64)
        let channels: [LSLStreamDescription.Channel] =
            switch kind {
            case .hr: [.init(label: "HR", unit: "bpm", type: "HR")]
            case .rr: [.init(label: "RR", unit: "ms", type: "RR")]
            case .ecg: [.init(label: "ECG", unit: "microvolts", type: "ECG")]
            case .acc: ["X", "Y", "Z"].map { .init(label: $0, unit: "mG", type: "ACC") }
            case .hrv:
                [
                    .init(label: "DFA_alpha1", unit: "", type: "HRV"), .init(label: "RMSSD", unit: "ms", type: "HRV"),
                    .init(label: "artefacts", unit: "percent", type: "HRV"),
                ]
            case .markers: [.init(label: "Marker", unit: "", type: "Markers")]
            }
        var hardware: [(String, String)] = []
        if let maker = device?.manufacturerName { hardware.append(("manufacturer", printable(maker, limit: 64))) }
        if let model = device?.modelNumber { hardware.append(("model", printable(model, limit: 64))) }
        if let serial = device?.serialNumber { hardware.append(("serial", printable(serial, limit: 64))) }
        if let firmware = device?.firmwareRevision { hardware.append(("firmware", printable(firmware, limit: 64))) }
        var acquisition: [(String, String)] = [
            ("software", "hrbridge"), ("gateway", host), ("address", sensor.address), ("adapter", sensor.adapter),
        ]
        switch kind {
        case .hr: acquisition.append(("timestamps", "frame arrival"))
        case .rr:
            acquisition.append(("timestamps", "beat end, back-dated from the frame's arrival; artefacts not corrected"))
        case .ecg, .acc:
            acquisition.append(("timestamps", "per sample, the strap's clock mapped to the host's (docs/lab.md)"))
        case .hrv:
            acquisition.append(("timestamps", "window end: the last 120 s of beats every 5 s of beats"))
            acquisition.append(
                ("artefacts", "corrected within each window (Lipponen & Tarvainen); alpha1 NaN under 100 beats"))
        case .markers: break
        }
        return LSLStreamDescription(
            name: "\(strap) \(kind.contentType)", type: kind.contentType, nominalRate: Double(rate),
            format: .float32, sourceID: "hrbridge:\(host):\(sensor.address):\(kind.rawValue)", channels: channels,
            hardware: hardware, acquisition: acquisition,
            chunkSize: kind == .ecg ? 73 : kind == .acc ? 36 : 0)
    }

    /// `text` without control characters, at most `limit` characters.
    static func printable(_ text: String, limit: Int) -> String {
        String(
            String.UnicodeScalarView(text.unicodeScalars.filter { !$0.properties.generalCategory.isControl }).prefix(
                limit))
    }
}

extension LSLOutlet {
    /// Whether this stream serves `kind` at `rate` (a waveform's stream is opened again at a new rate).
    fileprivate func fits(_ kind: LSLStreamKind, rate: Int) -> Bool {
        kind.waveform == nil || description.nominalRate == Double(rate)
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isControl: Bool {
        switch self {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
