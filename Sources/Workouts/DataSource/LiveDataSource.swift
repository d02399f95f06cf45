import Foundation
import GATT
public import Logging
public import Samples
public import Sensors
import Synchronization

/// Feeds a builder from sensor adapters, as HealthKit's live data source does.
///
/// Each sensor's frames go through its own ``MeasurementSampler`` (reset on reconnect); samples of
/// types not collected, or from sensors a predicate excludes, are dropped. Decoding failures,
/// implausible heart rates and refused samples are counted and logged, and the stream goes on.
///
/// A data source feeds one builder and runs on the builder's executor: a frame wakes one job that
/// samples it and hands the samples over in place, with no hop between actors.
public actor LiveDataSource {
    /// Counters of what went through.
    public struct Counters: Hashable, Sendable, Codable {
        /// Measurements received.
        public var measurements = 0
        /// Samples handed to the builder.
        public var samplesDelivered = 0
        /// Samples dropped: type not collected, sensor excluded, or refused by the builder.
        public var samplesDropped = 0
        /// Frames the decoders refused.
        public var decodingFailures = 0
        /// Disconnections seen.
        public var disconnections = 0
        /// Raw-signal frames (ECG, acceleration) handed to the waveform sink.
        public var waveformFrames = 0
        /// Heart-rate readings the samplers refused, outside ``MeasurementSampler/plausibleHeartRates``
        /// (65535: a field of noise): no heart-rate sample, the frame's RR intervals kept.
        public var implausibleHeartRates = 0

        /// Nothing counted yet.
        public init() {}

        /// Reads counters, those written before ``implausibleHeartRates`` was kept with 0 of them.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            measurements = try container.decode(Int.self, forKey: .measurements)
            samplesDelivered = try container.decode(Int.self, forKey: .samplesDelivered)
            samplesDropped = try container.decode(Int.self, forKey: .samplesDropped)
            decodingFailures = try container.decode(Int.self, forKey: .decodingFailures)
            disconnections = try container.decode(Int.self, forKey: .disconnections)
            waveformFrames = try container.decode(Int.self, forKey: .waveformFrames)
            implausibleHeartRates = try container.decodeIfPresent(Int.self, forKey: .implausibleHeartRates) ?? 0
        }

        private enum CodingKeys: String, CodingKey {
            case measurements, samplesDelivered, samplesDropped, decodingFailures, disconnections, waveformFrames
            case implausibleHeartRates
        }
    }

    private let adapters: [any SensorAdapter]
    /// The addresses of the only sensors heard (nil: every sensor of the adapters).
    private let addresses: Set<String>?
    private let clock: any WallClock
    private let logger: Logger
    private let logsRefusedFrames: Bool
    private let options: MeasurementSampler.Options
    /// The types collected.
    public private(set) var typesToCollect: Set<QuantityType>
    private var predicates: [QuantityType: @Sendable (SampleSource) -> Bool] = [:]
    private var samplers: [SensorIdentity: MeasurementSampler] = [:]
    /// One per adapter, feeding the builder: ``drain()`` awaits them, ``detach()`` cancels and awaits them.
    private var tasks: [Task<Void, Never>] = []
    private let builder: LiveWorkoutBuilder
    /// Between ``attach()`` and ``detach()``.
    private var feeding = false
    /// Counters so far.
    public private(set) var counters = Counters()
    private let statusBroadcaster = ConsumptionTrackingBroadcaster<SensorEvent>()
    /// Whether ``sensorEvents()`` was ever asked for: until then, frames skip the broadcaster.
    private nonisolated let sensorEventsWanted = Atomic(false)
    /// Where raw-signal frames go while attached (the store's streamer); nil: they are not kept.
    private let waveformSink: (@Sendable (SensorWaveform) -> Void)?

    /// Creates a data source for `builder`; `typesToCollect` defaults to the activity's types. With
    /// `addresses`, only those sensors' events are heard at all (routed by the adapter, never
    /// sampled to be dropped).
    ///
    /// With `logsRefusedFrames` false, refused frames are only counted: the caller logs them
    /// (the daemon's sensor manager does, once per frame, hiding a guest's bytes).
    public init(
        builder: LiveWorkoutBuilder, adapters: [any SensorAdapter], configuration: WorkoutConfiguration,
        clock: any WallClock,
        addresses: Set<String>? = nil, options: MeasurementSampler.Options = MeasurementSampler.Options(),
        logsRefusedFrames: Bool = true, waveformSink: (@Sendable (SensorWaveform) -> Void)? = nil, logger: Logger
    ) {
        self.builder = builder
        self.waveformSink = waveformSink
        self.logsRefusedFrames = logsRefusedFrames
        self.adapters = adapters
        self.addresses = addresses
        self.clock = clock
        self.options = options
        self.logger = logger
        self.typesToCollect = configuration.activityType.defaultTypesToCollect
    }

    /// The builder's executor: what the data source hands over, the builder takes in place.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { builder.unownedExecutor }

    /// Collects `type`, only from sources `predicate` accepts when given (e.g. only this strap).
    public func enableCollection(for type: QuantityType, predicate: (@Sendable (SampleSource) -> Bool)? = nil) {
        typesToCollect.insert(type)
        predicates[type] = predicate
    }

    /// Stops collecting `type`.
    public func disableCollection(for type: QuantityType) {
        typesToCollect.remove(type)
        predicates[type] = nil
    }

    /// Every adapter event that passes through, for live views (sensor state, battery, errors).
    public nonisolated func sensorEvents() -> AsyncStream<SensorEvent> {
        sensorEventsWanted.store(true, ordering: .releasing)
        return statusBroadcaster.subscribe()
    }

    /// Returns once every ``sensorEvents()`` subscriber has handled every event passed on so far:
    /// a stepped simulation waits for this too, so a live view sees each second before the next.
    public nonisolated func waitUntilSensorEventsConsumed() async { await statusBroadcaster.waitUntilConsumed() }

    /// Starts feeding the builder from every adapter, until ``detach()``, or ``drain()`` once the
    /// adapters' streams end.
    public func attach() {
        guard !feeding else { return }
        feeding = true
        for adapter in adapters {
            let events = addresses.map { adapter.events(from: $0) } ?? adapter.events()
            tasks.append(Task { await self.consume(events) })
        }
    }

    /// Handles an adapter's events on this actor's executor: a frame resumes this loop directly.
    private func consume(_ events: AsyncStream<SensorEvent>) async {
        for await event in events {
            guard !Task.isCancelled else { return }
            handle(event)
        }
    }

    /// Waits until every adapter's event stream has ended and been handled, then closes
    /// ``sensorEvents()``: nothing the adapters sent is lost.
    public func drain() async {
        let running = tasks
        for task in running { await task.value }
        tasks = []
        statusBroadcaster.finish()
    }

    /// Stops feeding the builder at once, and returns once the adapters' tasks have ended.
    public func detach() async {
        let running = tasks
        for task in running { task.cancel() }
        tasks = []
        feeding = false
        statusBroadcaster.finish()
        for task in running { await task.value }
    }

    /// Handles one adapter event (public so tests and the daemon can inject events directly).
    public func handle(_ event: SensorEvent) {
        if sensorEventsWanted.load(ordering: .acquiring) { statusBroadcaster.yield(event) }
        switch event {
        case .measurement(let measurement):
            counters.measurements += 1
            deliver(measurement)
        case .connectionChanged(let sensor, .disconnected(let reason)):
            counters.disconnections += 1
            samplers[sensor]?.reset()
            logger.info("sensor disconnected", metadata: ["sensor": "\(sensor)", "reason": "\(reason)"])
        case .decodingFailed(let sensor, let error, let bytes):
            counters.decodingFailures += 1
            guard logsRefusedFrames else { return }
            logger.warning(
                "frame refused",
                metadata: [
                    "sensor": "\(sensor)", "error": "\(error)",
                    "bytes": "\(bytes.map { String($0, radix: 16) }.joined(separator: " "))",
                ])
        case .waveform(let waveform):
            // Only while feeding a builder: a detached source keeps nothing.
            guard feeding, let waveformSink else { return }
            counters.waveformFrames += 1
            waveformSink(waveform)
        case .batteryLevel(let sensor, let percent):
            deliver(
                SensorMeasurement(
                    sensor: sensor, characteristic: .batteryLevel, value: .batteryLevel(BatteryLevel(percent: percent)),
                    receivedAt: clock.now()))
        default:
            break
        }
    }

    private func deliver(_ measurement: SensorMeasurement) {
        let sensor = measurement.sensor
        // Sampled in place: copying a sampler out of the dictionary and back costs more than sampling.
        let sampled = Self.sample(
            measurement,
            with: &samplers[
                sensor,
                default: MeasurementSampler(
                    source: SampleSource(adapter: sensor.adapter, address: sensor.address, name: sensor.name),
                    options: options)
            ])
        if let implausible = sampled.implausible {
            countImplausibleHeartRate(implausible.bpm, from: sensor, refusedSoFar: implausible.refusedSoFar)
        }
        let produced = sampled.samples
        let accepted = produced.allSatisfy(isCollected) ? produced : produced.filter(isCollected)
        counters.samplesDropped += produced.count - accepted.count
        guard !accepted.isEmpty, feeding else { return }
        do {
            // Same executor (``unownedExecutor``): the builder takes the samples without a hop.
            let early = try builder.assumeIsolated { builder in try builder.addLive(accepted) }
            counters.samplesDelivered += accepted.count - early
            counters.samplesDropped += early
        } catch {
            counters.samplesDropped += accepted.count
            logger.debug("samples refused by the builder", metadata: ["error": "\(error)"])
        }
    }

    /// The samples of one frame, and the heart rate `sampler` refused in it as implausible, if it
    /// did, with how many that sampler has refused so far.
    private static func sample(
        _ measurement: SensorMeasurement, with sampler: inout MeasurementSampler
    ) -> (samples: [QuantitySample], implausible: (bpm: Int, refusedSoFar: Int)?) {
        let refusedBefore = sampler.implausibleHeartRates
        let samples = sampler.samples(from: measurement.value, receivedAt: measurement.receivedAt, via: measurement.via)
        guard sampler.implausibleHeartRates > refusedBefore, let bpm = sampler.lastImplausibleHeartRate else {
            return (samples: samples, implausible: nil)
        }
        return (samples: samples, implausible: (bpm: bpm, refusedSoFar: sampler.implausibleHeartRates))
    }

    /// Counts a heart rate a sampler refused; logs it unless the caller logs refusals: a strap's
    /// first at warning, later ones at debug (a strap gone wrong may send 65535 every second).
    private func countImplausibleHeartRate(_ bpm: Int, from sensor: SensorIdentity, refusedSoFar: Int) {
        counters.implausibleHeartRates += 1
        guard logsRefusedFrames else { return }
        // Numbers only: a strap's name is whatever it advertises.
        logger.log(
            level: refusedSoFar == 1 ? .warning : .debug, "implausible heart rate refused",
            metadata: ["sensor": "\(sensor.address)", "bpm": "\(bpm)", "refused": "\(refusedSoFar)"])
    }

    private func isCollected(_ sample: QuantitySample) -> Bool {
        typesToCollect.contains(sample.type) && (predicates[sample.type]?(sample.source) ?? true)
    }
}
