public import Foundation
import GATT
public import Logging
import Metrics
import Samples
public import Sensors
import ServiceLifecycle
import Synchronization
public import Wire
import Workouts

/// Keeps the configured sensors connected and follows every sensor's state for the API.
///
/// Known sensors are connected at start; the adapter reconnects them by itself after a drop (and
/// as soon as one advertises). Each change is published to the live hub as a `sensor` message, each
/// heart-rate frame as a `measurement` message.
public actor SensorManager {
    /// The adapter name.
    public nonisolated let adapter: any SensorAdapter
    private nonisolated let known: [BridgeConfiguration.KnownSensor]
    /// The configured athlete of each sensor, for zones and % of maximum.
    private nonisolated let athletes: [String: BridgeConfiguration.Athlete]
    /// The athlete each running session records on its straps: while it runs, theirs are the
    /// figures (read for every frame, here and by the MQTT bridge, without waiting for this actor).
    private nonisolated let recordedAthletes = Mutex<[String: RecordedAthlete]>([:])
    private let hub: LiveHub
    private let logger: Logger
    private var statuses: [String: SensorStatus] = [:]
    /// Each strap's Device Information strings, as last read.
    private var deviceInformation: [String: DeviceInformation] = [:]
    /// The straps whose last frame came from a broadcast: a session's figures ask for each of
    /// its straps every second, without waiting for this actor.
    private nonisolated let heardByBroadcast = Mutex<Set<String>>([])
    /// When each sensor's status was last published for a heart-rate change alone, and whether a
    /// newer heart rate waits: such changes go out at most once a second of frame time
    /// (`measurement` messages carry every frame's heart rate); anything else goes out at once.
    private var heartRatePublished: [String: (at: Date, pending: Bool)] = [:]
    /// Adapter availability, for the systemd status line.
    public private(set) var availability: AdapterAvailability = .ready
    /// Whether the adapter's own straps are kept connected too (asked again whenever an adapter
    /// becomes usable: plugged in, bluetoothd started).
    private var offersKnown = false
    /// Sensors asked to connect so far.
    private var targeted: Set<String> = []
    /// Adapters' availability changes and newly paired straps, handed from the event loop to a
    /// helper loop of ``run(offersKnown:ready:)``: asking the adapter and connecting straps must
    /// not hold up events.
    private var adapterChanges: AsyncStream<AdapterChange>.Continuation?

    /// What the helper loop acts on.
    enum AdapterChange {
        case availability(AdapterAvailability)
        case paired(SensorIdentity)
        /// A strap offers raw signals: start the configured ones.
        case waveforms(SensorIdentity, [WaveformRequest])
    }
    /// When each sensor's link dropped, for the reconnect-gap histogram.
    private var droppedAt: [String: ContinuousClock.Instant] = [:]
    private let framesDecoded = Counter(label: "hrbridge_frames_decoded_total")
    private let implausibleHeartRates = Counter(label: "hrbridge_implausible_heart_rates_total")
    /// Straps whose implausible heart rate was logged at warning: later ones go at debug.
    private var warnedOfImplausibleHeartRate: Set<String> = []
    private let connections = Counter(label: "hrbridge_connections_total")
    private let reconnectGap = Metrics.Timer(label: "hrbridge_reconnect_gap_seconds")
    private let notificationLatency = Metrics.Timer(label: "hrbridge_notification_to_api_seconds")

    public init(
        adapter: any SensorAdapter, known: [BridgeConfiguration.KnownSensor],
        athletes: [BridgeConfiguration.Athlete] = [], hub: LiveHub, logger: Logger
    ) {
        self.adapter = adapter
        self.known = known
        var byAddress: [String: BridgeConfiguration.Athlete] = [:]
        for sensor in known {
            if let id = sensor.athlete, let athlete = athletes.first(where: { $0.profile.id == id }) {
                byAddress[sensor.address] = athlete
            }
        }
        self.athletes = byAddress
        self.hub = hub
        self.logger = logger
        for sensor in known {
            var status = SensorStatus(
                address: sensor.address, adapter: adapter.name, name: sensor.name, state: .disconnected,
                athlete: sensor.athlete)
            status.athleteName = byAddress[sensor.address].map { $0.profile.name ?? $0.profile.id }
            statuses[sensor.address] = status
        }
    }

    /// Follows the adapter until graceful shutdown (or cancellation): connects the configured
    /// sensors and, with `offersKnown`, the heart-rate straps the adapter knows as the user's own
    /// (BlueZ's paired or trusted straps, the simulator's straps), again whenever an adapter
    /// becomes usable. `ready` is signalled once those connections were asked for.
    /// `startAdapter` runs once the manager listens to the adapter: an adapter whose traffic starts
    /// by itself (a hub's broker) starts there, so that no event goes out before anyone listens.
    public func run(
        offersKnown: Bool = false, ready: ReadinessSignal,
        startAdapter: @Sendable () async throws(DaemonError) -> Void = {}
    ) async throws(DaemonError) {
        self.offersKnown = offersKnown
        let events = adapter.events()
        try await startAdapter()
        // Read after subscribing: any later change arrives as an event, so nothing is missed.
        availability = await adapter.availability()
        let (changes, changesContinuation) = AsyncStream<AdapterChange>.makeStream()
        adapterChanges = changesContinuation
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events.cancelOnGracefulShutdown() { await self.handle(event) }
                // No more events: the helper loop ends once it has handled the changes queued.
                changesContinuation.finish()
            }
            group.addTask {
                for await change in changes {
                    switch change {
                    case .availability(let state): await self.adapterChanged(to: state)
                    case .paired(let sensor): await self.paired(sensor)
                    case .waveforms(let sensor, let requests): await self.startWaveforms(requests, on: sensor)
                    }
                }
            }
            var targets = known.map { SensorIdentity(adapter: adapter.name, address: $0.address, name: $0.name) }
            if offersKnown {
                targets += await ownedStraps().filter { sensor in !targets.contains { $0.address == sensor.address } }
            }
            await connect(targets)
            ready.signal()
        }
        adapterChanges = nil
    }

    /// The heart-rate straps the adapter knows as the user's own.
    private func ownedStraps() async -> [SensorIdentity] {
        await adapter.knownDevices().filter { $0.services.contains(.heartRate) && $0.isOwned }.map(\.identity)
    }

    /// Connects sensors not asked for yet; the adapter keeps trying those it cannot reach now.
    private func connect(_ targets: [SensorIdentity]) async {
        for sensor in targets where targeted.insert(sensor.address).inserted {
            if statuses[sensor.address] == nil {
                statuses[sensor.address] = SensorStatus(
                    address: sensor.address, adapter: adapter.name, name: sensor.name, state: .disconnected)
            }
            do {
                try await adapter.connect(sensor)
            } catch {
                // The adapter keeps trying in the background.
                logger.info("sensor not connected yet", metadata: ["sensor": "\(sensor.address)", "error": "\(error)"])
            }
        }
    }

    /// Re-reads the pool's availability after one adapter's change; an adapter that became usable
    /// (plugged in, bluetoothd started) is asked for the user's own straps, with `offersKnown`.
    private func adapterChanged(to state: AdapterAvailability) async {
        availability = await adapter.availability()
        guard state == .ready, offersKnown else { return }
        await connect(await ownedStraps())
    }

    /// A strap paired while the daemon runs (`hrbridge pair` beside it) is the user's own from now
    /// on: connected at once, with `offersKnown`, as it would be at the next start.
    private func paired(_ sensor: SensorIdentity) async {
        guard offersKnown else { return }
        logger.notice("paired strap followed", metadata: ["sensor": "\(sensor.address)"])
        await connect([sensor])
    }

    /// Every sensor known or seen, sorted by address.
    public func list() -> [SensorStatus] { statuses.values.sorted { $0.address < $1.address } }

    /// One sensor's status.
    public func status(_ address: String) -> SensorStatus? { statuses[address.uppercased()] }

    /// The strap's Device Information strings, when read since the daemon started.
    public func information(_ address: String) -> DeviceInformation? { deviceInformation[address.uppercased()] }

    /// How many sensors stream now.
    public var readyCount: Int { statuses.values.filter { $0.state == .ready }.count }

    /// The identity of a sensor by address.
    public func identity(_ address: String) -> SensorIdentity {
        let status = statuses[address.uppercased()]
        return SensorIdentity(adapter: adapter.name, address: address.uppercased(), name: status?.name)
    }

    /// Sensors recording a guest session: nothing of what they send reaches a log.
    private var guests: Set<String> = []

    /// Marks which session records a sensor (nil: none), whether it is a guest's, and whose
    /// athlete the status shows meanwhile (`athlete`; nil, or once unbound: the configured one).
    public func bind(
        _ address: String, to session: UUID?, athlete: RecordedAthlete? = nil, guest: Bool = false
    ) async {
        let key = address.uppercased()
        if session != nil && guest { guests.insert(key) } else { guests.remove(key) }
        let recorded = session == nil ? nil : athlete
        recordedAthletes.withLock { $0[key] = recorded }
        if var status = statuses[key] {
            status.session = session
            if let recorded {
                status.athlete = recorded.id
                status.athleteName = recorded.name
            } else {
                status.athlete = known.first { $0.address == key }?.athlete
                status.athleteName = athletes[key].map { $0.profile.name ?? $0.profile.id }
            }
            // The last heart rate read by whoever's zones are in force now.
            let reading = status.heartRate.map { self.figures(address: key, heartRate: Double($0)) }
            status.zone = reading?.zone
            status.percentOfMax = reading?.percentOfMax
            statuses[key] = status
            publish(status)
        }
        // A strap recording a session comes first for a freed link slot.
        let configured = known.first { $0.address == key }?.priority ?? 0
        let priority = session == nil ? nil : configured + 100
        // Awaited: the adapter only notes it, and two binds in a row must reach it in order.
        await adapter.setPriority(priority, for: key)
    }

    /// Connects a sensor and keeps it connected.
    public func connect(_ address: String) async throws(SensorAdapterError) {
        try await adapter.connect(identity(address))
    }

    /// Disconnects a sensor.
    public func disconnect(_ address: String) async throws(SensorAdapterError) {
        try await adapter.disconnect(identity(address))
    }

    /// Pairs (bonds) a sensor.
    public func pair(_ address: String) async throws(SensorAdapterError) {
        try await adapter.pair(identity(address))
    }

    /// Forgets a sensor and its bond. One nobody configured leaves the list, told as gone and
    /// forgotten even when this run never listed it: an earlier run may have published it (MQTT's
    /// retained topics, Home Assistant's entities), and the user asked for it to go.
    public func forget(_ address: String) async throws(SensorAdapterError) {
        try await adapter.forget(identity(address))
        let gone = address.uppercased()
        guard !known.contains(where: { $0.address == gone }) else { return }
        statuses[gone] = nil
        heartRatePublished[gone] = nil
        warnedOfImplausibleHeartRate.remove(gone)
        hub.publish(LiveMessage(kind: .sensor, sensor: gone, payload: GoneSensor(address: gone, forgotten: true)))
    }

    private func publish(_ status: SensorStatus) {
        hub.publish(kind: .sensor, session: nil, sensor: status.address) { status.liveLine() }
    }

    /// A new frame's status: a zone change goes out at once; a heart-rate change at most once a
    /// second, and one held back goes out with the first frame after that second, so the last
    /// value is never left unpublished while frames flow.
    private func publishMeasured(_ status: SensorStatus, before: SensorStatus, at date: Date) {
        let address = status.address
        let heartRateChanged = before.heartRate != status.heartRate || before.percentOfMax != status.percentOfMax
        var last = heartRatePublished[address] ?? (at: .distantPast, pending: false)
        let zoneChanged = before.zone != status.zone
        let due = date.timeIntervalSince(last.at) >= 1 || date < last.at
        if zoneChanged || ((heartRateChanged || last.pending) && due) {
            publish(status)
            last = (at: date, pending: false)
        } else if heartRateChanged {
            last.pending = true
        }
        heartRatePublished[address] = last
    }

    /// Whether the strap's last frame came from its broadcast (no link, so no RR intervals).
    public nonisolated func isHeardByBroadcast(_ address: String) -> Bool {
        heardByBroadcast.withLock { $0.contains(address) }
    }

    /// Whether the configuration lists the sensor.
    public nonisolated func isConfigured(_ address: String) -> Bool {
        known.contains { $0.address == address.uppercased() }
    }

    /// Whether the configuration names the sensor (`[[sensors]] name`): that name stays.
    private func hasConfiguredName(_ address: String) -> Bool {
        known.contains { $0.address == address && $0.name != nil }
    }

    /// Whether the configuration lists any sensor.
    public nonisolated var hasConfiguredSensors: Bool { !known.isEmpty }

    /// A heart rate's zone (1-based) and percentage of maximum: by the athlete and zones of the
    /// session recording the sensor, else by its configured athlete.
    public nonisolated func figures(address: String, heartRate: Double) -> (zone: Int?, percentOfMax: Int?) {
        let zones: ZoneConfiguration?
        let maximum: Double?
        if let recorded = recordedAthletes.withLock({ $0[address] }) {
            zones = recorded.zones
            maximum = recorded.maximumHeartRate
        } else if let athlete = athletes[address] {
            zones = athlete.zones ?? athlete.profile.preferredZoneConfiguration(for: .heartRate)
            maximum = athlete.profile.effectiveMaximumHeartRate
        } else {
            return (nil, nil)
        }
        let zone = zones.map { $0.position(of: heartRate) + 1 }
        let percent = maximum.flatMap { $0 > 0 ? Int((100 * heartRate / $0).rounded()) : nil }
        return (zone, percent)
    }

    /// How many sensors that are neither configured nor connected are followed at once (a flood of
    /// advertisers must not grow the daemon or the API's list without bound).
    public static let seenLimit = 256

    private func isKept(_ address: String) -> Bool {
        known.contains { $0.address == address } || targeted.contains(address)
            || statuses[address].map { $0.session != nil || $0.state == .ready || $0.state == .connected } == true
    }

    /// Forgets a sensor that is only seen, telling subscribers it is gone.
    private func drop(_ address: String) {
        guard !isKept(address), statuses.removeValue(forKey: address) != nil else { return }
        heartRatePublished[address] = nil
        warnedOfImplausibleHeartRate.remove(address)
        hub.publish(LiveMessage(kind: .sensor, sensor: address, payload: GoneSensor(address: address, forgotten: nil)))
    }

    /// A heart rate no heart beats at (65535: a field of noise), of which the sessions' samplers make
    /// no sample: counted and logged, a strap's first at warning and later ones at debug (a strap gone
    /// wrong may send one a second); a guest's without the value.
    private func countImplausibleHeartRate(_ bpm: UInt16, from address: String) {
        implausibleHeartRates.increment()
        let first = warnedOfImplausibleHeartRate.insert(address).inserted
        var metadata: Logger.Metadata = ["sensor": "\(address)"]
        if guests.contains(address) {
            // A guest's data never reaches disk: which strap, not what it sent.
            metadata["guest"] = .string("true")
        } else {
            metadata["bpm"] = .string("\(bpm)")
        }
        logger.log(level: first ? .warning : .debug, "implausible heart rate refused", metadata: metadata)
    }

    private func update(_ identity: SensorIdentity, _ change: (inout SensorStatus) -> Void) {
        if statuses[identity.address] == nil, !isKept(identity.address) {
            let seen = statuses.keys.filter { !isKept($0) }
            if seen.count >= Self.seenLimit,
                let oldest = seen.min(by: {
                    (statuses[$0]?.lastMeasurement ?? .distantPast) < (statuses[$1]?.lastMeasurement ?? .distantPast)
                })
            {
                drop(oldest)
            }
        }
        var status =
            statuses[identity.address]
            ?? SensorStatus(address: identity.address, adapter: identity.adapter, name: identity.name)
        let before = status
        change(&status)
        // The adapter's latest name (one heard late, an alias set since), unless configured; only
        // from the adapter the strap is on, once it has a name (a strap two adapters see, with an
        // alias set on one, must not flip between the two names).
        if let name = identity.name, !hasConfiguredName(identity.address),
            status.name == nil || identity.adapter == status.adapter
        {
            status.name = name
        }
        statuses[identity.address] = status
        if status != before { publish(status) }
    }

    func handle(_ event: SensorEvent) {
        switch event {
        case .discovered(let sensor):
            update(sensor.identity) { $0.rssi = sensor.rssi }
        case .updated(let sensor, let rssi):
            update(sensor) { $0.rssi = rssi }
        case .connectionChanged(let sensor, let state):
            update(sensor) { status in
                // The adapter it is linked (or linking) through: straps move between adapters.
                status.adapter = sensor.adapter
                switch state {
                case .ready:
                    if status.state != .ready {
                        connections.increment()
                        if let since = droppedAt.removeValue(forKey: sensor.address) {
                            reconnectGap.record(duration: ContinuousClock.now - since)
                        }
                    }
                    status.state = .ready
                    status.reason = nil
                case .connected: status.state = .connected
                case .connecting: status.state = .connecting
                case .disconnected(let reason):
                    if status.state != .disconnected {
                        status.disconnections += 1
                        Counter(label: "hrbridge_disconnections_total", dimensions: [("reason", reason.metricName)])
                            .increment()
                        if status.state == .ready { droppedAt[sensor.address] = .now }
                    }
                    status.state = .disconnected
                    status.reason = reason.description
                    // Stale data expires: no heart rate is shown for a strap that is gone.
                    status.heartRate = nil
                    status.zone = nil
                    status.percentOfMax = nil
                }
            }
        case .batteryLevel(let sensor, let percent):
            update(sensor) { $0.batteryLevel = Int(percent) }
        case .measurement(let measurement):
            guard case .heartRateMeasurement(let frame) = measurement.value else { return }
            let address = measurement.sensor.address
            let implausible =
                frame.isReading && !MeasurementSampler.plausibleHeartRates.contains(Double(frame.heartRate))
            if implausible { countImplausibleHeartRate(frame.heartRate, from: address) }
            var status = statuses[address] ?? SensorStatus(address: address, adapter: measurement.sensor.adapter)
            let before = status
            // The status shows the last heart rate a heart beats at; the frame itself still goes out.
            if !implausible {
                status.heartRate = Int(frame.heartRate)
                let figures = figures(address: address, heartRate: Double(frame.heartRate))
                if let zone = figures.zone { status.zone = zone }
                if let percent = figures.percentOfMax { status.percentOfMax = percent }
            }
            status.lastMeasurement = measurement.receivedAt
            status.via = measurement.via.rawValue
            if measurement.via == .connection { status.bonded = measurement.bonded }
            if status.via != before.via {
                let broadcast = measurement.via == .advertisement
                heardByBroadcast.withLock { heard in
                    if broadcast { heard.insert(address) } else { heard.remove(address) }
                }
            }
            status.framesDecoded += 1
            framesDecoded.increment()
            statuses[address] = status
            publishMeasured(status, before: before, at: measurement.receivedAt)
            hub.publish(
                LiveMessage(
                    kind: .measurement, session: status.session, sensor: address,
                    json: MeasurementJSON.line(
                        frame, receivedAt: measurement.receivedAt, sensor: address, session: status.session,
                        via: measurement.via)))
            // Arrival → on the live stream; a simulated clock's dates (seconds or hours away) are not latencies.
            let latency = Date().timeIntervalSince(measurement.receivedAt)
            if latency >= 0 && latency < 10 { notificationLatency.record(duration: .seconds(latency)) }
        case .decodingFailed(let sensor, let error, let bytes):
            update(sensor) { status in
                status.framesRefused += 1
                status.refusedByReason[error.reason.metricName, default: 0] += 1
            }
            Counter(label: "hrbridge_frames_refused_total", dimensions: [("reason", error.reason.metricName)])
                .increment()
            guard !guests.contains(sensor.address) else {
                // A guest's data never reaches disk: which strap, not what it sent.
                logger.warning("frame refused", metadata: ["sensor": "\(sensor.address)", "guest": "true"])
                return
            }
            logger.warning(
                "frame refused",
                metadata: [
                    "sensor": "\(sensor.address)", "error": "\(error)",
                    "bytes": "\(bytes.map { String(format: "%02x", $0) }.joined(separator: " "))",
                ])
        case .advertisementRefused(let sensor, let error):
            // Anyone can broadcast: counted and logged (which strap and why, never its bytes).
            var firstOfItsKind = false
            update(sensor) { status in
                status.framesRefused += 1
                firstOfItsKind = status.refusedByReason[error.reason.metricName] == nil
                status.refusedByReason[error.reason.metricName, default: 0] += 1
            }
            Counter(label: "hrbridge_broadcasts_refused_total", dimensions: [("reason", error.reason.metricName)])
                .increment()
            // A Polar strap may go on broadcasting while linked, about once a second: logged once.
            let level: Logger.Level = error.reason == .heardWhileLinked && !firstOfItsKind ? .debug : .info
            logger.log(
                level: level, "broadcast refused",
                metadata: ["sensor": "\(sensor.address)", "error": "\(error.reason)"])
        case .adapterChanged(let name, let state):
            // One adapter's change: the bridge's availability is the pool's (ready while one is).
            hub.publish(LiveMessage(kind: .adapter, payload: ["adapter": name, "state": "\(state)"]))
            adapterChanges?.yield(.availability(state))
        case .paired(let sensor):
            adapterChanges?.yield(.paired(sensor))
        case .lost(let sensor):
            // Gone from BlueZ's cache: a strap nobody configured or uses is forgotten.
            drop(sensor.address)
        case .waveformRefused(let sensor, let kind, let error):
            var firstOfItsKind = false
            update(sensor) { status in
                status.framesRefused += 1
                firstOfItsKind = status.refusedByReason[error.reason.metricName] == nil
                status.refusedByReason[error.reason.metricName, default: 0] += 1
            }
            Counter(label: "hrbridge_frames_refused_total", dimensions: [("reason", error.reason.metricName)])
                .increment()
            // A strap gone wrong may send tens of bad frames a second: each reason at warning once
            // per strap, then at debug (every one is counted).
            logger.log(
                level: firstOfItsKind ? .warning : .debug, "frame refused",
                metadata: ["sensor": "\(sensor.address)", "signal": "\(kind)", "error": "\(error)"])
        case .waveformsAvailable(let sensor, let offered):
            let wanted =
                known.first { $0.address == sensor.address }?.waveforms.filter { offered.contains($0.kind) } ?? []
            if !wanted.isEmpty { adapterChanges?.yield(.waveforms(sensor, wanted)) }
        case .waveform(let waveform):
            let address = waveform.sensor.address
            let session = statuses[address]?.session
            hub.publish(kind: waveform.kind == .ecg ? .ecg : .acc, session: session, sensor: address) {
                String(decoding: WaveformJSON.line(waveform, session: session), as: UTF8.self)
            }
        case .deviceInformation(let sensor, let information):
            deviceInformation[sensor.address] = information
        case .servicesReady, .bodySensorLocation:
            break
        }
    }
}

extension SensorManager {
    /// Starts a strap's configured raw signals (the adapter starts them again after a reconnect).
    func startWaveforms(_ requests: [WaveformRequest], on sensor: SensorIdentity) async {
        for request in requests {
            do {
                try await adapter.startWaveform(request, for: sensor)
                logger.info(
                    "raw signal started", metadata: ["sensor": "\(sensor.address)", "signal": "\(request.kind)"])
            } catch {
                logger.warning(
                    "raw signal not started", metadata: ["sensor": "\(sensor.address)", "error": "\(error)"])
            }
        }
    }
}

extension DisconnectReason {
    /// A label value from a fixed set (a failure's text stays out of metric labels).
    var metricName: String {
        switch self {
        case .requested: "requested"
        case .linkLost: "link_lost"
        case .timeout: "timeout"
        case .adapterUnavailable: "adapter_unavailable"
        case .failed: "failed"
        }
    }
}

extension GATTDecodingError.Reason {
    /// A label value from a fixed set.
    var metricName: String {
        switch self {
        case .tooShort: "too_short"
        case .truncated: "truncated"
        case .missingRRIntervals: "missing_rr_intervals"
        case .trailingBytes: "trailing_bytes"
        case .outOfRange: "out_of_range"
        case .invalidLength: "invalid_length"
        case .invalidUTF8: "invalid_utf8"
        case .inconsistentLength: "inconsistent_length"
        @unknown default: "other"
        }
    }
}

extension AdvertisementDecodingError.Reason {
    /// A label value from a fixed set: the reason's case in snake case (`unknownLength` → `unknown_length`).
    var metricName: String {
        String(describing: self).prefix { $0 != "(" }.reduce(into: "") { name, character in
            if character.isUppercase { name += "_" }
            name += character.lowercased()
        }
    }
}
