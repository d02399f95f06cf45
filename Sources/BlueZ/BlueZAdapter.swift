public import DBus
import FoundationEssentials
import GATT
public import Logging
public import Sensors
import Synchronization

/// The BlueZ implementation of ``SensorAdapter``: every Bluetooth adapter BlueZ has (or the
/// configured ones) as one pool, over D-Bus.
///
/// A thin shell around pure values: ``ObjectCache`` (BlueZ's object tree, fed by signals after
/// subscribing and then a `GetManagedObjects` snapshot), ``AdapterPool`` (which adapters are
/// usable, their links, which ran out of slots) and one ``SensorConnection`` per wanted strap. The
/// shell turns bus facts into the machines' inputs and performs their actions; the work itself is
/// split by concern: `+Discovery`, `+Connection`, `+Subscription`, `+Signals`, `+Pairing`, `+Calls`.
public actor BlueZAdapter: SensorAdapter {
    /// Tunables.
    public struct Options: Sendable {
        /// How long `Device1.Connect` may take.
        public var connectTimeout: Duration = .seconds(20)
        /// How long to wait for `ServicesResolved` and the measurement characteristic.
        public var servicesTimeout: Duration = .seconds(10)
        /// Whether a link that drops is re-established.
        public var reconnects = true
        /// First reconnect delay; doubles per failed attempt up to ``maximumReconnectDelay``.
        public var initialReconnectDelay: Duration = .milliseconds(500)
        /// Longest reconnect delay.
        public var maximumReconnectDelay: Duration = .seconds(30)
        /// Reconnect delays vary by a random factor in 1 ± this, so straps do not retry in step.
        public var reconnectJitter = 0.2
        /// Whether a failed authentication (a key missing after the strap was reset) removes the
        /// device, rediscovers it and pairs it again. Off by default: a spoofer answering with the
        /// strap's address would be paired with Just Works; the failure is reported instead.
        public var repairsOnAuthenticationFailure = false
        /// How long to wait for a removed or expired device to be rediscovered when re-pairing.
        public var rediscoveryTimeout: Duration = .seconds(10)
        /// How notifications are received.
        public var notifications: NotificationMethod = .startNotify
        /// Whether ``BlueZAdapter/open(adapters:connection:options:clock:logger:)`` succeeds without
        /// bluetoothd or without an adapter: the pool then reports its availability and starts
        /// working when they appear (a service keeps running with zero adapters).
        public var waitsForAdapter = false
        /// Whether `connect` of a device BlueZ does not know (yet) keeps trying: the first attempt
        /// still throws `unknownSensor`, then the adapter discovers it and connects once it is seen.
        public var connectsUnknownDevices = false
        /// Straps that may only use one adapter: address (`AA:BB:…`) → adapter name (`hci1`).
        public var bindings: [String: String] = [:]
        /// Whether a wanted strap without a link is followed through the heart rate it broadcasts
        /// (Polar's manufacturer data): discovery then asks BlueZ for every advertisement
        /// (`DuplicateData`), and those readings arrive `via: .advertisement`.
        public var followsAdvertisements = true
        /// While a strap is followed through its broadcast, connect attempts are at least this far
        /// apart (each pauses the controller's scanning, and with it the broadcast).
        public var broadcastRetryInterval: Duration = .seconds(60)
        /// The address type each configured strap has (address → type): a device object under that
        /// address with another `AddressType` is someone else's radio repeating the address (stock
        /// BlueZ sets a static random one with `btmgmt static-addr`). It is not taken for the strap:
        /// not connected, not paired, its broadcast refused. Straps not listed are not checked.
        public var addressTypes: [String: AddressType] = [:]
        /// How many device objects of bluetoothd's the adapter follows at most (anyone in radio
        /// range can make it create them); a wanted strap's and a linked device's always fit.
        public var deviceLimit = 4_096
        /// Who gets a freed link slot first: address → priority (higher first; 0 when absent).
        /// Straps waiting only for a slot take one in this order, then by address.
        public var priorities: [String: Int] = [:]

        /// Default options.
        public init() {}

        var connection: SensorConnection.Configuration {
            var configuration = SensorConnection.Configuration()
            configuration.connectTimeout = connectTimeout
            configuration.servicesTimeout = servicesTimeout
            configuration.reconnects = reconnects
            configuration.backoff.initialDelay = initialReconnectDelay
            configuration.backoff.maximumDelay = maximumReconnectDelay
            configuration.backoff.jitter = reconnectJitter
            configuration.backoff.repairsOnAuthenticationFailure = repairsOnAuthenticationFailure
            configuration.broadcastRetryInterval = broadcastRetryInterval
            return configuration
        }
    }

    /// How notifications reach the bridge.
    public enum NotificationMethod: Sendable {
        /// `StartNotify` + `PropertiesChanged(Value)` (the default, as bleak chose after #1885).
        case startNotify
        /// `AcquireNotify`: a SEQPACKET socket, one datagram per notification, re-acquired after
        /// every reconnect; falls back to StartNotify where the characteristic does not offer it.
        case acquireNotify
    }

    /// One strap hrbridge wants connected: its machine and what the shell holds for it.
    struct Link {
        var identity: SensorIdentity
        var machine: SensorConnection
        var timer: Task<Void, Never>?
        /// Characteristic paths with a notify session (kept across reconnects: BlueZ re-arms them).
        var subscribed: Set<String> = []
        var sockets: [String: NotificationSocket] = [:]
        /// `connect` callers waiting for the first attempt's outcome.
        var waiters: [CheckedContinuation<Result<Void, SensorAdapterError>, Never>] = []
        /// The last attempt's error, for those callers.
        var lastError: BlueZError?
        /// A half-open link being torn down: callers learn the failure once it is.
        var teardown: Task<Void, Never>?
        /// The last broadcast reading delivered, so a repeated advertisement is not a new sample.
        var lastBroadcast: PolarHeartRateBroadcast?
        /// When its broadcast was last heard (while it had no link).
        var broadcastHeardAt: Date?
    }

    /// The pool's label: the adapter's name when one is configured (`hci0`), else `bluez`.
    public nonisolated let name: String
    let connection: DBusConnection
    let options: Options
    let clock: any WallClock
    let logger: Logger
    let broadcaster = EventBroadcaster<SensorEvent>(routingKey: \.sensorAddress)
    var random = SystemRandomNumberGenerator()
    var cache = ObjectCache() {
        didSet { cacheChanged() }
    }
    var pool: AdapterPool
    /// What each adapter's availability was last reported as (kept after it leaves: it is absent).
    var reportedAvailability: [String: AdapterAvailability] = [:]
    /// What the pool's availability was last reported as while it had no adapter at all.
    var reportedPoolAvailability = AdapterAvailability.ready
    /// The adapters usable when last looked at: the machines hear of each change once.
    var usableAdapters: Set<String> = []
    /// Whether ``open(adapters:connection:options:clock:logger:)`` has finished.
    var opened = false
    /// The services a caller's discovery looks for (`nil`: no caller discovers).
    var discoveryServices: Set<GATTService>?
    /// Adapters a `StartDiscovery` is on its way to (perhaps powering them on first).
    var discoveryStarting: Set<String> = []
    /// The last start or stop of our reconnect discovery, which the next one waits for.
    var reconnectDiscoveryCalls: Task<Void, Never>?
    /// Adapters our reconnect discovery runs on (started to find straps again, stopped once none needs it).
    var reconnectDiscovery: Set<String> = []
    /// Addresses reported as discovered (once per strap, whichever adapter saw it first).
    var announced: Set<String> = []
    /// Priorities set while running (a session started for the strap), over the configured ones.
    var priorities: [String: Int] = [:]
    var links: [String: Link] = [:] {
        didSet {
            // A wanted strap's device is kept even when the cache is full of others.
            let wanted = cache.preferredAddresses
            if links.count != wanted.count || links.keys.contains(where: { !wanted.contains($0) }) {
                cache.preferredAddresses = Set(links.keys)
                readBackIfLeftOut(Set(links.keys).subtracting(wanted))
            }
            publishFastRoutes()
        }
    }
    /// Owner changes of `org.bluez` applied so far: a reply that spans one is from a gone bluetoothd.
    var ownerChanges = 0
    /// Device objects the cache left out when it was full, as last logged.
    var loggedDevicesRefused = 0
    /// Device objects left out of the cache of bluetoothd's objects because it held
    /// ``ObjectCache/deviceLimit`` already (anyone in radio range can have bluetoothd create them).
    public var devicesRefused: Int { cache.devicesRefused }
    /// Notifying characteristic paths → the strap and characteristic they carry, so a notification
    /// costs one lookup instead of parsing its path; cleared whenever objects come or go.
    var routes: [String: (address: String, characteristic: GATTCharacteristic)] = [:]
    /// Each strap's Polar Measurement Data state (raw ECG and acceleration).
    var pmdLinks: [String: PMDLink] = [:]
    /// PMD characteristic paths → the strap and which characteristic each is.
    var pmdRoutes: [String: (address: String, role: PMDLink.Role)] = [:]
    /// Device objects (path) whose address type is not their strap's, logged once each.
    var addressTypeMismatches: Set<String> = []
    /// A strap's subscribed characteristic as the loop-thread fast path sees it.
    struct FastRoute: Sendable {
        let identity: SensorIdentity
        let characteristic: GATTCharacteristic
        /// Whether the strap's device is bonded (rebuilt when that changes).
        let bonded: Bool
    }
    /// Subscribed characteristic paths the D-Bus loop thread delivers from directly (decoded there,
    /// without a hop through this actor); rebuilt whenever links or objects change.
    let fastRoutes = FastRouteTable()
    final class FastRouteTable: Sendable {
        let routes = Mutex<[String: FastRoute]>([:])
    }
    var tapID: Int?
    /// Calls made in the background (connect, subscribe, release, repair, discovery, a socket's
    /// datagrams): cancelled at ``shutdown()``.
    let background = OwnedTasks()
    var signalTask: Task<Void, Never>?
    /// The org.bluez signals, with how many were delivered; `handledSignals` is how many this actor
    /// has applied. A method call catches up to the reply before it returns (see ``call``).
    var signalSubscription: SignalSubscription?
    var handledSignals = 0
    var signalsEnded = false
    var signalWaiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    var ownerTask: Task<Void, Never>?
    /// Unique names of bluetoothd processes that have left `org.bluez` (the last
    /// ``retiredOwnerLimit``): a signal of theirs still queued is stale, not applied.
    var retiredOwners: Set<String> = []
    var retiredOrder: [String] = []
    static let retiredOwnerLimit = 16
    /// Signals from a bluetoothd that had left by the time they were handled (not applied).
    public internal(set) var staleSignals = 0
    /// BlueZ messages refused for their shape (``MalformedBlueZMessage``): signals, replies and
    /// single properties; each is also counted in `hrbridge_bluez_malformed_total`.
    public internal(set) var malformedMessages = 0
    /// The kinds and members of refused messages already logged at warning level.
    var loggedMalformed: Set<String> = []
    /// Signals applied while a re-snapshot is on its way: the snapshot may be older than they
    /// are, so they are applied again on top of it.
    var appliedDuringSnapshot: [DBusSignal]?
    /// Callers waiting for a condition on the cache, woken by its changes (never polled).
    var cacheWaiters:
        [Int: (condition: @Sendable (ObjectCache) -> Bool, continuation: CheckedContinuation<Bool, Never>)] =
            [:]
    var nextWaiterID = 0

    /// Opens the pool: `adapters` (default: every adapter BlueZ has, and any plugged in later).
    public static func open(
        adapters names: [String]? = nil, connection: DBusConnection, options: Options = Options(),
        clock: any WallClock = SystemWallClock(), logger: Logger
    ) async throws(SensorAdapterError) -> BlueZAdapter {
        let present: [String]
        do {
            present = try await adapterNames(on: connection)
        } catch {
            guard options.waitsForAdapter, case .adapterUnavailable = error else { throw error }
            present = []
        }
        let wanted = names.map { Array(Set($0)).sorted() }.flatMap { $0.isEmpty ? nil : $0 }
        if !options.waitsForAdapter {
            if let wanted, let missing = wanted.first(where: { !present.contains($0) }) {
                throw .adapterUnavailable(
                    "no adapter \(missing); BlueZ has \(present.isEmpty ? "none" : present.joined(separator: ", "))")
            }
            if wanted == nil, present.isEmpty { throw .adapterUnavailable("BlueZ has no Bluetooth adapter") }
        }
        let adapter = BlueZAdapter(
            allowed: wanted, connection: connection, options: options, clock: clock, logger: logger)
        try await adapter.start()
        return adapter
    }

    /// Opens adapter `name` alone (default: every adapter).
    public static func open(
        adapter name: String?, connection: DBusConnection, options: Options = Options(),
        clock: any WallClock = SystemWallClock(), logger: Logger
    ) async throws(SensorAdapterError) -> BlueZAdapter {
        try await open(
            adapters: name.map { [$0] }, connection: connection, options: options, clock: clock, logger: logger)
    }

    private init(
        allowed: [String]?, connection: DBusConnection, options: Options, clock: any WallClock, logger: Logger
    ) {
        self.name = allowed?.joined(separator: ",") ?? "bluez"
        self.pool = AdapterPool(allowed: allowed)
        self.connection = connection
        self.options = options
        self.clock = clock
        self.logger = logger
        cache.deviceLimit = options.deviceLimit
        for name in allowed ?? [] { reportedAvailability[name] = .ready }
    }

    /// Subscribe first, then snapshot: a duplicate event is harmless, a missed one is not.
    private func start() async throws(SensorAdapterError) {
        let subscription: SignalSubscription
        let owners: AsyncStream<NameOwnerChange>
        do {
            subscription = try await connection.subscribe(matching: MatchRule(sender: "org.bluez"))
            owners = try await connection.nameOwnerChanges(of: "org.bluez")
        } catch {
            throw Self.adapterError(error)
        }
        signalSubscription = subscription
        signalTask = Task { [weak self] in
            for await signal in subscription.signals { await self?.handleCounted(signal) }
            await self?.endSignals()
        }
        // The hot path: a subscribed strap's notification is decoded and delivered on the loop
        // thread; anything else (an unknown path, another change) takes the stream above.
        tapID = connection.tapByteProperty(
            sender: "org.bluez", interface: ObjectCache.characteristicInterface, property: "Value"
        ) {
            [fastRoutes, broadcaster, clock, logger] path, bytes in
            guard let route = fastRoutes.routes.withLock({ $0[path] }) else { return false }
            Self.deliver(
                bytes, characteristic: route.characteristic, from: route.identity, bonded: route.bonded,
                to: broadcaster, clock: clock, logger: logger)
            return true
        }
        ownerTask = Task { [weak self] in
            for await change in owners { await self?.ownerChanged(change) }
        }
        do {
            try await loadSnapshot()
        } catch {
            guard options.waitsForAdapter, case .adapterUnavailable = error else { throw error }
            // No bluetoothd yet: the owner change brings the snapshot when it starts.
            pool.serviceRunning = false
        }
        refreshAdapters()
        do {
            try connection.export(path: PairingAgent.path) { call in PairingAgent.handle(call) }
        } catch {
            logger.info("pairing agent not exported", metadata: ["error": "\(error)"])
        }
        if pool.serviceRunning { await registerAgent() }
        opened = true
    }

    /// How long shutdown waits for each `StopNotify`.
    static let releaseTimeout: Duration = .seconds(2)

    /// Stops following BlueZ: unsubscribes notifications, disconnects nothing, ends the event stream.
    public func shutdown() async {
        let stopping = links
        links = [:]
        for address in pmdLinks.keys { forgetWaveforms(address) }
        for (_, link) in stopping {
            link.timer?.cancel()
            for waiter in link.waiters { waiter.resume(returning: .failure(.adapterUnavailable("shut down"))) }
            for characteristic in link.subscribed {
                // Bounded: a hung bluetoothd must not hold the daemon's stop past systemd's limit.
                _ = try? await call(
                    characteristic, ObjectCache.characteristicInterface, "StopNotify", timeout: Self.releaseTimeout)
            }
            for socket in link.sockets.values { socket.close() }
        }
        if let tapID { connection.removeTap(tapID) }
        background.cancelAll()
        reconnectDiscoveryCalls?.cancel()
        signalTask?.cancel()
        ownerTask?.cancel()
        connection.unexport(path: PairingAgent.path)
        for (_, waiter) in cacheWaiters { waiter.continuation.resume(returning: false) }
        cacheWaiters = [:]
        broadcaster.finish()
    }

    /// Events from now on.
    public nonisolated func events() -> AsyncStream<SensorEvent> { broadcaster.subscribe() }
    /// The events of the sensors at `addresses` and the adapter's own, routed: nothing else is queued.
    public nonisolated func events(from addresses: Set<String>) -> AsyncStream<SensorEvent> {
        broadcaster.subscribe(keys: addresses)
    }

    /// The object path of adapter `name`.
    static func adapterPath(_ name: String) -> String { "/org/bluez/" + name }

    /// The identity of the strap at `address` as seen through `adapter`. Its name is whatever a
    /// radio nearby advertised: cleaned before anything prints, logs or publishes it.
    func identity(_ address: String, on adapter: String) -> SensorIdentity {
        let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
        let properties = cache.properties(devicePath, ObjectCache.deviceInterface)
        let advertised = Self.name(alias: properties?["Alias"]?.string, name: properties?["Name"]?.string, of: address)
        return SensorIdentity(adapter: adapter, address: address, name: advertised ?? links[address]?.identity.name)
    }

    /// A device's name from its `Alias` (a user's alias, else the name it advertised) and `Name`,
    /// cleaned; nil when it has none. bluetoothd gives a device with no name its address as the
    /// alias (`C0-FF-EE-00-00-01`): that is no name, and the real one usually follows in a scan
    /// response.
    static func name(alias: String?, name: String?, of address: String) -> String? {
        let placeholder = String(address.map { $0 == ":" ? "-" : $0 })
        for candidate in [alias, name] {
            guard let candidate, candidate.uppercased() != placeholder.uppercased() else { continue }
            let cleaned = DisplayName.cleaned(candidate)
            if !cleaned.isEmpty { return cleaned }
        }
        return nil
    }

    /// Devices BlueZ knows on the pool's adapters, with their state.
    public func knownDevices() -> [KnownDevice] {
        pool.names.flatMap { adapter in
            cache.devices(under: Self.adapterPath(adapter)).compactMap { devicePath -> KnownDevice? in
                guard let address = BlueZPaths.address(ofDevice: devicePath),
                    let properties = cache.properties(devicePath, ObjectCache.deviceInterface)
                else { return nil }
                return KnownDevice(
                    identity: identity(address, on: adapter), rssi: properties["RSSI"]?.integer,
                    services: cache.services(of: devicePath), paired: properties["Paired"]?.bool ?? false,
                    trusted: properties["Trusted"]?.bool ?? false, bonded: properties["Bonded"]?.bool ?? false,
                    connected: properties["Connected"]?.bool ?? false,
                    servicesResolved: properties["ServicesResolved"]?.bool ?? false,
                    addressType: properties["AddressType"]?.string.map { String($0.prefix(16)) })
            }
        }
    }

    /// Whether the pool can be used now: ready when one adapter is.
    public var currentAvailability: AdapterAvailability { pool.availability }

    /// Whether the pool can be used now.
    public func availability() -> AdapterAvailability { pool.availability }

    /// Each adapter with its links in use, the straps on it and its counters.
    public func adapterStatuses() -> [AdapterStatus] {
        Set(pool.names).union(reportedAvailability.keys.filter(pool.allows)).sorted().map { adapter in
            let sensors = links.filter { $0.value.machine.isReady && $0.value.machine.placedAdapter == adapter }
                .keys.sorted()
            return pool.status(of: adapter, linksInUse: linksInUse(adapter), sensors: sensors)
        }
    }

    /// LE links the controller holds now: devices under it with `Connected=true`.
    func linksInUse(_ adapter: String) -> Int {
        cache.devices(under: Self.adapterPath(adapter)).count { cache.deviceConnected($0) }
    }
}
