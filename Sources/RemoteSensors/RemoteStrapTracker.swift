public import FoundationEssentials
import GATT
public import Sensors

/// The hub's bookkeeping of straps heard through other gateways, as a pure value: envelopes,
/// availability messages and the passing of time go in, sensor events come out.
///
/// No broker and no clock: every input comes with its date, and ``nextDeadline`` says when the
/// tracker must next be told the time (``Input/timePassed``), so the shell arms one wake-up
/// instead of polling. `MQTTSensorAdapter` parses the broker's messages, feeds the tracker and
/// carries out its actions, in order.
///
/// A strap is ready from its first measurement. It drops (`linkLost`) when its gateway says
/// `offline`, when its availability topic says `offline`, when it moves to another gateway, and on
/// a jump in its sequence numbers (a gap: frames lost between gateway and hub, the same drop and
/// return a lost link makes); (`timeout`) when nothing came for ``Configuration/expire`` seconds;
/// (`adapterUnavailable`) when the broker is lost. The next measurement brings it back.
public struct RemoteStrapTracker: Sendable {
    /// Tunables.
    public struct Configuration: Hashable, Sendable {
        /// Seconds without a measurement before a ready strap counts as gone.
        public var expire: TimeInterval
        /// The most straps followed at once, and names remembered: everything heard is anyone's text.
        public var sensorLimit: Int
        /// Seconds a frame may be dated ahead of the hub's clock (the gateways' clocks differ a
        /// little); beyond, it is refused.
        public var maximumSkew: TimeInterval

        /// A configuration; the defaults are `[adapter] kind = "mqtt"`'s.
        public init(expire: TimeInterval = 10, sensorLimit: Int = 1000, maximumSkew: TimeInterval = 5) {
            self.expire = expire
            self.sensorLimit = sensorLimit
            self.maximumSkew = maximumSkew
        }

        /// Why a frame dated `date` is refused when the hub's clock reads `now`, if it is.
        public func refusal(of date: Date, at now: Date) -> RemoteMeasurementError? {
            let ahead = date.timeIntervalSince(now)
            return ahead > maximumSkew ? .aheadOfHub(ahead) : nil
        }
    }

    /// Whether a strap streams.
    public enum Link: Hashable, Sendable {
        /// Not streaming: not yet, or dropped.
        case down
        /// Streaming: its last frame's sequence number, and when that frame reached the hub.
        case up(lastSequence: UInt32, lastHeard: Date)
    }

    /// One strap heard.
    public struct Strap: Hashable, Sendable {
        /// The strap as a sensor: its identity's adapter is the gateway it was last heard through.
        public internal(set) var identity: SensorIdentity
        /// Whether it streams.
        public internal(set) var link: Link
        /// When its last frame reached the hub.
        public internal(set) var lastHeard: Date

        /// Whether it streams.
        public var isReady: Bool { if case .up = link { true } else { false } }
    }

    /// A fact from the broker, or the time.
    public enum Input: Hashable, Sendable {
        /// A measurement envelope for `address` from gateway `node` (`…/sensor/<id>/measurement`).
        case envelope(RemoteMeasurement, address: String, node: String)
        /// Gateway `node` said `offline` on its status topic: its Will, or its farewell.
        case gatewayOffline(node: String)
        /// Gateway `node` said `offline` on `address`'s availability topic.
        case strapOffline(address: String, node: String)
        /// A gateway's retained state named the strap.
        case named(address: String, name: String)
        /// The strap is forgotten until it is heard again.
        case forgotten(address: String)
        /// The connection to the broker was lost: every strap with it.
        case brokerLost
        /// The time passed (the wake-up at ``RemoteStrapTracker/nextDeadline``): silent straps expire.
        case timePassed
    }

    /// What the shell does, in order.
    public enum Action: Hashable, Sendable {
        /// Pass this event on to the adapter's listeners.
        case emit(SensorEvent)
        /// Count and log a sequence gap: `missing` frames never reached the hub.
        case sequenceGap(SensorIdentity, missing: UInt32)
        /// Log that the strap is now heard through another gateway.
        case moved(address: String, from: String, to: String)
        /// Refuse a new strap: ``Configuration/sensorLimit`` straps are followed already, each
        /// streaming or silent for less than ``Configuration/expire``.
        case limitReached(address: String, node: String)
        /// A strap silent for longer than ``Configuration/expire`` was forgotten to make room for
        /// a new one: addresses anyone can make up must not lock real straps out until a restart.
        case evicted(address: String)
        /// Refuse a frame (count it by reason and log it): it says nothing of the strap's state.
        case refused(RemoteMeasurementError, address: String, node: String)
    }

    /// The tunables.
    public let configuration: Configuration
    /// Every strap heard and not forgotten, by address.
    public private(set) var straps: [String: Strap] = [:]
    /// Names from the gateways' retained states, by address: they may come before the strap does.
    private var names: [String: String] = [:]

    /// The longest name kept (BlueZ's alias limit).
    static let maximumNameLength = 248

    /// A tracker that knows no strap.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// When the tracker must next be told the time: the earliest date a ready strap's silence
    /// expires; nil when no strap is ready. While the clock runs forward it only ever moves later.
    public var nextDeadline: Date? {
        straps.values.lazy.compactMap { strap -> Date? in
            guard case .up(_, let heard) = strap.link else { return nil }
            return heard.addingTimeInterval(configuration.expire)
        }.min()
    }

    /// The identity of `address` as heard through `node`, with the name its gateway gave it.
    public func identity(address: String, node: String) -> SensorIdentity {
        SensorIdentity(adapter: node, address: address, name: names[address])
    }

    /// Applies `input`, which happened at `now`, and returns what the shell must do, in order.
    public mutating func handle(_ input: Input, at now: Date) -> [Action] {
        var actions: [Action] = []
        switch input {
        case .envelope(let measurement, let address, let node):
            receive(measurement, address: address, node: node, at: now, &actions)
        case .gatewayOffline(let node):
            for address in straps.keys.sorted() where straps[address]?.identity.adapter == node {
                drop(address, .linkLost, &actions)
            }
        case .strapOffline(let address, _):
            // Whichever gateway says so, even one the strap has left: kept as it was, for now.
            drop(address, .linkLost, &actions)
        case .named(let address, let name):
            rename(address, name, &actions)
        case .forgotten(let address):
            drop(address, .requested, &actions)
            straps[address] = nil
        case .brokerLost:
            for address in straps.keys.sorted() { drop(address, .adapterUnavailable, &actions) }
        case .timePassed:
            for address in straps.keys.sorted() {
                guard case .up(_, let heard) = straps[address]?.link,
                    now >= heard.addingTimeInterval(configuration.expire)
                else { continue }
                drop(address, .timeout, &actions)
            }
        }
        return actions
    }

    private mutating func receive(
        _ measurement: RemoteMeasurement, address: String, node: String, at now: Date, _ actions: inout [Action]
    ) {
        // Dated in the future, it would keep the strap "heard" (in a class, on the sensor's
        // status) for as long as it claims, and every later sample would come out of order.
        if let refusal = configuration.refusal(of: measurement.receivedAt, at: now) {
            actions.append(.refused(refusal, address: address, node: node))
            return
        }
        if straps[address] == nil {
            if straps.count >= configuration.sensorLimit, let silent = longestSilent(at: now) {
                straps[silent] = nil
                names[silent] = nil
                actions.append(.evicted(address: silent))
            }
            guard straps.count < configuration.sensorLimit else {
                actions.append(.limitReached(address: address, node: node))
                return
            }
            let strap = Strap(identity: identity(address: address, node: node), link: .down, lastHeard: now)
            straps[address] = strap
            actions.append(
                .emit(.discovered(DiscoveredSensor(identity: strap.identity, rssi: nil, services: [.heartRate]))))
        }
        if let from = straps[address]?.identity.adapter, from != node {
            // The strap moved to another gateway: a new link.
            drop(address, .linkLost, &actions)
            actions.append(.moved(address: address, from: from, to: node))
            let moved = identity(address: address, node: node)
            straps[address]?.identity = moved
        }
        if let strap = straps[address], case .up(let last, _) = strap.link, measurement.sequence != last &+ 1,
            measurement.sequence > last
        {
            // Frames lost between gateway and hub: a gap, as a dropped link is. (A lower number is
            // a gateway that started again from 0, and goes on.)
            actions.append(.sequenceGap(strap.identity, missing: measurement.sequence - last - 1))
            drop(address, .linkLost, &actions)
        }
        guard var strap = straps[address] else { return }
        if !strap.isReady {
            actions.append(.emit(.connectionChanged(strap.identity, .connected)))
            actions.append(.emit(.connectionChanged(strap.identity, .ready)))
        }
        strap.link = .up(lastSequence: measurement.sequence, lastHeard: now)
        strap.lastHeard = now
        straps[address] = strap
        do {
            let value = try GATTValue(characteristic: measurement.characteristic, bytes: measurement.bytes)
            actions.append(
                .emit(
                    .measurement(
                        SensorMeasurement(
                            sensor: strap.identity, characteristic: measurement.characteristic, value: value,
                            receivedAt: measurement.receivedAt, via: measurement.via))))
        } catch {
            actions.append(.emit(.decodingFailed(strap.identity, error, bytes: measurement.bytes)))
        }
    }

    /// The strap not streaming that has been silent longest, when it has been for more than
    /// ``Configuration/expire`` (ties: the lowest address).
    private func longestSilent(at now: Date) -> String? {
        let cutoff = now.addingTimeInterval(-configuration.expire)
        return straps.filter { !$0.value.isReady && $0.value.lastHeard < cutoff }
            .min { ($0.value.lastHeard, $0.key) < ($1.value.lastHeard, $1.key) }?.key
    }

    /// A name heard for `address`: kept (bounded), and the strap announced again under it. When
    /// the names are full, one of an address not followed makes room, so made-up addresses'
    /// names cannot keep a real strap's out.
    private mutating func rename(_ address: String, _ name: String, _ actions: inout [Action]) {
        guard !name.isEmpty else { return }
        if names[address] == nil, names.count >= configuration.sensorLimit {
            guard let unfollowed = names.keys.filter({ straps[$0] == nil }).min() else { return }
            names[unfollowed] = nil
        }
        let name = String(name.prefix(Self.maximumNameLength))
        names[address] = name
        guard var strap = straps[address], strap.identity.name != name else { return }
        strap.identity = identity(address: address, node: strap.identity.adapter)
        straps[address] = strap
        actions.append(
            .emit(.discovered(DiscoveredSensor(identity: strap.identity, rssi: nil, services: [.heartRate]))))
    }

    /// A ready strap stops streaming, for `reason`.
    private mutating func drop(_ address: String, _ reason: DisconnectReason, _ actions: inout [Action]) {
        guard let strap = straps[address], strap.isReady else { return }
        straps[address]?.link = .down
        actions.append(.emit(.connectionChanged(strap.identity, .disconnected(reason))))
    }
}
