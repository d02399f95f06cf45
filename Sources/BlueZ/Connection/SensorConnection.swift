public import FoundationEssentials
public import Sensors

/// One wanted sensor's connection as a pure state machine: bus facts, replies and timer fires go
/// in, actions come out (call `Connect`, subscribe, schedule a timer at a date, report a state).
///
/// No bus, no clock, no sleeping: the date arrives with each input in ``Surroundings``, timers are
/// actions the shell performs and answers with ``Input/timerFired(generation:)``, and the jitter
/// comes from the generator the caller passes. `BlueZAdapter` owns one machine per wanted strap.
public struct SensorConnection: Sendable {
    /// Tunables.
    public struct Configuration: Hashable, Sendable {
        /// How long someone else's pending `Connect` (our call answered `InProgress`) is waited for.
        public var connectTimeout: Duration = .seconds(20)
        /// How long to wait for `ServicesResolved` and the measurement characteristic.
        public var servicesTimeout: Duration = .seconds(10)
        /// Whether a link that drops (or an attempt that fails) is tried again.
        public var reconnects = true
        /// Delays between attempts.
        public var backoff = Backoff.Configuration()
        /// An advertisement cuts a backoff short at most this often, so a strap that advertises
        /// but refuses connections is not hammered.
        public var advertisedRetryInterval: Duration = .seconds(1)
        /// While the strap's broadcast heart rate is heard, connect attempts are at least this far
        /// apart and advertisements do not cut the wait short: a pending LE connection pauses the
        /// controller's scanning, and with it the broadcast (seen on real BlueZ).
        public var broadcastRetryInterval: Duration = .seconds(60)

        /// Default configuration.
        public init() {}
    }

    /// Where the connection is.
    public enum State: Hashable, Sendable {
        /// Not wanted (new, or stopped: the shell drops a machine that returns here).
        case idle
        /// Wanted but never seen on a usable adapter: discovery runs until it appears.
        case discovering
        /// Our `Connect` through `adapter` is on its way (or someone else's, until its deadline).
        case connecting(adapter: String)
        /// Linked; waiting for `ServicesResolved` and the measurement characteristic.
        case resolving(adapter: String)
        /// Subscribing to notifications (battery, location and device information are read once ready).
        case subscribing(adapter: String)
        /// Streaming.
        case ready(adapter: String)
        /// Waiting out a delay after a failure; an advertisement or an adapter coming back cuts it short.
        case backingOff(until: Date)
        /// The device object is gone: discovery runs until it is back.
        case rediscovering
        /// No allowed adapter is usable, or every one that sees the strap has no free link slot.
        case waitingForAdapter
        /// The bond was lost and re-pairing is opted in: remove, rediscover, pair (the shell's action).
        case repairing(adapter: String)
    }

    /// What the shell knows of the adapters, at the moment of an input.
    public struct Surroundings: Hashable, Sendable {
        /// The date.
        public var now: Date
        /// Adapters to connect through, best first: allowed, usable, seeing the device, with a free slot.
        public var candidates: [String]
        /// Whether any allowed adapter is usable (present, powered, bluetoothd running).
        public var adapterUsable: Bool
        /// Whether a usable allowed adapter has the device object.
        public var deviceKnown: Bool
        /// Whether the strap's broadcast heart rate is being heard (followed without a link).
        public var hearsBroadcast: Bool

        /// Surroundings as given.
        public init(
            now: Date, candidates: [String], adapterUsable: Bool, deviceKnown: Bool, hearsBroadcast: Bool = false
        ) {
            self.now = now
            self.candidates = candidates
            self.adapterUsable = adapterUsable
            self.deviceKnown = deviceKnown
            self.hearsBroadcast = hearsBroadcast
        }
    }

    /// How `Connect` answered.
    public enum ConnectReply: Hashable, Sendable {
        /// It worked (or the strap was already connected).
        case connected
        /// It failed; `linkUp` says whether `Connected` was true when the reply arrived (an error
        /// does not always mean no link: abort-by-local, some peers).
        case failed(BlueZError, linkUp: Bool)
    }

    /// A fact from the bus, a reply, or a timer.
    public enum Input: Hashable, Sendable {
        /// hrbridge wants the sensor connected.
        case start
        /// hrbridge no longer wants it (the shell releases the link).
        case stop
        /// `Connect` answered attempt `attempt`.
        case connectReplied(attempt: Int, ConnectReply)
        /// `Device1.Connected` became true on `adapter`.
        case linkUp(adapter: String)
        /// `Device1.Connected` became false on `adapter`.
        case linkDown(adapter: String)
        /// `ServicesResolved` is true and a measurement characteristic is exported on `adapter`.
        case servicesResolved(adapter: String)
        /// Subscribing for attempt `attempt` finished (`nil`: it worked).
        case subscribeReplied(attempt: Int, BlueZError?)
        /// The device object appeared on `adapter` (discovered, or back after expiring).
        case deviceAppeared(adapter: String)
        /// The device object was removed from `adapter`.
        case deviceRemoved(adapter: String)
        /// The strap advertised (an RSSI update) on `adapter`.
        case advertised(adapter: String)
        /// Its broadcast heart rate was heard for the first time since it last had a link.
        case broadcastHeard
        /// `adapter` can no longer be used: powered off, unplugged, or bluetoothd gone.
        case adapterLost(adapter: String)
        /// `adapter` became usable: powered on, plugged in, bluetoothd back.
        case adapterReady(adapter: String)
        /// A link slot freed on `adapter`, which had none.
        case slotFreed(adapter: String)
        /// The shell's remove-and-pair finished (either way).
        case repairFinished
        /// The timer scheduled with this generation fired.
        case timerFired(generation: Int)
    }

    /// What the shell does for the machine, in order.
    public enum Action: Hashable, Sendable {
        /// Call `Device1.Connect` through `adapter`; answer with ``Input/connectReplied(attempt:_:)``.
        case connect(adapter: String, attempt: Int)
        /// Subscribe and read the strap's details; answer with ``Input/subscribeReplied(attempt:_:)``.
        case subscribe(adapter: String, attempt: Int)
        /// Tear a half-open link down (`Disconnect`), nothing else.
        case disconnect(adapter: String)
        /// The sensor is no longer wanted: stop notifications, close sockets, `Disconnect`.
        case release(adapter: String)
        /// Remove the device, rediscover it and pair again; answer with ``Input/repairFinished``.
        case repair(adapter: String)
        /// `adapter` refused a link for want of slots: mark it full at its links in use.
        case markFull(adapter: String)
        /// Fire ``Input/timerFired(generation:)`` at `date`, replacing any earlier timer.
        case schedule(at: Date, generation: Int)
        /// Forget the pending timer.
        case cancelTimer
        /// Report a connection state of the strap as seen through `adapter`.
        case report(ConnectionState, adapter: String)
        /// An attempt asked for by ``Input/start`` ended: `nil` when it reached ready, else its error
        /// (the shell hands the first one to `connect`'s caller).
        case attemptEnded(BlueZError?)
    }

    /// The configuration.
    public let configuration: Configuration
    /// The address, for messages.
    public let address: String
    /// Where the connection is.
    public internal(set) var state = State.idle
    /// The backoff's memory of failures.
    public internal(set) var backoff: Backoff
    /// The current `Connect`/subscribe attempt: replies to older ones are ignored.
    public internal(set) var attempt = 0
    /// The current timer: fires of older ones are ignored.
    public internal(set) var timerGeneration = 0
    /// The adapter the last link went through (for reports while not placed).
    public internal(set) var lastAdapter: String?
    /// Whether our `Connect` was answered `InProgress` and someone else's connection is awaited.
    var awaitingOtherConnect = false
    /// When an advertisement (or an adapter coming back) last cut a backoff short.
    var lastEarlyRetry: Date?
    /// When the last `Connect` attempt began.
    public internal(set) var lastAttemptAt: Date?
    /// When its broadcast was first heard since it last had a link.
    public internal(set) var broadcastHeardAt: Date?

    /// A machine in ``State/idle``.
    public init(address: String, configuration: Configuration = Configuration()) {
        self.address = address
        self.configuration = configuration
        backoff = Backoff(configuration: configuration.backoff)
    }

    /// The adapter the strap is linked (or linking) through, if any.
    public var placedAdapter: String? {
        switch state {
        case .connecting(let adapter), .resolving(let adapter), .subscribing(let adapter), .ready(let adapter),
            .repairing(let adapter):
            adapter
        default: nil
        }
    }

    /// Whether the machine needs discovery running to find its strap.
    public var wantsDiscovery: Bool {
        switch state {
        case .discovering, .rediscovering, .repairing: true
        default: false
        }
    }

    /// Whether the strap is wanted but has no link and none is on its way: only its advertisements
    /// can be heard (backing off after a failure, or every adapter that sees it is full).
    public var awaitsLink: Bool {
        switch state {
        case .backingOff, .waitingForAdapter: true
        default: false
        }
    }

    /// Whether the strap streams.
    public var isReady: Bool { if case .ready = state { true } else { false } }

    /// Applies `input` and returns what the shell must do, in order.
    public mutating func handle(
        _ input: Input, in surroundings: Surroundings, using random: inout some RandomNumberGenerator
    ) -> [Action] {
        var actions: [Action] = []
        if case .broadcastHeard = input, !isReady { broadcastHeardAt = surroundings.now }
        switch (state, input) {
        case (.idle, .start):
            place(surroundings, &actions)
        case (.idle, _), (_, .start):
            break
        case (_, .stop):
            actions.append(.cancelTimer)
            if let adapter = placedAdapter {
                actions.append(.release(adapter: adapter))
                actions.append(.report(.disconnected(.requested), adapter: adapter))
            }
            state = .idle
            awaitingOtherConnect = false

        case (.connecting(let adapter), .connectReplied(let replied, let reply)) where replied == attempt:
            connectReplied(reply, adapter: adapter, surroundings, &random, &actions)
        case (.connecting(let adapter), .linkUp(let up)) where up == adapter && awaitingOtherConnect:
            linked(adapter, surroundings, &actions)
        case (.connecting(let adapter), .timerFired(let generation))
        where generation == timerGeneration && awaitingOtherConnect:
            actions.append(.disconnect(adapter: adapter))
            let error = BlueZError(
                name: "org.bluez.Error.InProgress", message: "a pending connection never completed")
            fail(
                error, reason: .failed(error.description), outcome: .failed(.inProgress), adapter, surroundings,
                &random, &actions)
        case (.connecting(let adapter), .broadcastHeard) where !awaitingOtherConnect:
            // Heard while our LE connection is pending, which pauses the controller's scanning (and
            // so the broadcast): call the attempt off and wait a full interval.
            actions.append(.disconnect(adapter: adapter))
            actions.append(
                .report(
                    .disconnected(.failed("called off: its broadcast is heard; next attempt in 60 s")), adapter: adapter
                )
            )
            let until = surroundings.now.addingTimeInterval(configuration.broadcastRetryInterval.seconds)
            state = .backingOff(until: until)
            schedule(at: until, &actions)
        case (.connecting(let adapter), .adapterLost(let lost)) where lost == adapter,
            (.connecting(let adapter), .deviceRemoved(let lost)) where lost == adapter:
            // The call in flight fails on its own; its reply is stale once we moved on.
            actions.append(.cancelTimer)
            moveOff(adapter, surroundings, &random, &actions)

        case (.resolving(let adapter), .servicesResolved(let resolved)) where resolved == adapter:
            actions.append(.cancelTimer)
            state = .subscribing(adapter: adapter)
            actions.append(.subscribe(adapter: adapter, attempt: attempt))
        case (.resolving(let adapter), .timerFired(let generation)) where generation == timerGeneration:
            actions.append(.disconnect(adapter: adapter))
            let error = BlueZError(
                name: "org.hrbridge.Error.ServicesNotResolved", message: "services never resolved for \(address)")
            fail(error, reason: .timeout, outcome: .failed(nil), adapter, surroundings, &random, &actions)

        case (.subscribing(let adapter), .subscribeReplied(let replied, let error)) where replied == attempt:
            if let error {
                actions.append(.disconnect(adapter: adapter))
                fail(
                    error, reason: .failed("StartNotify: \(error)"), outcome: .failed(error.code), adapter,
                    surroundings,
                    &random, &actions)
            } else {
                state = .ready(adapter: adapter)
                _ = backoff.next(after: .connected, using: &random)
                actions.append(.report(.ready, adapter: adapter))
                actions.append(.attemptEnded(nil))
            }

        case (.resolving(let adapter), .linkDown(let down)) where down == adapter,
            (.subscribing(let adapter), .linkDown(let down)) where down == adapter,
            (.ready(let adapter), .linkDown(let down)) where down == adapter:
            actions.append(.cancelTimer)
            let error = BlueZError(name: "org.hrbridge.Error.LinkLost", message: "the link to \(address) dropped")
            fail(error, reason: .linkLost, outcome: .failed(nil), adapter, surroundings, &random, &actions)
        case (.resolving(let adapter), .deviceRemoved(let removed)) where removed == adapter,
            (.subscribing(let adapter), .deviceRemoved(let removed)) where removed == adapter,
            (.ready(let adapter), .deviceRemoved(let removed)) where removed == adapter:
            actions.append(.cancelTimer)
            let error = BlueZError(
                name: "org.freedesktop.DBus.Error.UnknownObject", message: "the device object of \(address) was removed"
            )
            fail(error, reason: .linkLost, outcome: .deviceObjectMissing, adapter, surroundings, &random, &actions)
        case (.resolving(let adapter), .adapterLost(let lost)) where lost == adapter,
            (.subscribing(let adapter), .adapterLost(let lost)) where lost == adapter,
            (.ready(let adapter), .adapterLost(let lost)) where lost == adapter:
            actions.append(.cancelTimer)
            actions.append(.report(.disconnected(.adapterUnavailable), adapter: adapter))
            moveOff(adapter, surroundings, &random, &actions)

        case (.backingOff, .timerFired(let generation)) where generation == timerGeneration:
            place(surroundings, &actions)
        case (.backingOff(let until), .broadcastHeard):
            // Now followed through its broadcast: the next attempt (which pauses scanning) waits longer.
            let later = surroundings.now.addingTimeInterval(configuration.broadcastRetryInterval.seconds)
            if until < later {
                state = .backingOff(until: later)
                schedule(at: later, &actions)
            }
        case (.backingOff, .advertised) where surroundings.hearsBroadcast:
            // Its broadcasts come several times a second: they say it is there, not that it connects now.
            break
        case (.backingOff, .advertised), (.backingOff, .deviceAppeared), (.backingOff, .adapterReady):
            // Cut short at most once per interval (an adapter or a strap flapping must not hammer).
            if let last = lastEarlyRetry,
                surroundings.now.timeIntervalSince(last) < configuration.advertisedRetryInterval.seconds
            {
                break
            }
            lastEarlyRetry = surroundings.now
            _ = backoff.next(after: .advertised, using: &random)
            place(surroundings, &actions)
        case (.backingOff, .linkUp(let adapter)), (.waitingForAdapter, .linkUp(let adapter)),
            (.rediscovering, .linkUp(let adapter)), (.discovering, .linkUp(let adapter)):
            // The strap connected by itself (BlueZ's auto-connect of a trusted device, another client).
            attempt += 1
            linked(adapter, surroundings, &actions)

        case (.discovering, .deviceAppeared), (.discovering, .advertised), (.rediscovering, .deviceAppeared),
            (.rediscovering, .advertised),
            (.waitingForAdapter, .deviceAppeared), (.waitingForAdapter, .advertised),
            (.waitingForAdapter, .adapterReady),
            (.discovering, .adapterReady), (.rediscovering, .adapterReady):
            if !surroundings.candidates.isEmpty || !surroundings.deviceKnown { place(surroundings, &actions) }
        case (.waitingForAdapter, .slotFreed):
            // A slot freed for it by priority (a session wants its RR): taken at once, broadcast or not.
            if !surroundings.candidates.isEmpty || !surroundings.deviceKnown {
                place(surroundings, deferringForBroadcast: false, &actions)
            }
        case (.rediscovering, .timerFired(let generation)) where generation == timerGeneration:
            // Not seen again within the delay: try whatever BlueZ has (the cache may have kept it).
            place(surroundings, &actions)

        case (.repairing, .repairFinished):
            place(surroundings, &actions)

        default:
            // Stale replies and timers, and facts about other adapters, change nothing.
            break
        }
        return actions
    }

    /// What a strap whose key is gone is reported with, when re-pairing is not opted in.
    public static func bondLost(_ address: String) -> String {
        "the bond is lost (the strap was reset, or another device answers with its address): "
            + "pair it again (hrbridge pair \(address)) or set repair_on_key_loss = true"
    }
}
