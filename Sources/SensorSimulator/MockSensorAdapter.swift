public import Foundation
public import GATT
public import Logging
public import Sensors

/// The simulator as a sensor adapter: virtual straps that advertise, connect, and notify raw
/// frames that go through the same strict decoders as frames from BlueZ. A broadcast-only strap
/// takes no connection: its heart rate comes in Polar-style advertisements, through the strict
/// advertisement decoder, `via: .advertisement`.
///
/// Simulated time is the scenario's own: second N of the run plays the straps' N-th second, and
/// every event it emits carries the time `origin + N`. What moves the run from one second to the
/// next is either
/// - a clock (``init(scenario:seed:clock:name:logger:)``, the daemon): second N plays when the
///   clock reads `origin + N` (`origin` is its reading at creation), so an accelerated clock gives
///   `--speed 60` and a manual clock gives tests that never sleep; or
/// - the caller (``init(scenario:seed:steppingFrom:name:logger:)``, `workout run`): ``step()``
///   plays the next second and returns once every subscriber has handled its events. No clock is
///   read: the same scenario and seed give the same events with the same times at any pace
///   (``SimulationPacer`` only waits between steps), and ``timeline`` is the run's clock.
public actor MockSensorAdapter: SensorAdapter {
    /// `mock`.
    public nonisolated let name: String
    /// The scenario being played.
    public nonisolated let scenario: Scenario
    /// The clock simulated time reads on: the one given, or a stepped adapter's own timeline,
    /// which reads the time of the last second played (`origin` before the first step).
    public nonisolated let timeline: any WallClock
    /// The timeline a stepped adapter moves; nil when a clock drives the adapter.
    private let steppedTimeline: ManualWallClock?
    private let origin: Date
    private let logger: Logger
    private let broadcaster = ConsumptionTrackingBroadcaster<SensorEvent>(routingKey: \.sensorAddress)
    private var simulations: [SensorIdentity: StrapSimulation] = [:]
    /// The straps streaming now (linked, or followed through their advertisements).
    private var streaming: Set<SensorIdentity> = []
    private var forgotten: Set<SensorIdentity> = []
    /// Broadcast-only straps forgotten: discovered again with the next second played.
    private var advertisingAgain: Set<SensorIdentity> = []
    /// Each broadcast-only strap's advertisement frame counter (3 bits, advancing per reading).
    private var broadcastCounters: [SensorIdentity: UInt8] = [:]
    /// The last simulated second played, in seconds since `origin`.
    private var playedSecond = 0.0
    /// With a clock: the task playing each second as the clock reaches it, while a strap streams.
    private var clockDriver: Task<Void, Never>?
    private var stopSecond: Double?
    /// Whether broadcast-only straps' readings are heard.
    private let followsAdvertisements: Bool
    /// The raw signals asked of each strap: started again after every reconnect.
    private var waveformRequests: [SensorIdentity: [WaveformKind: WaveformRequest]] = [:]
    /// Each stream's mapping of the strap's clock to the timeline.
    private var waveformClocks: [SensorIdentity: [WaveformKind: WaveformClock]] = [:]

    /// Creates an adapter whose seconds play as `clock` reaches them; `seed` overrides the scenario's.
    /// Without `followsAdvertisements`, a broadcast-only strap is never heard (as BlueZ's adapter
    /// with the option off).
    public init(
        scenario: Scenario, seed: UInt64? = nil, clock: any WallClock, name: String = "mock",
        followsAdvertisements: Bool = true, logger: Logger
    ) {
        self.init(
            scenario: scenario, seed: seed, origin: clock.now(), timeline: clock, steppedTimeline: nil, name: name,
            followsAdvertisements: followsAdvertisements, logger: logger)
    }

    /// Creates a stepped adapter: simulated time starts at `origin` and moves only by ``step()``;
    /// `seed` overrides the scenario's.
    public init(
        scenario: Scenario, seed: UInt64? = nil, steppingFrom origin: Date, name: String = "mock", logger: Logger
    ) {
        let timeline = ManualWallClock(now: origin)
        self.init(
            scenario: scenario, seed: seed, origin: origin, timeline: timeline, steppedTimeline: timeline, name: name,
            followsAdvertisements: true, logger: logger)
    }

    private init(
        scenario: Scenario, seed: UInt64?, origin: Date, timeline: any WallClock, steppedTimeline: ManualWallClock?,
        name: String, followsAdvertisements: Bool, logger: Logger
    ) {
        self.name = name
        self.followsAdvertisements = followsAdvertisements
        self.scenario = scenario
        self.timeline = timeline
        self.steppedTimeline = steppedTimeline
        self.origin = origin
        self.logger = logger
        let seed = seed ?? scenario.seed
        for (index, strap) in scenario.straps.enumerated() {
            let identity = SensorIdentity(adapter: name, address: strap.address, name: strap.name)
            simulations[identity] = StrapSimulation(scenario: strap, seed: seed &+ UInt64(index) &* 0x9E37_79B9)
        }
    }

    /// Whether ``step()`` moves simulated time (else a clock does).
    public nonisolated var isStepped: Bool { steppedTimeline != nil }

    /// Every virtual strap's identity, in scenario order.
    public nonisolated var sensors: [SensorIdentity] {
        scenario.straps.map { SensorIdentity(adapter: name, address: $0.address, name: $0.name) }
    }

    /// Adapter events from now on.
    public nonisolated func events() -> AsyncStream<SensorEvent> { broadcaster.subscribe() }
    /// The events of the sensors at `addresses` and the adapter's own, routed: nothing else is queued.
    public nonisolated func events(from addresses: Set<String>) -> AsyncStream<SensorEvent> {
        broadcaster.subscribe(keys: addresses)
    }

    /// Every strap advertises the Heart Rate, Battery and Device Information services.
    public func startDiscovery(services: Set<GATTService>) throws(SensorAdapterError) {
        let advertised: Set<GATTService> = [.heartRate, .battery, .deviceInformation]
        guard services.isEmpty || !services.isDisjoint(with: advertised) else { return }
        for (index, sensor) in sensors.enumerated() where !forgotten.contains(sensor) {
            broadcaster.yield(
                .discovered(DiscoveredSensor(identity: sensor, rssi: -52 - 6 * index, services: advertised)))
        }
    }

    /// Nothing to stop: discovery reports once.
    public func stopDiscovery() throws(SensorAdapterError) {}

    /// Connects a strap and starts its notifications.
    public func connect(_ requested: SensorIdentity) throws(SensorAdapterError) {
        // Events name the strap as it advertises itself, whatever name the caller knew it by.
        guard let index = simulations.index(forKey: requested), !forgotten.contains(requested) else {
            throw .unknownSensor(requested)
        }
        let (sensor, simulation) = simulations[index]
        guard !streaming.contains(sensor) else { return }
        if simulation.scenario.broadcastOnly {
            // No link to make: the strap is followed through its advertisements from now on
            // (which carry its name).
            broadcaster.yield(.discovered(DiscoveredSensor(identity: sensor, rssi: -70, services: [])))
        } else {
            broadcaster.yield(.connectionChanged(sensor, .connecting))
            broadcaster.yield(.connectionChanged(sensor, .connected))
            announceServices(sensor, strap: simulation.scenario)
        }
        // Catch up silently: the body kept going while nobody listened. A client reads the battery
        // level on connecting, so the level reached while catching up is reported, not swallowed.
        let caughtUp = simulations[sensor]?.advance(to: secondToJoinAt()) ?? []
        let levelReached = caughtUp.reduce(nil as UInt8?) { level, output in
            if case .battery(_, let percent) = output { percent } else { level }
        }
        if let levelReached, !simulation.scenario.broadcastOnly {
            broadcaster.yield(.batteryLevel(sensor, levelReached))
        }
        streaming.insert(sensor)
        if steppedTimeline == nil && clockDriver == nil {
            clockDriver = Task { [weak self] in await self?.playAsTheClockGoes() }
        }
    }

    /// Disconnects a strap.
    public func disconnect(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        guard simulations[sensor] != nil else { throw .unknownSensor(sensor) }
        guard streaming.remove(sensor) != nil else { throw .notConnected(sensor) }
        if streaming.isEmpty {
            // Nobody listens: a strap connecting later catches up to the clock, silently.
            clockDriver?.cancel()
            clockDriver = nil
        }
        // The strap ends its streams with the link; a new link starts none unless asked.
        waveformRequests[sensor] = nil
        simulations[sensor]?.stopWaveforms()
        broadcaster.yield(.connectionChanged(sensor, .disconnected(.requested)))
    }

    /// Starts a raw signal on a strap with a PMD service (the scenario's `"pmd"`); it starts again
    /// after every reconnect until stopped.
    public func startWaveform(_ request: WaveformRequest, for sensor: SensorIdentity) async throws(SensorAdapterError) {
        guard let strap = simulations[sensor]?.scenario else { throw .unknownSensor(sensor) }
        guard let pmd = strap.pmd else {
            throw .waveformUnavailable(sensor, request.kind, "the strap has no Polar Measurement Data service")
        }
        if let problem = request.problem { throw .waveformUnavailable(sensor, request.kind, problem) }
        guard isLinked(sensor) else { throw .notConnected(sensor) }
        if !pmd.answersStart {
            // No answer ever comes: the caller waits until it gives up.
            try? await timeline.sleep(until: .distantFuture)
            throw .waveformUnavailable(sensor, request.kind, "the strap did not answer the request")
        }
        waveformRequests[sensor, default: [:]][request.kind] = request
        if waveformClocks[sensor]?[request.kind]?.sampleRate != Double(request.sampleRate) {
            waveformClocks[sensor, default: [:]][request.kind] = WaveformClock(sampleRate: Double(request.sampleRate))
        }
        simulations[sensor]?.startWaveform(request)
    }

    /// Stops a raw signal.
    public func stopWaveform(_ kind: WaveformKind, for sensor: SensorIdentity) throws(SensorAdapterError) {
        guard simulations[sensor] != nil else { throw .unknownSensor(sensor) }
        waveformRequests[sensor]?[kind] = nil
        simulations[sensor]?.stopWaveform(kind)
    }

    /// Virtual straps pair at once.
    public func pair(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        guard simulations[sensor] != nil else { throw .unknownSensor(sensor) }
        forgotten.remove(sensor)
    }

    /// Virtual straps are trusted at once.
    public func trust(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        guard simulations[sensor] != nil else { throw .unknownSensor(sensor) }
    }

    /// Forgets a strap: it disconnects and is no longer discovered until paired again. A
    /// broadcast-only strap has no bond to lose: as after BlueZ's RemoveDevice, its next
    /// advertisement (the next second played, or the next discovery) finds it again.
    public func forget(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        guard let simulation = simulations[sensor] else { throw .unknownSensor(sensor) }
        if streaming.contains(sensor) { try disconnect(sensor) }
        if simulation.scenario.broadcastOnly {
            advertisingAgain.insert(sensor)
        } else {
            forgotten.insert(sensor)
        }
    }

    /// Every virtual strap not forgotten: trusted (the simulator pairs nothing), connected while it streams.
    public func knownDevices() -> [KnownDevice] {
        sensors.enumerated().filter { !forgotten.contains($0.element) }.map { index, sensor in
            KnownDevice(
                identity: sensor, rssi: -52 - 6 * index, services: [.heartRate, .battery, .deviceInformation],
                trusted: true, bonded: simulations[sensor]?.scenario.bonded == true, connected: isLinked(sensor),
                servicesResolved: isLinked(sensor))
        }
    }

    /// Always ready: the simulator has no radio to lose.
    public func availability() -> AdapterAvailability { .ready }

    /// One simulated radio with no link limit.
    /// The simulator has no link slots to share: priorities change nothing.
    public func setPriority(_ priority: Int?, for address: String) {}

    public func adapterStatuses() -> [AdapterStatus] {
        [
            AdapterStatus(
                name: name, availability: .ready, linksInUse: streaming.filter(isLinked).count,
                sensors: streaming.filter(isLinked).map(\.address).sorted())
        ]
    }

    /// Plays the next simulated second on a stepped adapter: moves ``timeline`` to it, emits every
    /// streaming strap's events of that second (in scenario order, each carrying the second's
    /// time), and returns that time once every subscriber has handled them. One caller steps.
    @discardableResult
    public func step() async -> Date {
        precondition(steppedTimeline != nil, "step() moves a stepped adapter; a clock moves this one")
        let second = playedSecond + 1
        let time = origin.addingTimeInterval(second)
        // Consumers read the timeline while they handle the second (a battery level's date).
        steppedTimeline?.advance(to: time)
        play(second: second)
        await broadcaster.waitUntilConsumed()
        return time
    }

    /// Returns once every subscriber has handled every event emitted so far (``step()`` waits for
    /// its own; this is for those of ``connect(_:)`` and the like).
    public func waitUntilEventsConsumed() async { await broadcaster.waitUntilConsumed() }

    /// Ends the event stream with every frame up to `date` delivered, none after: a clock-driven
    /// adapter plays on to `date` first, however far its consumers lag; a stepped one has
    /// delivered what its steps played.
    public func finish(at date: Date) async {
        if steppedTimeline == nil {
            stopSecond = date.timeIntervalSince(origin).rounded(.down)
            await clockDriver?.value
        }
        stopStreaming()
    }

    /// Stops every strap at once and ends the event stream.
    public func shutdown() {
        clockDriver?.cancel()
        stopStreaming()
    }

    private func stopStreaming() {
        clockDriver = nil
        streaming = []
        broadcaster.finish()
    }

    /// Whether a strap streams over a link (a broadcast-only strap never has one).
    private func isLinked(_ sensor: SensorIdentity) -> Bool {
        streaming.contains(sensor) && simulations[sensor]?.scenario.broadcastOnly == false
    }

    private func announceServices(_ sensor: SensorIdentity, strap: StrapScenario) {
        broadcaster.yield(.servicesReady(sensor, [.heartRate, .battery, .deviceInformation]))
        broadcaster.yield(.connectionChanged(sensor, .ready))
        broadcaster.yield(
            .deviceInformation(
                sensor,
                DeviceInformation(
                    manufacturerName: "hrbridge", modelNumber: "Virtual Strap", serialNumber: strap.address,
                    firmwareRevision: "1.0", hardwareRevision: "sim", softwareRevision: "1.0")))
        broadcaster.yield(.bodySensorLocation(sensor, .chest))
        if strap.pmd != nil { broadcaster.yield(.waveformsAvailable(sensor, [.ecg, .acc])) }
    }

    /// The second a connecting strap catches up to: the last one played, or, while a clock drives
    /// the adapter and nothing streams, the clock's.
    private func secondToJoinAt() -> Double {
        if steppedTimeline == nil && clockDriver == nil {
            playedSecond = max(playedSecond, timeline.now().timeIntervalSince(origin).rounded(.down))
        }
        return playedSecond
    }

    /// The clock-driven adapter's loop: each second plays when the clock reaches it.
    private func playAsTheClockGoes() async {
        while !Task.isCancelled {
            let second = playedSecond + 1
            if let stopSecond, second > stopSecond { return }
            do {
                try await timeline.sleep(until: origin.addingTimeInterval(second))
            } catch {
                return
            }
            // `finish(at:)` may have set the stop while this slept.
            if Task.isCancelled || stopSecond.map({ second > $0 }) == true { return }
            play(second: second)
        }
    }

    /// Plays simulated second `second` on every streaming strap, in scenario order.
    private func play(second: Double) {
        playedSecond = second
        for (index, sensor) in sensors.enumerated() where advertisingAgain.remove(sensor) != nil {
            broadcaster.yield(
                .discovered(
                    DiscoveredSensor(
                        identity: sensor, rssi: -52 - 6 * index, services: [.heartRate, .battery, .deviceInformation])))
        }
        for sensor in sensors where streaming.contains(sensor) {
            guard var simulation = simulations[sensor] else { continue }
            let outputs = simulation.advance(to: second)
            simulations[sensor] = simulation
            for output in outputs { emit(output, for: sensor, strap: simulation.scenario) }
        }
    }

    private func emit(_ output: SimulationOutput, for sensor: SensorIdentity, strap: StrapScenario) {
        if strap.broadcastOnly { return advertise(output, for: sensor) }
        switch output {
        case .frame(let time, let characteristic, let bytes):
            do {
                let value = try GATTValue(characteristic: characteristic, bytes: bytes)
                broadcaster.yield(
                    .measurement(
                        SensorMeasurement(
                            sensor: sensor, characteristic: characteristic, value: value,
                            receivedAt: origin.addingTimeInterval(time), bonded: strap.bonded)))
            } catch {
                // Debug only: the event's consumer logs it, and hides a guest's bytes.
                logger.debug("frame refused", metadata: ["sensor": "\(sensor)", "error": "\(error)"])
                broadcaster.yield(.decodingFailed(sensor, error, bytes: bytes))
            }
        case .disconnected:
            broadcaster.yield(.connectionChanged(sensor, .disconnected(.linkLost)))
        case .reconnected:
            broadcaster.yield(.updated(sensor, rssi: -60))
            broadcaster.yield(.connectionChanged(sensor, .connecting))
            broadcaster.yield(.connectionChanged(sensor, .connected))
            announceServices(sensor, strap: strap)
            for request in (waveformRequests[sensor] ?? [:]).values.sorted(by: { $0.kind < $1.kind }) {
                simulations[sensor]?.startWaveform(request)
            }
        case .battery(_, let percent):
            broadcaster.yield(.batteryLevel(sensor, percent))
        case .waveform(let time, let kind, let bytes):
            emitWaveform(kind, bytes: bytes, receivedAt: origin.addingTimeInterval(time), for: sensor)
        }
    }

    /// A PMD frame through the strict decoder, its samples placed on the timeline by the stream's clock.
    private func emitWaveform(_ kind: WaveformKind, bytes: [UInt8], receivedAt: Date, for sensor: SensorIdentity) {
        guard let request = waveformRequests[sensor]?[kind], var clock = waveformClocks[sensor]?[kind] else { return }
        do {
            let waveform = try SensorWaveform(
                pmd: bytes, request: request, sensor: sensor, receivedAt: receivedAt, clock: &clock)
            waveformClocks[sensor]?[kind] = clock
            broadcaster.yield(.waveform(waveform))
        } catch {
            broadcaster.yield(.waveformRefused(sensor, kind, error))
        }
    }

    /// A broadcast-only strap's second: its heart rate as Polar's 4-byte manufacturer data, read
    /// back through the strict advertisement decoder; out of range (a `disconnect` or `dropout`
    /// fault) it is silent, a `malformedFrame` fault sends a layout the decoder refuses.
    private func advertise(_ output: SimulationOutput, for sensor: SensorIdentity) {
        guard followsAdvertisements else { return }
        switch output {
        case .frame(let time, _, let bytes):
            let payload: [UInt8]
            if case .heartRateMeasurement(let frame)? = try? GATTValue(
                characteristic: .heartRateMeasurement, bytes: bytes)
            {
                let counter = (broadcastCounters[sensor] ?? 0) &+ 1
                broadcastCounters[sensor] = counter
                payload = PolarHeartRateBroadcast(
                    heartRate: UInt8(clamping: frame.heartRate), skinContact: frame.sensorContact != .notDetected,
                    frameCounter: counter
                ).encoded()
            } else {
                payload = [0x20, 0x00]
            }
            do {
                let broadcast = try PolarHeartRateBroadcast(company: PolarHeartRateBroadcast.companyID, bytes: payload)
                let frame = HeartRateMeasurement(
                    heartRate: UInt16(broadcast.heartRate),
                    sensorContact: broadcast.skinContact ? .detected : .notDetected)
                broadcaster.yield(
                    .measurement(
                        SensorMeasurement(
                            sensor: sensor, characteristic: .heartRateMeasurement, value: .heartRateMeasurement(frame),
                            receivedAt: origin.addingTimeInterval(time), via: .advertisement)))
            } catch {
                broadcaster.yield(.advertisementRefused(sensor, error))
            }
        case .reconnected:
            broadcaster.yield(.updated(sensor, rssi: -70))
        case .disconnected, .battery, .waveform:
            break
        }
    }
}
