import Foundation
public import GATT
public import Logging
public import MQTT
import Metrics
public import Sensors

/// Sensors heard through other gateways: the measurements they publish on an MQTT broker
/// (`[mqtt] publish_measurements`), as a sensor adapter. To everything above it a remote strap is
/// a sensor like a linked one; its identity's adapter is the gateway's node name.
///
/// A strap is ready from its first measurement; it drops (`linkLost`) when its gateway's Will says
/// `offline`, when its availability topic says `offline`, and (`timeout`) when nothing came for
/// ``Settings/expire`` seconds. A jump in its sequence numbers is a gap: the same drop and return
/// a lost link makes. Nothing from the broker is trusted: topics and payloads are checked, names
/// are bounded, and at most ``Settings/sensorLimit`` straps are followed.
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

        public init(client: MQTTClient.Options, nodes: Set<String>? = nil) {
            self.client = client
            self.nodes = nodes
        }
    }

    private struct Remote {
        var identity: SensorIdentity
        var ready = false
        var lastSequence: UInt32?
        var lastHeard: Date?
    }

    /// `mqtt`.
    public nonisolated let name = "mqtt"
    private let settings: Settings
    private let client: MQTTClient
    private let clock: any WallClock
    private let logger: Logger
    private let broadcaster = EventBroadcaster<SensorEvent>()
    private let backfills = EventBroadcaster<[SensorMeasurement]>()
    private let backfilled = Counter(label: "hrbridge_remote_backfill_frames_total")
    private var remotes: [String: Remote] = [:]
    private var names: [String: String] = [:]
    private var tasks: [Task<Void, Never>] = []
    private var connected = false
    private let refused = Counter(label: "hrbridge_remote_measurements_refused_total")
    private let gaps = Counter(label: "hrbridge_remote_sequence_gaps_total")

    public init(settings: Settings, clock: any WallClock, logger: Logger) throws(MQTTError) {
        self.settings = settings
        self.clock = clock
        self.logger = logger
        client = try MQTTClient(options: settings.client, logger: logger)
    }

    /// Subscribes and connects; the broker may come later (libmosquitto keeps trying).
    public func start() async throws(MQTTError) {
        for leaf in ["measurement", "availability", "state", "backfill"] {
            await client.subscribe(
                "hrbridge/+/sensor/+/\(leaf)", qos: leaf == "measurement" ? .atMostOnce : .atLeastOnce)
        }
        await client.subscribe("hrbridge/+/status")
        let events = client.events
        tasks.append(
            Task { [weak self] in
                for await event in events { await self?.handle(event) }
            })
        let clock = clock
        tasks.append(
            Task { [weak self] in
                while !Task.isCancelled {
                    do {
                        try await clock.sleep(until: clock.now().addingTimeInterval(1))
                    } catch {
                        return
                    }
                    await self?.expireSilent()
                }
            })
        try await client.start()
    }

    /// Disconnects from the broker and ends the event stream.
    public func shutdown() async {
        for task in tasks { task.cancel() }
        await client.stop()
        broadcaster.finish()
        backfills.finish()
    }

    public nonisolated func events() -> AsyncStream<SensorEvent> { broadcaster.subscribe() }

    /// Frames a gateway sends again from its journal after the broker was away (`backfill`),
    /// decoded, a strap's batch at a time. They are late: for the store, not for the live view.
    public nonisolated func backfill() -> AsyncStream<[SensorMeasurement]> { backfills.subscribe() }

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
            for address in remotes.keys { drop(address, .adapterUnavailable) }
        case .message(let message):
            receive(message)
        case .refused(let topic, let bytes):
            refused.increment()
            logger.info("oversized message refused", metadata: ["topic": "\(topic.prefix(120))", "bytes": "\(bytes)"])
        }
    }

    private func receive(_ message: MQTTMessage) {
        let parts = message.topic.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] == "hrbridge" else { return }
        let node = String(parts[1])
        guard Self.isNodeName(node), settings.nodes?.contains(node) ?? true else { return }
        if parts.count == 3, parts[2] == "status" {
            // The gateway's Will (or its farewell): every strap it forwarded is gone.
            if message.text == "offline" {
                for (address, remote) in remotes where remote.identity.adapter == node { drop(address, .linkLost) }
            }
            return
        }
        guard parts.count == 5, parts[2] == "sensor", let address = Self.address(fromObjectID: parts[3]) else {
            refuse(.badTopic(message.topic), node: node)
            return
        }
        switch parts[4] {
        case "measurement": measured(message.payload, address: address, node: node)
        case "availability": if message.text == "offline" { drop(address, .linkLost) }
        case "state": noteName(message.payload, address: address)
        case "backfill": backfill(message.payload, address: address, node: node)
        default: break
        }
    }

    private func measured(_ payload: [UInt8], address: String, node: String) {
        let measurement: RemoteMeasurement
        do {
            measurement = try RemoteMeasurement(payload: payload)
        } catch {
            refuse(error, node: node)
            return
        }
        guard var remote = remotes[address] ?? newRemote(address, node: node) else { return }
        if remote.identity.adapter != node {
            // The strap moved to another gateway: a new link.
            drop(address, .linkLost)
            remote.identity = SensorIdentity(adapter: node, address: address, name: names[address])
            remote.lastSequence = nil
        }
        if let last = remote.lastSequence, remote.ready, measurement.sequence != last &+ 1,
            measurement.sequence > last
        {
            // Frames lost between gateway and hub: a gap, as a dropped link is.
            gaps.increment()
            logger.info(
                "sequence gap", metadata: ["sensor": "\(address)", "missing": "\(measurement.sequence - last - 1)"])
            remotes[address] = remote
            drop(address, .linkLost)
            remote.ready = false
        }
        remote.lastSequence = measurement.sequence
        remote.lastHeard = clock.now()
        if !remote.ready {
            remote.ready = true
            broadcaster.yield(.connectionChanged(remote.identity, .connected))
            broadcaster.yield(.connectionChanged(remote.identity, .ready))
        }
        remotes[address] = remote
        do {
            let value = try GATTValue(characteristic: measurement.characteristic, bytes: measurement.bytes)
            broadcaster.yield(
                .measurement(
                    SensorMeasurement(
                        sensor: remote.identity, characteristic: measurement.characteristic, value: value,
                        receivedAt: measurement.receivedAt, via: measurement.via)))
        } catch {
            broadcaster.yield(.decodingFailed(remote.identity, error, bytes: measurement.bytes))
        }
    }

    private func backfill(_ payload: [UInt8], address: String, node: String) {
        let frames: [RemoteMeasurement]
        do {
            frames = try RemoteBackfill.decode(payload)
        } catch {
            refuse(error, node: node)
            return
        }
        let identity = SensorIdentity(adapter: node, address: address, name: names[address])
        var measurements: [SensorMeasurement] = []
        for frame in frames {
            guard let value = try? GATTValue(characteristic: frame.characteristic, bytes: frame.bytes) else {
                refused.increment()
                continue
            }
            measurements.append(
                SensorMeasurement(
                    sensor: identity, characteristic: frame.characteristic, value: value, receivedAt: frame.receivedAt,
                    via: frame.via))
        }
        backfilled.increment(by: measurements.count)
        if !measurements.isEmpty { backfills.yield(measurements) }
    }

    private func newRemote(_ address: String, node: String) -> Remote? {
        guard remotes.count < settings.sensorLimit else {
            refuse(.badTopic("hrbridge/\(node)/sensor/…: more than \(settings.sensorLimit) straps"), node: node)
            return nil
        }
        let identity = SensorIdentity(adapter: node, address: address, name: names[address])
        broadcaster.yield(.discovered(DiscoveredSensor(identity: identity, rssi: nil, services: [.heartRate])))
        return Remote(identity: identity)
    }

    private func drop(_ address: String, _ reason: DisconnectReason) {
        guard var remote = remotes[address], remote.ready else { return }
        remote.ready = false
        remote.lastSequence = nil
        remotes[address] = remote
        broadcaster.yield(.connectionChanged(remote.identity, .disconnected(reason)))
    }

    private func expireSilent() {
        let now = clock.now()
        for (address, remote) in remotes where remote.ready {
            if let heard = remote.lastHeard, now.timeIntervalSince(heard) > settings.expire { drop(address, .timeout) }
        }
    }

    /// The name in a gateway's retained state (`{"name": …}`), bounded; it is anyone's text.
    private func noteName(_ payload: [UInt8], address: String) {
        guard payload.count <= 16 * 1024, let name = try? JSONDecoder().decode(NameOnly.self, from: Data(payload)).name,
            !name.isEmpty
        else { return }
        names[address] = String(name.prefix(248))
        if var remote = remotes[address], remote.identity.name != names[address] {
            remote.identity = SensorIdentity(adapter: remote.identity.adapter, address: address, name: names[address])
            remotes[address] = remote
            broadcaster.yield(
                .discovered(DiscoveredSensor(identity: remote.identity, rssi: nil, services: [.heartRate])))
        }
    }

    /// The one field of a gateway's state read here.
    private struct NameOnly: Decodable {
        var name: String?
    }

    private func refuse(_ error: RemoteMeasurementError, node: String) {
        refused.increment()
        Counter(label: "hrbridge_remote_refused_total", dimensions: [("reason", error.metricName)]).increment()
        logger.info("remote measurement refused", metadata: ["node": "\(node)", "error": "\(error)"])
    }

    /// Letters, digits, `-` and `_`, 1–64: what a gateway's node may be called.
    static func isNodeName(_ text: String) -> Bool {
        (1...64).contains(text.count)
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// `C0:FF:EE:00:00:01` from the topic's `c0ffee000001`.
    static func address(fromObjectID id: Substring) -> String? {
        guard id.count == 12, id.allSatisfy(\.isHexDigit) else { return nil }
        let digits = Array(id.uppercased())
        return stride(from: 0, to: 12, by: 2).map { String(digits[$0..<$0 + 2]) }.joined(separator: ":")
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
    /// Stops showing a strap until it is heard again.
    public func forget(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        drop(sensor.address, .requested)
        remotes[sensor.address] = nil
    }
    public func resetEnergyExpended(_ sensor: SensorIdentity) throws(SensorAdapterError) {
        throw .failed(name: "remote", message: "reset \(sensor.address)'s energy on its gateway")
    }

    /// The straps heard so far (trusted: a gateway forwards only what its owner keeps connected).
    public func knownDevices() -> [KnownDevice] {
        remotes.values.map { remote in
            KnownDevice(
                identity: remote.identity, rssi: nil, services: [.heartRate], trusted: true, connected: remote.ready,
                servicesResolved: remote.ready)
        }
    }

    /// Ready while the broker is connected.
    public func availability() -> AdapterAvailability { connected ? .ready : .serviceStopped }

    /// One status per gateway heard: its straps streaming.
    public func adapterStatuses() -> [AdapterStatus] {
        let byNode = Dictionary(grouping: remotes.values, by: \.identity.adapter)
        return byNode.keys.sorted().map { node in
            let ready = byNode[node, default: []].filter(\.ready).map(\.identity.address).sorted()
            return AdapterStatus(
                name: node, availability: connected ? .ready : .serviceStopped, linksInUse: ready.count,
                sensors: ready)
        }
    }

    /// Link slots are the gateways' business.
    public func setPriority(_ priority: Int?, for address: String) {}
}
