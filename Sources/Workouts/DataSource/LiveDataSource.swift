import Foundation
import GATT
public import Logging
public import Samples
public import Sensors
import Synchronization

/// Feeds a builder from sensor adapters, as HealthKit's live data source does.
///
/// Each sensor's frames go through its own ``MeasurementSampler`` (reset on reconnect); samples of
/// types not collected, or from sensors a predicate excludes, are dropped. Decoding failures and
/// refused samples are counted and logged, and the stream goes on.
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
    private weak var builder: LiveWorkoutBuilder?
    /// Counters so far.
    public private(set) var counters = Counters()
    private let statusBroadcaster = ConsumptionTrackingBroadcaster<SensorEvent>()
    /// Whether ``sensorEvents()`` was ever asked for: until then, frames skip the broadcaster.
    private nonisolated let sensorEventsWanted = Atomic(false)
    /// Where raw-signal frames go while attached (the store's streamer); nil: they are not kept.
    private let waveformSink: (@Sendable (SensorWaveform) -> Void)?

    /// Creates a data source; `typesToCollect` defaults to the activity's types. With `addresses`,
    /// only those sensors' events are heard at all (routed by the adapter, never sampled to be dropped).
    ///
    /// With `logsRefusedFrames` false, refused frames are only counted: the caller logs them
    /// (the daemon's sensor manager does, once per frame, hiding a guest's bytes).
    public init(
        adapters: [any SensorAdapter], configuration: WorkoutConfiguration, clock: any WallClock,
        addresses: Set<String>? = nil, options: MeasurementSampler.Options = MeasurementSampler.Options(),
        logsRefusedFrames: Bool = true, waveformSink: (@Sendable (SensorWaveform) -> Void)? = nil, logger: Logger
    ) {
        self.waveformSink = waveformSink
        self.logsRefusedFrames = logsRefusedFrames
        self.adapters = adapters
        self.addresses = addresses
        self.clock = clock
        self.options = options
        self.logger = logger
        self.typesToCollect = configuration.activityType.defaultTypesToCollect
    }

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

    /// Starts feeding `builder` from every adapter.
    public func attach(to builder: LiveWorkoutBuilder) {
        self.builder = builder
        for adapter in adapters {
            let events = addresses.map { adapter.events(from: $0) } ?? adapter.events()
            tasks.append(
                Task { [weak self] in
                    for await event in events {
                        guard let self else { return }
                        await self.handle(event)
                    }
                })
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
        builder = nil
        statusBroadcaster.finish()
        for task in running { await task.value }
    }

    /// Handles one adapter event (public so tests and the daemon can inject events directly).
    public func handle(_ event: SensorEvent) async {
        if sensorEventsWanted.load(ordering: .acquiring) { statusBroadcaster.yield(event) }
        switch event {
        case .measurement(let measurement):
            counters.measurements += 1
            await deliver(measurement)
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
            guard builder != nil, let waveformSink else { return }
            counters.waveformFrames += 1
            waveformSink(waveform)
        case .batteryLevel(let sensor, let percent):
            await deliver(
                SensorMeasurement(
                    sensor: sensor, characteristic: .batteryLevel, value: .batteryLevel(BatteryLevel(percent: percent)),
                    receivedAt: clock.now()), countsAsMeasurement: false)
        default:
            break
        }
    }

    private func deliver(_ measurement: SensorMeasurement, countsAsMeasurement: Bool = true) async {
        let sensor = measurement.sensor
        var sampler =
            samplers[sensor]
            ?? MeasurementSampler(
                source: SampleSource(adapter: sensor.adapter, address: sensor.address, name: sensor.name),
                options: options)
        let produced = sampler.samples(
            from: measurement.value, receivedAt: measurement.receivedAt, via: measurement.via)
        samplers[sensor] = sampler
        let accepted = produced.filter { sample in
            typesToCollect.contains(sample.type) && (predicates[sample.type]?(sample.source) ?? true)
        }
        counters.samplesDropped += produced.count - accepted.count
        guard !accepted.isEmpty, let builder else { return }
        do {
            let early = try await builder.addLive(accepted)
            counters.samplesDelivered += accepted.count - early
            counters.samplesDropped += early
        } catch {
            counters.samplesDropped += accepted.count
            logger.debug("samples refused by the builder", metadata: ["error": "\(error)"])
        }
    }
}
