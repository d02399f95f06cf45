public import Foundation
public import GATT
public import Logging
public import Sensors

/// The simulator as a sensor adapter: virtual straps that advertise, connect, and notify raw
/// frames that go through the same strict decoders as frames from BlueZ. A broadcast-only strap
/// takes no connection: its heart rate comes in Polar-style advertisements, through the strict
/// advertisement decoder, `via: .advertisement`.
///
/// Time comes from the injected ``WallClock``: an accelerated clock gives `--speed 60`, a manual
/// clock gives tests that never sleep. Simulated time zero is the clock's reading at creation.
public actor MockSensorAdapter: SensorAdapter {
    /// `mock`.
    public nonisolated let name: String
    /// The scenario being played.
    public nonisolated let scenario: Scenario
    private let clock: any WallClock
    private let origin: Date
    private let logger: Logger
    private let broadcaster = EventBroadcaster<SensorEvent>()
    private var simulations: [SensorIdentity: StrapSimulation] = [:]
    private var streaming: [SensorIdentity: Task<Void, Never>] = [:]
    private var forgotten: Set<SensorIdentity> = []
    /// Each broadcast-only strap's advertisement frame counter (3 bits, advancing per reading).
    private var broadcastCounters: [SensorIdentity: UInt8] = [:]
    private var stopSecond: Double?

    /// Creates the adapter; `seed` overrides the scenario's.
    public init(scenario: Scenario, seed: UInt64? = nil, clock: any WallClock, name: String = "mock", logger: Logger) {
        self.name = name
        self.scenario = scenario
        self.clock = clock
        self.origin = clock.now()
        self.logger = logger
        let seed = seed ?? scenario.seed
        for (index, strap) in scenario.straps.enumerated() {
            let identity = SensorIdentity(adapter: name, address: strap.address, name: strap.name)
            simulations[identity] = StrapSimulation(scenario: strap, seed: seed &+ UInt64(index) &* 0x9E37_79B9)
        }
    }

    /// Every virtual strap's identity, in scenario order.
    public nonisolated var sensors: [SensorIdentity] {
        scenario.straps.map { SensorIdentity(adapter: name, address: $0.address, name: $0.name) }
    }

    /// Adapter events from now on.
    public nonisolated func events() -> AsyncStream<SensorEvent> { broadcaster.subscribe() }

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
        guard streaming[sensor] == nil else { return }
        if simulation.scenario.broadcastOnly {
            // No link to make: the strap is followed through its advertisements from now on
            // (which carry its name).
            broadcaster.yield(.discovered(DiscoveredSensor(identity: sensor, rssi: -70, services: [])))
            let start = clock.now().timeIntervalSince(origin).rounded(.down)
            simulations[sensor]?.advance(to: start).forEach { _ in }
            streaming[sensor] = Task { [weak self] in await self?.stream(sensor, from: start) }
            return
        }
        broadcaster.yield(.connectionChanged(sensor, .connecting))
        broadcaster.yield(.connectionChanged(sensor, .connected))
        announceServices(sensor, strap: simulation.scenario)
        let start = clock.now().timeIntervalSince(origin).rounded(.down)
        // Catch up silently: the body kept going while nobody listened.
        simulations[sensor]?.advance(to: start).forEach { _ in }
        streaming[sensor] = Task { [weak self] in await self?.stream(sensor, from: start) }
    }

    /// Disconnects a strap.
    public func disconnect(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        guard simulations[sensor] != nil else { throw .unknownSensor(sensor) }
        guard let task = streaming.removeValue(forKey: sensor) else { throw .notConnected(sensor) }
        task.cancel()
        broadcaster.yield(.connectionChanged(sensor, .disconnected(.requested)))
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

    /// Forgets a strap: it disconnects and is no longer discovered until paired again.
    public func forget(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        guard simulations[sensor] != nil else { throw .unknownSensor(sensor) }
        if streaming[sensor] != nil { try disconnect(sensor) }
        forgotten.insert(sensor)
    }

    /// Resets the strap's Energy Expended counter.
    public func resetEnergyExpended(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        guard simulations[sensor] != nil else { throw .unknownSensor(sensor) }
        guard streaming[sensor] != nil else { throw .notConnected(sensor) }
        simulations[sensor]?.resetEnergyExpended()
    }

    /// Every virtual strap not forgotten: trusted (the simulator pairs nothing), connected while it streams.
    public func knownDevices() -> [KnownDevice] {
        sensors.enumerated().filter { !forgotten.contains($0.element) }.map { index, sensor in
            KnownDevice(
                identity: sensor, rssi: -52 - 6 * index, services: [.heartRate, .battery, .deviceInformation],
                trusted: true, connected: isLinked(sensor), servicesResolved: isLinked(sensor))
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
                name: name, availability: .ready, linksInUse: streaming.keys.filter(isLinked).count,
                sensors: streaming.keys.filter(isLinked).map(\.address).sorted())
        ]
    }

    /// Lets every connected strap deliver its frames up to `date`, then ends the event stream.
    ///
    /// At high `--speed` the consumers may lag behind the clock; this makes the end of a run
    /// deterministic: every frame up to `date` is emitted, none after.
    public func finish(at date: Date) async {
        stopSecond = date.timeIntervalSince(origin).rounded(.down)
        let tasks = Array(streaming.values)
        for task in tasks { await task.value }
        streaming = [:]
        broadcaster.finish()
    }

    /// Stops every strap at once and ends the event stream.
    public func shutdown() {
        for task in streaming.values { task.cancel() }
        streaming = [:]
        broadcaster.finish()
    }

    /// Whether a strap streams over a link (a broadcast-only strap never has one).
    private func isLinked(_ sensor: SensorIdentity) -> Bool {
        streaming[sensor] != nil && simulations[sensor]?.scenario.broadcastOnly == false
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
    }

    private func stream(_ sensor: SensorIdentity, from start: Double) async {
        var second = start
        while !Task.isCancelled {
            second += 1
            if let stopSecond, second > stopSecond { return }
            do {
                try await clock.sleep(until: origin.addingTimeInterval(second))
            } catch {
                return
            }
            guard !Task.isCancelled, var simulation = simulations[sensor] else { return }
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
                            receivedAt: origin.addingTimeInterval(time))))
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
        case .battery(_, let percent):
            broadcaster.yield(.batteryLevel(sensor, percent))
        }
    }

    /// A broadcast-only strap's second: its heart rate as Polar's 4-byte manufacturer data, read
    /// back through the strict advertisement decoder; out of range (a `disconnect` or `dropout`
    /// fault) it is silent, a `malformedFrame` fault sends a layout the decoder refuses.
    private func advertise(_ output: SimulationOutput, for sensor: SensorIdentity) {
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
        case .disconnected, .battery:
            break
        }
    }
}
