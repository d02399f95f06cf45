import Foundation
public import GATT
public import Logging
public import MQTT
import Metrics
public import Sensors
import Wire

/// Sensors heard through other gateways: the measurements they publish on an MQTT broker
/// (`[mqtt] publish_measurements`), as a sensor adapter. To everything above it a remote strap is
/// a sensor like a linked one; its identity's adapter is the gateway's node name.
///
/// The bookkeeping (ready from the first measurement; sequence gaps, moves between gateways, the
/// Will, availability and silence drop it) is ``RemoteStrapTracker``'s; this actor parses the
/// broker's messages, feeds the tracker, carries out its actions and wakes it at its deadline.
/// Nothing from the broker is trusted: topics (``Topic``) and payloads are checked, names are
/// bounded, and at most ``Settings/sensorLimit`` straps are followed.
public actor MQTTSensorAdapter: SensorAdapter {
    /// Where the measurements come from.
    public struct Settings: Sendable {
        /// The broker (and its credentials, TLS files).
        public var client: MQTTClient.Options
        /// Only these gateways (nil: every one).
        public var nodes: Set<String>?
        /// Seconds without a measurement before a ready strap counts as gone.
        public var expire: Double = 10
        /// The most straps followed at once.
        public var sensorLimit = 1000
        /// Seconds a frame may be dated ahead of the hub's clock.
        public var maximumSkew: Double = 5
        /// Straps bound to a gateway (`[[sensors]] node`), by address.
        public var owners: [String: String] = [:]
        /// Backfill frames a gateway may send per minute.
        public var backfillBudget = 30_000
        /// The gateways' keys, by node: when there are any, a measurement or backfill message, and
        /// an `offline` on a gateway's status or a strap's availability, is read only with a valid
        /// tag from its node's key (a node without one is refused), a measurement only with its
        /// gateway's boot.
        public var keys: [String: EnvelopeSigner] = [:]
        /// The next keys of gateways being given a new one, by node (each beside its key in
        /// ``keys``): both are read until the gateway's first message tagged with the next key,
        /// then only that one (``GatewayKeyring``).
        public var nextKeys: [String: EnvelopeSigner] = [:]
        /// Gateways already heard signing with their next key (kept by an earlier run): only that
        /// key is read from the start.
        public var switchedKeys: Set<String> = []
        /// Keeps the record of switched gateways whenever one switches (nil: kept in memory only);
        /// called off the adapter, in a task of its own.
        public var recordKeySwitches: (@Sendable (KeySwitchRecord) async -> Void)?

        public init(client: MQTTClient.Options, nodes: Set<String>? = nil) {
            self.client = client
            self.nodes = nodes
        }
    }

    /// What the wake-up loop does next.
    private enum WakeUp {
        /// Sleep until the date, then tell the tracker the time.
        case at(Date)
        /// No strap streams: wait for the doorbell.
        case whenRung
    }

    /// `mqtt`.
    public nonisolated let name = "mqtt"
    private let settings: Settings
    private let client: MQTTClient
    private let clock: any WallClock
    private let logger: Logger
    private let broadcaster = EventBroadcaster<SensorEvent>(routingKey: \.sensorAddress)
    private let backfills = EventBroadcaster<[SensorMeasurement]>()
    private let backfilled = Counter(label: "hrbridge_remote_backfill_frames_total")
    private var tracker: RemoteStrapTracker
    /// The broker's events and the wake-up, from ``start()`` until ``shutdown()``.
    private var run: Task<Void, Never>?
    /// The deadline the wake-up sleeps until (nil: it waits for the doorbell). Tests wait for it
    /// before they move their clock.
    private(set) var armedDeadline: Date?
    /// Rung when a strap starts streaming while no wake-up is armed.
    private let doorbell: AsyncStream<Void>.Continuation
    private let rings: AsyncStream<Void>
    private var connected = false
    private let refused = Counter(label: "hrbridge_remote_measurements_refused_total")
    private let gaps = Counter(label: "hrbridge_remote_sequence_gaps_total")
    private let replayRequests = Counter(label: "hrbridge_remote_replay_requests_total")
    /// `node/reason` of the refusals logged once.
    private var refusalLog = RefusalLog()
    /// Refusals counted so far, by reason (``RemoteMeasurementError/metricName``: a fixed set), as
    /// `hrbridge_remote_refused_total` counts them; for tests.
    private(set) var refusals: [String: Int] = [:]
    /// Each keyed gateway's keys, and whether it has moved on to its next one.
    private var keyrings: [String: GatewayKeyring]
    /// The last write of the record of switched keys (``Settings/recordKeySwitches``).
    private var keySwitchWrite: Task<Void, Never>?

    public init(settings: Settings, clock: any WallClock, logger: Logger) throws(MQTTError) {
        self.settings = settings
        keyrings = settings.keys.mapValues { GatewayKeyring(current: $0) }
        for (node, next) in settings.nextKeys {
            // A next key alone is no key: the configuration refuses it.
            guard let current = settings.keys[node] else { continue }
            keyrings[node] = GatewayKeyring(
                current: current, next: next, switched: settings.switchedKeys.contains(node))
        }
        self.clock = clock
        self.logger = logger
        tracker = RemoteStrapTracker(
            configuration: .init(
                expire: settings.expire, sensorLimit: settings.sensorLimit, maximumSkew: settings.maximumSkew,
                owners: settings.owners, backfillBudget: settings.backfillBudget))
        (rings, doorbell) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        client = try MQTTClient(options: settings.client, logger: logger)
    }

    /// Subscribes and connects; the broker may come later (libmosquitto keeps trying).
    public func start() async throws(MQTTError) {
        for leaf in Topic.SensorLeaf.allCases {
            await client.subscribe(
                TopicFilter.everySensor(leaf).string, qos: leaf == .measurement ? .atMostOnce : .atLeastOnce)
        }
        await client.subscribe(TopicFilter.everyStatus.string)
        let events = client.events
        run = Task { [weak self, clock, rings] in
            await withDiscardingTaskGroup { group in
                group.addTask { [weak self] in
                    for await event in events { await self?.handle(event) }
                }
                group.addTask { [weak self] in
                    // One wake-up, at the tracker's deadline. While the clock runs forward the
                    // deadline only moves later (a measurement pushes its strap's silence out), so
                    // the one armed is never late: woken early, the loop arms the next one. (A wall
                    // clock set back can make it late, by at most `expire`.)
                    var doorbell = rings.makeAsyncIterator()
                    while let wakeUp = await self?.armWakeUp() {
                        switch wakeUp {
                        case .at(let deadline):
                            do {
                                try await clock.sleep(until: deadline)
                            } catch {
                                return
                            }
                            await self?.feed(.timePassed)
                        case .whenRung:
                            guard await doorbell.next() != nil else { return }
                        }
                    }
                }
            }
        }
        try await client.start()
    }

    /// Disconnects from the broker and ends the event stream.
    public func shutdown() async {
        run?.cancel()
        doorbell.finish()
        await client.stop()
        await run?.value
        run = nil
        broadcaster.finish()
        backfills.finish()
        // A switch heard just before the stop is kept.
        await keySwitchWrite?.value
    }

    /// Returns once the record of switched keys holds every switch heard so far (for tests).
    func keySwitchesRecorded() async { await keySwitchWrite?.value }

    public nonisolated func events() -> AsyncStream<SensorEvent> { broadcaster.subscribe() }
    /// The events of the sensors at `addresses` and the adapter's own, routed: nothing else is queued.
    public nonisolated func events(from addresses: Set<String>) -> AsyncStream<SensorEvent> {
        broadcaster.subscribe(keys: addresses)
    }

    /// Frames a gateway sends again from its journal after the broker was away (`backfill`),
    /// decoded, a strap's batch at a time. They are late: for the store, not for the live view.
    public nonisolated func backfill() -> AsyncStream<[SensorMeasurement]> { backfills.subscribe() }

    // MARK: The tracker

    /// Tells the tracker `input`, now, and carries out what it says.
    func feed(_ input: RemoteStrapTracker.Input) {
        for action in tracker.handle(input, at: clock.now()) {
            switch action {
            case .emit(let event):
                broadcaster.yield(event)
            case .sequenceGap(let sensor, let missing):
                gaps.increment()
                logger.info("sequence gap", metadata: ["sensor": "\(sensor.address)", "missing": "\(missing)"])
            case .moved(let address, let from, let to):
                logger.info(
                    "strap heard through another gateway",
                    metadata: ["sensor": "\(address)", "from": "\(from)", "to": "\(to)"])
            case .limitReached(_, let node):
                refuse(.badTopic("hrbridge/\(node)/sensor/…: more than \(settings.sensorLimit) straps"), node: node)
            case .refused(let error, _, let node):
                refuse(error, node: node)
            case .evicted(let address):
                logger.notice(
                    "strap forgotten to make room: silent longest, at the strap limit",
                    metadata: ["sensor": "\(address)", "limit": "\(settings.sensorLimit)"])
            case .cannotResume(let address, let node):
                logger.warning(
                    "what the hub missed of a recovered session's strap while it was down cannot be asked for: its first recorded frame is not known, it came through another gateway, or too many wait",
                    metadata: ["sensor": "\(address)", "node": "\(node)"])
            case .askForReplay(let request, let node):
                replayRequests.increment()
                logger.debug(
                    "asking a gateway for a gap again",
                    metadata: [
                        "sensor": "\(request.address)", "node": "\(node)", "from": "\(request.from)",
                        "to": "\(request.to)",
                    ])
                let topic = ReplayRequest.topic(node: node)
                let message = MQTTMessage(
                    topic: topic, payload: request.payload(topic: topic, signer: keyrings[node]?.signer),
                    qos: .atLeastOnce,
                    retain: false)
                let client = client
                Task { await client.publish(message) }
            }
        }
        // Only when none is armed: an armed wake-up is never late (see `start`).
        if armedDeadline == nil, tracker.nextDeadline != nil { doorbell.yield() }
    }

    /// The wake-up loop's next step; the deadline is noted for tests.
    private func armWakeUp() -> WakeUp {
        armedDeadline = tracker.nextDeadline
        return armedDeadline.map(WakeUp.at) ?? .whenRung
    }

    // MARK: Broker messages

    private func handle(_ event: MQTTClient.Event) {
        switch event {
        case .connected:
            connected = true
            broadcaster.yield(.adapterChanged(name, .ready))
        case .disconnected(let why):
            connected = false
            logger.warning("broker connection lost", metadata: ["reason": "\(why)"])
            broadcaster.yield(.adapterChanged(name, .serviceStopped))
            feed(.brokerLost)
        case .message(let message):
            receive(message)
        case .refused(let topic, let bytes):
            // Counted; the client warned of the first (anyone may send these in a loop).
            refused.increment()
            logger.debug("oversized message refused", metadata: ["topic": "\(topic.prefix(120))", "bytes": "\(bytes)"])
        }
    }

    /// Reads one message from the broker (tests feed it directly).
    func receive(_ message: MQTTMessage) {
        let topic: Topic
        do {
            topic = try Topic.parse(message.topic)
        } catch {
            refuse(.badTopic(message.topic), node: "?", because: error)
            return
        }
        switch topic {
        case .status(let node) where follows(node):
            // Its Will or farewell (every strap it forwarded is gone), or its `online`.
            status(message, address: nil, node: node)
        case .sensor(let node, let address, let leaf) where follows(node):
            switch leaf {
            case .measurement:
                guard let payload = verified(message, node: node, batch: false) else { return }
                measured(payload, address: address, node: node)
            case .availability: status(message, address: address, node: node)
            case .state: noteName(message.payload, address: address, node: node)
            case .backfill:
                guard let payload = verified(message, node: node, batch: true) else { return }
                backfill(payload, address: address, node: node)
            }
        default:
            // Another gateway than those followed, or a topic not subscribed to.
            break
        }
    }

    /// Whether `node`'s messages are read.
    private func follows(_ node: String) -> Bool { settings.nodes?.contains(node) ?? true }

    /// The payload to read: as it came when no gateway has a key; with keys, only one whose tag
    /// is valid for its node's key (a batch without its trailer).
    private func verified(_ message: MQTTMessage, node: String, batch: Bool) -> [UInt8]? {
        guard !settings.keys.isEmpty else { return message.payload }
        let payload = verify(node) { key in
            batch
                ? key.verifiedBatch(message.payload, topic: message.topic)
                : key.verifiedMeasurement(message.payload, topic: message.topic)
        }
        if payload == nil { refuse(.badSignature, node: node) }
        return payload
    }

    /// What `read` makes of a message of `node` with a key that node may use (nil: none verifies
    /// it, or the node has no key); the gateway's first message with its next key is logged, as
    /// from then on its old key is refused.
    private func verify<Value>(_ node: String, _ read: (EnvelopeSigner) -> Value?) -> Value? {
        guard let (value, match) = keyrings[node]?.verify(read) else { return nil }
        if match == .switchedToNext {
            logger.notice(
                "gateway signs with its next key: its old key is refused from now on (rename <node>.next.key to <node>.key)",
                metadata: ["node": "\(node)"])
            if let record = settings.recordKeySwitches {
                let switched = KeySwitchRecord(fingerprints: keyrings.compactMapValues(\.switchedFingerprint))
                // One after another: a later record never lands before an earlier one.
                keySwitchWrite = Task { [previous = keySwitchWrite] in
                    await previous?.value
                    await record(switched)
                }
            }
        }
        return value
    }

    private func measured(_ payload: [UInt8], address: String, node: String) {
        do {
            var measurement = try RemoteMeasurement(payload: payload)
            if settings.keys.isEmpty {
                // Unchecked, a boot could be anyone's: one made up high would lock the gateway's
                // real frames out.
                measurement.boot = nil
            } else if measurement.boot == nil {
                // Without its boot, a frame captured before its gateway restarts could be sent
                // again as live after it (its sequence numbers start over).
                refuse(.badBoot(nil), node: node)
                return
            }
            feed(.envelope(measurement, address: address, node: node))
        } catch {
            refuse(error, node: node)
        }
    }

    /// A gateway's `offline` on its status (its Will or farewell: every strap it forwarded is
    /// gone) or on the availability of the strap at `address`; without keys, any other word
    /// changes nothing. With keys, only a status with a valid tag from its node's key is read (any
    /// other is refused: on a broker without ACLs anyone can publish one), and the tracker checks
    /// its boot and time; a signed `online` tells the tracker its boot has begun.
    private func status(_ message: MQTTMessage, address: String?, node: String) {
        let input: RemoteStrapTracker.Input
        if settings.keys.isEmpty {
            // As it came (a signed one's tag unchecked).
            guard GatewayStatus(payload: message.payload)?.word == .offline else { return }
            if let address {
                input = .strapOffline(address: address, node: node)
            } else {
                input = .gatewayOffline(node: node)
            }
        } else {
            guard let status = verify(node, { $0.verifiedStatus(message.payload, topic: message.topic) }),
                let boot = status.boot, let sent = status.sent
            else {
                // An `online` that does not verify, or an emptied retained topic, changes nothing:
                // no refusal.
                if GatewayStatus.saysOffline(message.payload) { refuse(.badSignature, node: node) }
                return
            }
            switch status.word {
            case .offline: input = .signedOffline(address: address, node: node, boot: boot, sent: sent)
            // Its boot has begun: frames of the one before are stale from now on.
            case .online: input = .signedOnline(node: node, boot: boot, sent: sent)
            }
        }
        feed(input)
    }

    private func backfill(_ payload: [UInt8], address: String, node: String) {
        let frames: [RemoteMeasurement]
        do {
            frames = try RemoteBackfill.decode(payload)
        } catch {
            refuse(error, node: node)
            return
        }
        let (measurements, refusals) = tracker.admitBackfill(frames, address: address, node: node, at: clock.now())
        // A refused batch is up to 512 refusals: counted by reason, not one by one.
        var byReason: [String: (error: RemoteMeasurementError, count: Int)] = [:]
        for refusal in refusals { byReason[refusal.metricName, default: (refusal, 0)].count += 1 }
        for (_, refusal) in byReason.sorted(by: { $0.key < $1.key }) {
            refuse(refusal.error, node: node, count: refusal.count)
        }
        backfilled.increment(by: measurements.count)
        if !measurements.isEmpty { backfills.yield(measurements) }
    }

    /// The name in a gateway's retained state (`{"name": …}`); the tracker bounds it.
    private func noteName(_ payload: [UInt8], address: String, node: String) {
        // A gateway's state is not signed (Home Assistant reads it): with keys, only a gateway
        // that has one may name a strap.
        guard settings.keys.isEmpty || settings.keys[node] != nil else {
            refuse(.badSignature, node: node)
            return
        }
        guard payload.count <= 16 * 1024, let name = try? JSONDecoder().decode(NameOnly.self, from: Data(payload)).name
        else { return }
        feed(.named(address: address, name: name, node: node))
    }

    /// The one field of a gateway's state read here.
    private struct NameOnly: Decodable {
        var name: String?
    }

    /// Counts a refusal by reason; logs the first of each reason per gateway (a forger must not
    /// flood the journal: past ``RefusalLog/capacity`` of them, new ones at debug level only).
    private func refuse(
        _ error: RemoteMeasurementError, node: String, count: Int = 1, because reason: TopicError? = nil
    ) {
        refused.increment(by: count)
        Counter(label: "hrbridge_remote_refused_total", dimensions: [("reason", error.metricName)])
            .increment(by: count)
        refusals[error.metricName, default: 0] += count
        let level = refusalLog.level(for: "\(node.prefix(64))/\(error.metricName)")
        guard level != .counted else { return }
        let metadata: Logger.Metadata = [
            "node": "\(node.prefix(64))", "error": "\(reason.map(String.init(describing:)) ?? "\(error)")",
        ]
        switch level {
        case .counted:
            return
        case .notice:
            logger.notice(
                "remote measurement refused (further ones from this gateway for this reason are only counted)",
                metadata: metadata)
        case .noticeFull:
            // Once, so the journal says why new gateways' refusals stop showing.
            logger.notice(
                "remote measurement refused (\(refusalLog.capacity) gateway/reason pairs logged; new ones: debug only)",
                metadata: metadata)
        case .debug:
            logger.debug("remote measurement refused", metadata: metadata)
        }
    }

    // MARK: SensorAdapter

    /// Every remote strap is announced as it is heard: nothing to start.
    public func startDiscovery(services: Set<GATTService>) throws(SensorAdapterError) {}
    public func stopDiscovery() throws(SensorAdapterError) {}
    /// A remote strap is followed whenever its gateway forwards it: nothing to connect.
    public func connect(_ sensor: SensorIdentity) throws(SensorAdapterError) {}
    public func disconnect(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        throw .failed(name: "remote", message: "\(sensor.address) is linked to gateway \(sensor.adapter), not here")
    }
    public func pair(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        throw .failed(name: "remote", message: "pair \(sensor.address) on its gateway")
    }
    public func trust(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        throw .failed(name: "remote", message: "trust \(sensor.address) on its gateway")
    }
    /// Raw signals stay on the gateway linked to the strap (130 Hz is not for the broker).
    public func startWaveform(_ request: WaveformRequest, for sensor: SensorIdentity) throws(SensorAdapterError) {
        throw .waveformUnavailable(sensor, request.kind, "raw signals are streamed on the strap's gateway, not relayed")
    }
    public func stopWaveform(_ kind: WaveformKind, for sensor: SensorIdentity) throws(SensorAdapterError) {}
    /// Stops showing a strap until it is heard again.
    public func forget(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        feed(.forgotten(address: sensor.address))
    }

    /// The straps heard so far (trusted: a gateway forwards only what its owner keeps connected).
    public func knownDevices() -> [KnownDevice] {
        tracker.straps.values.map { strap in
            KnownDevice(
                identity: strap.identity, rssi: nil, services: [.heartRate], trusted: true, connected: strap.isReady,
                servicesResolved: strap.isReady)
        }
    }

    /// Ready while the broker is connected.
    public func availability() -> AdapterAvailability { connected ? .ready : .serviceStopped }

    /// One status per gateway heard: its straps streaming.
    public func adapterStatuses() -> [AdapterStatus] {
        let byNode = Dictionary(grouping: tracker.straps.values, by: \.identity.adapter)
        return byNode.keys.sorted().map { node in
            let ready = byNode[node, default: []].filter(\.isReady).map(\.identity.address).sorted()
            return AdapterStatus(
                name: node, availability: connected ? .ready : .serviceStopped, linksInUse: ready.count,
                sensors: ready)
        }
    }

    /// Link slots are the gateways' business.
    public func setPriority(_ priority: Int?, for address: String) {}
}
