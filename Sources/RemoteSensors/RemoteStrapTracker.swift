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
///
/// A strap belongs to one gateway at a time: the one configuration binds it to, or the one it was
/// first heard through, which keeps it until it says the strap (or itself) is gone or stays silent
/// about it for ``Configuration/expire`` — only then may another gateway take it over (an athlete
/// walking from one room to the next). Frames, availability and backfill from any other gateway
/// are refused. The hub's clock rules the live path: a live frame is stamped with the hub's time
/// and refused when its gateway dates it more than the skew allowed away from it, or no later than
/// the strap's last (a replay). Backfill fills only the gaps the hub saw in a strap's live stream,
/// from the gateway that owned it then (even after the strap moved on; never against a binding),
/// within a budget per gateway.
///
/// Frames of gateways with keys carry their gateway's boot (``RemoteMeasurement/boot``): once a
/// frame of a newer boot is taken, frames of older boots of that gateway are refused
/// (`stale_boot`: captured before it restarted, sent again), and the strap's sequence numbers are
/// followed afresh. A signed `offline` (``Input/signedOffline(address:node:boot:sent:)``) is read
/// only of the gateway's latest boot; a strap's only when dated no earlier than its last frame,
/// the gateway's (its Will, signed when it starts) only once per boot unless later. A signed status
/// of a newer boot, `online` or `offline`, makes that boot the gateway's latest at once: a frame
/// of the boot before, sent again between the gateway's restart and its first new frame, is
/// refused too.
///
/// A hub that started again after stopping without warning resumes its recovered sessions'
/// straps (``Input/resumed(address:node:storedUntil:firstLive:)``): once it has taken
/// ``resumeSettle`` seconds of the gateway's frames, it asks for the stretch between the store's
/// last frame and the first recorded since, on the gateway's clock, and takes its backfill as a gap's.
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
        /// Straps bound to a gateway by configuration (`[[sensors]] node`), by address: no other
        /// gateway ever speaks for them.
        public var owners: [String: String]
        /// Backfill frames a gateway may send per minute.
        public var backfillBudget: Int

        /// A configuration; the defaults are `[adapter] kind = "mqtt"`'s.
        public init(
            expire: TimeInterval = 10, sensorLimit: Int = 1000, maximumSkew: TimeInterval = 5,
            owners: [String: String] = [:], backfillBudget: Int = 30_000
        ) {
            self.expire = expire
            self.sensorLimit = sensorLimit
            self.maximumSkew = maximumSkew
            self.owners = owners
            self.backfillBudget = backfillBudget
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
        /// Its last live frame's sequence number and the time its gateway gave it.
        public internal(set) var lastFrame: (sequence: UInt32, sent: Date)?
        /// Its gateway said it (or itself) is gone: another may take the strap over.
        public internal(set) var released = false
        /// The latest gaps in its live stream (at most ``RemoteStrapTracker/maximumGaps``).
        public internal(set) var gaps: [Gap] = []
        /// The boot of its gateway its last live frame came from (nil: none given).
        public internal(set) var boot: UInt64?

        public static func == (left: Strap, right: Strap) -> Bool {
            left.identity == right.identity && left.link == right.link && left.lastHeard == right.lastHeard
                && left.lastFrame?.sequence == right.lastFrame?.sequence
                && left.lastFrame?.sent == right.lastFrame?.sent
                && left.released == right.released && left.gaps == right.gaps && left.boot == right.boot
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(identity)
            hasher.combine(lastHeard)
        }

        /// Whether it streams.
        public var isReady: Bool { if case .up = link { true } else { false } }
    }

    /// A stretch of a strap's live stream the hub did not hear, in its gateway's time: from the
    /// last frame before it to the first after it (nil: not over yet).
    public struct Gap: Hashable, Sendable {
        /// The gateway that owned the strap when it began: the only one that may fill it.
        public var node: String
        public var from: Date
        public var to: Date?
        /// Its gateway cannot know of it (the hub was off the broker, or frames were lost between
        /// them): once it ends, the hub asks the gateway for it (``Action/askForReplay(_:node:)``).
        public var askGateway = false

        /// Whether a frame its gateway dated `date` falls inside, `margin` short of its end.
        func contains(_ date: Date, endingEarlierBy margin: TimeInterval = 0) -> Bool {
            date > from && date < (to?.addingTimeInterval(-margin) ?? .distantFuture)
        }
    }

    /// Gaps remembered per strap.
    public static let maximumGaps = 16
    /// RR intervals per backfill frame at most (a 20-byte notification holds 9).
    public static let maximumRRIntervals = 32
    /// The RR intervals a heart beats in: 20 to 300 beats a minute.
    public static let plausibleRR: ClosedRange<Double> = 0.2...3

    /// A fact from the broker, or the time.
    public enum Input: Hashable, Sendable {
        /// A measurement envelope for `address` from gateway `node` (`…/sensor/<id>/measurement`).
        case envelope(RemoteMeasurement, address: String, node: String)
        /// Gateway `node` said `offline` on its status topic: its Will, or its farewell.
        case gatewayOffline(node: String)
        /// Gateway `node` said `offline` on `address`'s availability topic.
        case strapOffline(address: String, node: String)
        /// Gateway `node` said `offline`, with a tag its key made (checked by the shell): for the
        /// strap at `address` (its availability), or for itself (nil: its Will or its farewell);
        /// of boot `boot`, signed at `sent` on its clock.
        case signedOffline(address: String?, node: String, boot: UInt64, sent: Date)
        /// Gateway `node` said `online`, with a tag its key made (checked by the shell), of boot
        /// `boot`, signed at `sent`: that boot has begun, so its frames are the only live ones,
        /// even before the first of them comes.
        case signedOnline(node: String, boot: UInt64, sent: Date)
        /// A session recovered after the hub stopped without warning records the strap again:
        /// the store holds its frames heard through `node` until `storedUntil`, and the first it
        /// recorded since came at `firstLive` (both the hub's times, as its samples are dated).
        /// What the gateway sent between is a gap it cannot know of: once the gateway's clock is
        /// judged (``RemoteStrapTracker/resumeSettle``), the hub asks for it.
        case resumed(address: String, node: String, storedUntil: Date, firstLive: Date)
        /// Gateway `node`'s retained state named the strap.
        case named(address: String, name: String, node: String)
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
        /// Ask gateway `node` to send the frames of a gap it cannot know of again (its journal
        /// holds them): published on its `cmd/replay` topic.
        case askForReplay(ReplayRequest, node: String)
        /// Log that what a hub's restart missed of a strap cannot be asked for: its first
        /// recorded frame is no longer known, it came through another gateway, or too many
        /// straps wait to be resumed.
        case cannotResume(address: String, node: String)
    }

    /// A recovered session's strap, waiting for its gateway's clock to be judged.
    public struct Resume: Hashable, Sendable {
        /// The gateway it is heard through.
        public var node: String
        /// The store's last frame of it, on the hub's clock.
        public var storedUntil: Date
        /// The first frame recorded since, on the gateway's clock.
        public var firstSent: Date
    }

    /// What the hub has learnt of a gateway's clock since it started.
    struct GatewayClock: Hashable, Sendable {
        /// When the hub first took one of its frames.
        var firstHeard: Date
        /// The least the hub's time of taking a frame was ahead of the gateway's time of it: the
        /// clocks' difference plus the quickest trip. Any frame's trip took at least this.
        var leastLead: TimeInterval
    }

    /// Seconds of a gateway's frames the hub takes before it judges the gateway's clock and
    /// resumes a strap: the first frames after a start may all have waited (the hub was busy
    /// recovering its sessions), and an overestimated lead would ask for frames the store has.
    public static let resumeSettle: TimeInterval = 30
    /// Seconds after the last stored frame a resumed stretch begins on the gateway's clock,
    /// beyond the least lead: a frame whose trip was as quick as the quickest is not sent twice.
    public static let resumeMargin: TimeInterval = 0.05

    /// The tunables.
    public let configuration: Configuration
    /// Every strap heard and not forgotten, by address.
    public private(set) var straps: [String: Strap] = [:]
    /// Names from the gateways' retained states, by address: they may come before the strap does.
    private var names: [String: String] = [:]
    /// Each gateway's backfill budget: frames it may still send, and when that was worked out.
    private var budgets: [String: (frames: Double, at: Date)] = [:]
    /// The latest boot of each gateway whose frames carry one (gateways with keys: the shell
    /// passes boots only from verified frames, so one entry per key at most).
    public private(set) var boots: [String: UInt64] = [:]
    /// The boot and time of the last signed `offline` that let each gateway's straps go (one entry
    /// per key at most, as ``boots``).
    private var releases: [String: (boot: UInt64, sent: Date)] = [:]
    /// Each gateway's clock as judged from its frames (at most ``Configuration/sensorLimit``).
    private(set) var gatewayClocks: [String: GatewayClock] = [:]
    /// Each followed strap's latest live frames' times, the hub's and its gateway's, by address.
    private var recentFrames: [String: RecentFrameTimes] = [:]
    /// Recovered sessions' straps waiting for their gateway's clock to be judged, by address.
    public private(set) var resumes: [String: Resume] = [:]

    /// The longest name kept, in UTF-8 bytes (a Bluetooth device name's limit).
    static let maximumNameLength = DisplayName.bluetoothMaximumBytes

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
                release(address, at: now)
            }
        case .strapOffline(let address, let node):
            if let owner = owner(of: address), owner != node {
                actions.append(.refused(.foreignNode(owner: owner), address: address, node: node))
                return actions
            }
            drop(address, .linkLost, &actions)
            release(address, at: now)
        case .signedOffline(let address, let node, let boot, let sent):
            if let refusal = offlineRefusal(address: address, node: node, boot: boot, sent: sent, at: now) {
                actions.append(.refused(refusal, address: address ?? "", node: node))
                return actions
            }
            boots[node] = max(boots[node] ?? boot, boot)
            guard let address else {
                releases[node] = (boot, sent)
                return handle(.gatewayOffline(node: node), at: now)
            }
            return handle(.strapOffline(address: address, node: node), at: now)
        case .signedOnline(let node, let boot, let sent):
            if let refusal = onlineRefusal(node: node, boot: boot, sent: sent, at: now) {
                actions.append(.refused(refusal, address: "", node: node))
                return actions
            }
            boots[node] = max(boots[node] ?? boot, boot)
        case .resumed(let address, let node, let storedUntil, let firstLive):
            // The first recorded frame is looked up now, while the strap's ring still holds it;
            // heard through another gateway (it moved while the hub was down), or with no room
            // left, it cannot be resumed: said at once, not left waiting for good.
            guard straps[address]?.identity.adapter == node,
                let firstSent = recentFrames[address]?.sent(heardAt: firstLive),
                gatewayClocks[node] != nil,
                resumes[address] != nil || resumes.count < configuration.sensorLimit
            else {
                actions.append(.cannotResume(address: address, node: node))
                return actions
            }
            resumes[address] = Resume(node: node, storedUntil: storedUntil, firstSent: firstSent)
            resume(through: node, at: now, &actions)
        case .named(let address, let name, let node):
            if let owner = owner(of: address), owner != node {
                actions.append(.refused(.foreignNode(owner: owner), address: address, node: node))
                return actions
            }
            rename(address, name, &actions)
        case .forgotten(let address):
            drop(address, .requested, &actions)
            straps[address] = nil
            recentFrames[address] = nil
        case .brokerLost:
            // Gateways still on the broker go on publishing: only a request brings those frames back.
            for address in straps.keys.sorted() { drop(address, .adapterUnavailable, askGateway: true, &actions) }
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
        let behind = now.timeIntervalSince(measurement.receivedAt)
        if behind > configuration.maximumSkew {
            actions.append(.refused(.behindHub(behind), address: address, node: node))
            return
        }
        if let owner = owner(of: address), owner != node, !mayTakeOver(address, at: now) {
            actions.append(.refused(.foreignNode(owner: owner), address: address, node: node))
            return
        }
        if let boot = measurement.boot, let ahead = configuration.refusal(of: Self.date(ofBoot: boot), at: now) {
            // A boot is when the gateway started: one dated ahead of the hub (a clock gone wrong at
            // its start) would, once kept, make every later boot of that gateway stale.
            actions.append(.refused(ahead, address: address, node: node))
            return
        }
        if let boot = measurement.boot, let latest = boots[node], boot < latest {
            // The gateway started again since: its sequence numbers did too, so this frame, captured
            // before and sent again, may well be later in sequence (and within the skew) than the
            // new boot's.
            actions.append(.refused(.staleBoot(boot), address: address, node: node))
            return
        }
        // A newer boot of the gateway numbers its frames afresh: neither a replay nor a gap.
        let sameBoot = straps[address]?.boot == measurement.boot
        if let last = straps[address]?.lastFrame, straps[address]?.identity.adapter == node, sameBoot,
            measurement.sequence <= last.sequence, measurement.receivedAt <= last.sent
        {
            // Not later in either count: a frame heard before, sent again. (A gateway without a key
            // that started again from 0 dates its frames later.)
            actions.append(.refused(.replayed(measurement.sequence), address: address, node: node))
            return
        }
        if straps[address] == nil {
            // A strap bound to its gateway by configuration always gets a place: made-up
            // addresses streaming from a gateway (one with a valid key) must not lock it out.
            let bound = configuration.owners[address] == node
            if straps.count >= configuration.sensorLimit,
                let evicted = longestSilent(at: now) ?? (bound ? unboundOfBusiestGateway() : nil)
            {
                drop(evicted, .linkLost, &actions)  // a streaming one is told gone first
                straps[evicted] = nil
                recentFrames[evicted] = nil
                names[evicted] = nil
                actions.append(.evicted(address: evicted))
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
        if let strap = straps[address], case .up(let last, _) = strap.link, sameBoot,
            measurement.sequence != last &+ 1, measurement.sequence > last
        {
            // Frames lost between gateway and hub: a gap, as a dropped link is. (A lower number is
            // a gateway that started again from 0, and goes on.)
            actions.append(.sequenceGap(strap.identity, missing: measurement.sequence - last - 1))
            drop(address, .linkLost, askGateway: true, &actions)
        }
        guard var strap = straps[address] else { return }
        if !strap.isReady {
            actions.append(.emit(.connectionChanged(strap.identity, .connected)))
            actions.append(.emit(.connectionChanged(strap.identity, .ready)))
            if let open = strap.gaps.indices.last, strap.gaps[open].to == nil {
                strap.gaps[open].to = measurement.receivedAt
                let gap = strap.gaps[open]
                // Back through another gateway: its time, on another clock, ends the gap; the old
                // gateway is asked only up to the skew allowed short of it (as backfill is taken).
                let end = measurement.receivedAt.addingTimeInterval(gap.node == node ? 0 : -configuration.maximumSkew)
                if gap.askGateway, gap.from < end {
                    actions.append(
                        .askForReplay(ReplayRequest(address: address, from: gap.from, to: end), node: gap.node))
                }
            }
        }
        strap.link = .up(lastSequence: measurement.sequence, lastHeard: now)
        strap.lastHeard = now
        strap.lastFrame = (measurement.sequence, measurement.receivedAt)
        strap.boot = measurement.boot
        strap.released = false
        straps[address] = strap
        // In place: a copy of the strap would copy the ring with every frame.
        recentFrames[address, default: RecentFrameTimes()].append(heard: now, sent: measurement.receivedAt)
        if let boot = measurement.boot { boots[node] = max(boots[node] ?? boot, boot) }
        let lead = now.timeIntervalSince(measurement.receivedAt)
        if var clock = gatewayClocks[node] {
            clock.leastLead = min(clock.leastLead, lead)
            gatewayClocks[node] = clock
        } else {
            if gatewayClocks.count >= configuration.sensorLimit {
                // Gateways' names come from topics: those no followed strap is heard through go first.
                let carrying = Set(straps.values.map(\.identity.adapter))
                gatewayClocks = gatewayClocks.filter { carrying.contains($0.key) }
            }
            if gatewayClocks.count < configuration.sensorLimit {
                gatewayClocks[node] = GatewayClock(firstHeard: now, leastLead: lead)
            }
        }
        if !resumes.isEmpty { resume(through: node, at: now, &actions) }
        do {
            let value = try GATTValue(characteristic: measurement.characteristic, bytes: measurement.bytes)
            // Stamped with the hub's time: its clock orders every strap's samples.
            actions.append(
                .emit(
                    .measurement(
                        SensorMeasurement(
                            sensor: strap.identity, characteristic: measurement.characteristic, value: value,
                            receivedAt: now, via: measurement.via, bonded: measurement.bonded))))
        } catch {
            actions.append(.emit(.decodingFailed(strap.identity, error, bytes: measurement.bytes)))
        }
    }

    /// Asks for what the hub's restart missed of the straps waiting to be resumed through `node`,
    /// once its clock has been judged for ``resumeSettle``: from the last stored frame (on the
    /// gateway's clock: the hub's time less the least lead, and the margin) to the first recorded
    /// since (its time, found in ``recentFrames`` when it was resumed), exclusive. A gap, so the
    /// backfill is taken.
    private mutating func resume(through node: String, at now: Date, _ actions: inout [Action]) {
        guard let clock = gatewayClocks[node], now >= clock.firstHeard.addingTimeInterval(Self.resumeSettle),
            resumes.values.contains(where: { $0.node == node })
        else { return }
        for (address, resume) in resumes.sorted(by: { $0.key < $1.key }) where resume.node == node {
            resumes[address] = nil
            let from = resume.storedUntil.addingTimeInterval(Self.resumeMargin - clock.leastLead)
            guard from < resume.firstSent, var gaps = straps[address]?.gaps else { continue }
            let request = ReplayRequest(address: address, from: from, to: resume.firstSent)
            // Before a gap still open (the strap dropped meanwhile): the next frame closes that one.
            let gap = Gap(node: node, from: request.from, to: resume.firstSent, askGateway: true)
            gaps.insert(gap, at: gaps.last?.to == nil && !gaps.isEmpty ? gaps.count - 1 : gaps.count)
            if gaps.count > Self.maximumGaps { gaps.removeFirst() }
            straps[address]?.gaps = gaps
            actions.append(.askForReplay(request, node: node))
        }
    }

    /// A boot's date: its gateway's start, in milliseconds since 1970.
    static func date(ofBoot boot: UInt64) -> Date {
        Date(timeIntervalSince1970: Double(boot) / 1000)
    }

    /// Why a signed `offline` from `node` (of boot `boot`, signed at `sent`) is refused, if it is.
    private func offlineRefusal(
        address: String?, node: String, boot: UInt64, sent: Date, at now: Date
    ) -> RemoteMeasurementError? {
        // Said before the gateway started again: sent again by whoever kept it (a Will is retained
        // by the broker once published).
        if let latest = boots[node], boot < latest { return .staleBoot(boot) }
        // Neither the boot nor the saying may be dated ahead of the hub: kept, either would refuse
        // what the gateway says later.
        if let ahead = configuration.refusal(of: Self.date(ofBoot: boot), at: now) { return ahead }
        if let ahead = configuration.refusal(of: sent, at: now) { return ahead }
        guard let address else {
            // A Will is signed when its gateway starts, and anyone may have kept the one the broker
            // published after a partition the gateway came back from: it lets the straps go once
            // per boot; only a later `offline` of that boot (its farewell, signed when said) again.
            if let last = releases[node], (boot, sent) <= (last.boot, last.sent) { return .replayedOffline }
            return nil
        }
        // Said before the strap's last frame of that boot: an old availability, sent again.
        if let strap = straps[address], strap.identity.adapter == node, strap.boot == boot,
            let last = strap.lastFrame, sent < last.sent
        {
            return .replayedOffline
        }
        return nil
    }

    /// Why a signed `online` from `node` (of boot `boot`, signed at `sent`) is refused, if it is:
    /// of an earlier boot (kept and sent again), or dated ahead of the hub (kept, it would make
    /// the gateway's real later boots stale).
    private func onlineRefusal(node: String, boot: UInt64, sent: Date, at now: Date) -> RemoteMeasurementError? {
        if let latest = boots[node], boot < latest { return .staleBoot(boot) }
        if let ahead = configuration.refusal(of: Self.date(ofBoot: boot), at: now) { return ahead }
        return configuration.refusal(of: sent, at: now)
    }

    /// The gateway `address` belongs to: bound by configuration, or the one it is heard through.
    func owner(of address: String) -> String? {
        configuration.owners[address] ?? straps[address]?.identity.adapter
    }

    /// Its gateway let the strap go: another may take it over at once. (One silent for `expire`
    /// is free already.)
    private mutating func release(_ address: String, at now: Date) {
        guard let strap = straps[address], now < strap.lastHeard.addingTimeInterval(configuration.expire) else {
            return
        }
        straps[address]?.released = true
    }

    /// Whether another gateway may take the strap over: it is not bound, and its gateway let it
    /// go or has been silent about it for ``Configuration/expire``.
    private func mayTakeOver(_ address: String, at now: Date) -> Bool {
        guard configuration.owners[address] == nil else { return false }
        guard let strap = straps[address] else { return true }
        return strap.released || now >= strap.lastHeard.addingTimeInterval(configuration.expire)
    }

    /// The frames of a backfill batch from `node` for `address` that fill gaps the hub saw, as
    /// measurements at their gateway's times, and why each other frame was refused.
    public mutating func admitBackfill(
        _ frames: [RemoteMeasurement], address: String, node: String, at now: Date
    ) -> (admitted: [SensorMeasurement], refused: [RemoteMeasurementError]) {
        var admitted: [SensorMeasurement] = []
        var refused: [RemoteMeasurementError] = []
        if let bound = configuration.owners[address], bound != node {
            return ([], Array(repeating: .foreignNode(owner: bound), count: frames.count))
        }
        guard let strap = straps[address] else { return ([], Array(repeating: .outsideGap, count: frames.count)) }
        // A gap belongs to the gateway that owned the strap when it began, even after the strap
        // moved on (a broker outage, then the athlete changes rooms): that gateway fills it.
        if !strap.gaps.contains(where: { $0.node == node }), let owner = owner(of: address), owner != node {
            return ([], Array(repeating: .foreignNode(owner: owner), count: frames.count))
        }
        // Heard through `node`, whichever gateway holds the strap now.
        let heardThrough = identity(address: address, node: node)
        // A gap the strap's move closed ended at the new gateway's time, on another clock: the
        // old gateway fills it only to the skew allowed short of that end, never into the frames
        // the new one sent live.
        let margin = owner(of: address) == node ? 0 : configuration.maximumSkew
        for frame in frames {
            if let refusal = configuration.refusal(of: frame.receivedAt, at: now) {
                refused.append(refusal)
                continue
            }
            guard
                strap.gaps.contains(where: {
                    $0.node == node && $0.contains(frame.receivedAt, endingEarlierBy: margin)
                })
            else {
                refused.append(.outsideGap)
                continue
            }
            guard let value = try? GATTValue(characteristic: frame.characteristic, bytes: frame.bytes) else {
                refused.append(.badValue)
                continue
            }
            if case .heartRateMeasurement(let heart) = value,
                heart.rrIntervals.count > Self.maximumRRIntervals
                    || !heart.rrIntervals.allSatisfy({ Self.plausibleRR.contains($0.seconds) })
            {
                refused.append(.implausibleRR)
                continue
            }
            guard spendBudget(of: node, at: now) else {
                refused.append(.overBudget)
                continue
            }
            admitted.append(
                SensorMeasurement(
                    sensor: heardThrough, characteristic: frame.characteristic, value: value,
                    receivedAt: frame.receivedAt, via: frame.via, bonded: frame.bonded))
        }
        return (admitted, refused)
    }

    /// Takes one frame from `node`'s budget (refilled evenly over a minute); false when it is spent.
    private mutating func spendBudget(of node: String, at now: Date) -> Bool {
        let capacity = Double(configuration.backfillBudget)
        if budgets[node] == nil, budgets.count >= configuration.sensorLimit {
            // Gateways' names come from topics: forget the full buckets (idle gateways) first.
            budgets = budgets.filter { $0.value.frames + now.timeIntervalSince($0.value.at) * capacity / 60 < capacity }
            guard budgets.count < configuration.sensorLimit else { return false }
        }
        var budget = budgets[node] ?? (capacity, now)
        budget.frames = min(capacity, budget.frames + max(0, now.timeIntervalSince(budget.at)) * capacity / 60)
        budget.at = now
        guard budget.frames >= 1 else {
            budgets[node] = budget
            return false
        }
        budget.frames -= 1
        budgets[node] = budget
        return true
    }

    /// A strap no configuration binds, of the gateway that holds the most straps (ties: the
    /// lowest name), heard longest ago (ties: the lowest address): what makes room for a bound one.
    private func unboundOfBusiestGateway() -> String? {
        let unbound = straps.filter { configuration.owners[$0.key] == nil }
        let perGateway = Dictionary(grouping: unbound.values, by: \.identity.adapter).mapValues(\.count)
        guard let busiest = perGateway.min(by: { ($1.value, $0.key) < ($0.value, $1.key) })?.key else { return nil }
        return unbound.filter { $0.value.identity.adapter == busiest }
            .min { ($0.value.lastHeard, $0.key) < ($1.value.lastHeard, $1.key) }?.key
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
    private mutating func rename(_ address: String, _ heard: String, _ actions: inout [Action]) {
        // Anyone on the broker may publish a gateway's state: its name is cleaned like one from the radio.
        let name = DisplayName.cleaned(heard, maximumBytes: Self.maximumNameLength)
        guard !name.isEmpty else { return }
        if names[address] == nil, names.count >= configuration.sensorLimit {
            guard let unfollowed = names.keys.filter({ straps[$0] == nil }).min() else { return }
            names[unfollowed] = nil
        }
        names[address] = name
        guard var strap = straps[address], strap.identity.name != name else { return }
        strap.identity = identity(address: address, node: strap.identity.adapter)
        straps[address] = strap
        actions.append(
            .emit(.discovered(DiscoveredSensor(identity: strap.identity, rssi: nil, services: [.heartRate]))))
    }

    /// A ready strap stops streaming, for `reason`.
    /// With `askGateway`, its gateway cannot know of the gap this opens, and is asked for it once
    /// the strap is back.
    private mutating func drop(
        _ address: String, _ reason: DisconnectReason, askGateway: Bool = false, _ actions: inout [Action]
    ) {
        guard let strap = straps[address], strap.isReady else { return }
        straps[address]?.link = .down
        if let last = strap.lastFrame {
            // The hub hears nothing of it from here until it is back: a gap its gateway may fill.
            straps[address]?.gaps.append(
                Gap(node: strap.identity.adapter, from: last.sent, to: nil, askGateway: askGateway))
            if strap.gaps.count >= Self.maximumGaps { straps[address]?.gaps.removeFirst() }
        }
        actions.append(.emit(.connectionChanged(strap.identity, .disconnected(reason))))
    }
}
