public import DBus
import FoundationEssentials
public import GATT
public import Logging
public import Sensors
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The BlueZ implementation of ``SensorAdapter``: one Bluetooth adapter (`hci0`…) over D-Bus.
///
/// Subscribes to every `org.bluez` signal before taking the `GetManagedObjects` snapshot, keeps
/// BlueZ's object tree in an ``ObjectCache``, filters discovery by the fitness services (and
/// re-checks each device, since other clients' filters are OR-merged), connects, waits for
/// `ServicesResolved` **and** the measurement characteristic, subscribes with `StartNotify`
/// (never stacked), reads Body Sensor Location and Device Information once per connection,
/// follows the battery through `Battery1` or 0x2A19, and reconnects by itself when a link drops.
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
        /// How long to wait for a removed or expired device to be rediscovered per attempt.
        public var rediscoveryTimeout: Duration = .seconds(10)
        /// How notifications are received.
        public var notifications: NotificationMethod = .startNotify
        /// Whether ``BlueZAdapter/open(adapter:connection:options:clock:logger:)`` succeeds without
        /// bluetoothd or without the adapter (`hci0` when none is named): the adapter then reports
        /// its availability and starts working when they appear (a service keeps running with zero adapters).
        public var waitsForAdapter = false
        /// Whether `connect` of a device BlueZ does not know (yet) keeps trying: the first attempt
        /// still throws `unknownSensor`, then the adapter rediscovers it and connects once it is seen.
        public var connectsUnknownDevices = false

        /// Default options.
        public init() {}
    }

    /// How notifications reach the bridge.
    public enum NotificationMethod: Sendable {
        /// `StartNotify` + `PropertiesChanged(Value)` (the default, as bleak chose after #1885).
        case startNotify
        /// `AcquireNotify`: a SEQPACKET socket, one datagram per notification, re-acquired after
        /// every reconnect; falls back to StartNotify where the characteristic does not offer it.
        case acquireNotify
    }

    /// One sensor hrbridge wants connected.
    private struct Session {
        var identity: SensorIdentity
        var task: Task<Void, Never>?
        var ready = false
        var subscribed: Set<String> = []
        var sockets: [String: NotificationSocket] = [:]
        var policy: ReconnectPolicy
        /// How the last attempt ended, for the policy.
        var lastOutcome: ReconnectPolicy.Outcome = .failed(nil)
        /// Whether the reconnect task is waiting out a delay (an advertisement cuts it short).
        var backingOff = false
        /// When an advertisement last cut a delay short (at most one a second, so a strap that
        /// advertises but refuses connections is not hammered).
        var advertisedRetry: Date?
    }

    private var reconnectConfiguration: ReconnectPolicy.Configuration {
        var configuration = ReconnectPolicy.Configuration()
        configuration.initialDelay = options.initialReconnectDelay
        configuration.maximumDelay = options.maximumReconnectDelay
        configuration.jitter = options.reconnectJitter
        configuration.repairsOnAuthenticationFailure = options.repairsOnAuthenticationFailure
        return configuration
    }

    /// The adapter's name: `hci0`.
    public nonisolated let name: String
    /// The adapter's object path.
    public nonisolated let path: String
    private let connection: DBusConnection
    private let options: Options
    private let clock: any WallClock
    private let logger: Logger
    private let broadcaster = EventBroadcaster<SensorEvent>()
    private var cache = ObjectCache() {
        didSet { publishFastRoutes() }
    }
    private var discoveryServices: Set<GATTService>?
    /// Whether the running discovery is ours, started to find a strap again (stopped once all are back).
    private var discoveringToReconnect = false
    /// Notifying characteristic paths → the strap and characteristic they carry, so a notification
    /// costs one lookup instead of parsing its path; cleared whenever objects come or go.
    private var routes: [String: (address: String, characteristic: GATTCharacteristic)] = [:]
    /// Whether `org.bluez` has an owner on the bus.
    private var serviceRunning = true
    /// What the last ``SensorEvent/adapterChanged(_:_:)`` said (nothing is said while it stays ready).
    private var availability = AdapterAvailability.ready
    private var announced: Set<String> = []
    private var sessions: [String: Session] = [:] {
        didSet { publishFastRoutes() }
    }
    /// A strap's subscribed characteristic as the loop-thread fast path sees it.
    private struct FastRoute: Sendable {
        let identity: SensorIdentity
        let characteristic: GATTCharacteristic
    }
    /// Subscribed characteristic paths the D-Bus loop thread delivers from directly (decoded there,
    /// without a hop through this actor); rebuilt whenever sessions or objects change.
    private let fastRoutes = FastRouteTable()
    private final class FastRouteTable: Sendable {
        let routes = Mutex<[String: FastRoute]>([:])
    }
    private var tapID: Int?
    private var signalTask: Task<Void, Never>?
    /// The org.bluez signals, with how many were delivered; `handledSignals` is how many this actor
    /// has applied. A method call catches up to the reply before it returns (see ``call``).
    private var signalSubscription: SignalSubscription?
    private var handledSignals = 0
    private var signalsEnded = false
    private var signalWaiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var ownerTask: Task<Void, Never>?
    /// Signals applied while a re-snapshot is on its way: the snapshot may be older than they
    /// are, so they are applied again on top of it.
    private var appliedDuringSnapshot: [DBusSignal]?

    /// The names of the adapters BlueZ has, sorted (`hci0`, `hci1`…).
    public static func adapterNames(on connection: DBusConnection) async throws(SensorAdapterError) -> [String] {
        var cache = ObjectCache()
        cache.load(snapshot: try await managedObjects(connection))
        return cache.adapters.map(\.name)
    }

    private static func managedObjects(_ connection: DBusConnection) async throws(SensorAdapterError) -> DBusValue {
        do {
            let reply = try await connection.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
            return reply.first ?? .propertyMap([])
        } catch {
            throw Self.adapterError(error)
        }
    }

    static func adapterError(_ error: DBusError) -> SensorAdapterError {
        let classified = BlueZError(error)
        if classified.code == .serviceUnavailable {
            return .adapterUnavailable("bluetoothd (org.bluez) is not running on the system bus")
        }
        return .failed(name: error.name, message: error.message)
    }

    /// Waits until bluetoothd runs and has adapter `name` (any adapter when `nil`) and returns its
    /// name, calling `report` with each state it waits in ("bluetoothd not running", "no Bluetooth
    /// adapter"). Waits on bus signals, never polls; throws `adapterUnavailable` when cancelled.
    public static func waitForAdapter(
        named name: String? = nil, connection: DBusConnection,
        report: @Sendable (AdapterAvailability) -> Void = { _ in }
    ) async throws(SensorAdapterError) -> String {
        let changes = AsyncStream<Void>.makeStream()
        let watchers: [Task<Void, Never>]
        do {
            let signals = try await connection.signals(
                matching: MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager"))
            let owners = try await connection.nameOwnerChanges(of: "org.bluez")
            watchers = [
                Task { for await _ in signals { changes.continuation.yield() } },
                Task { for await _ in owners { changes.continuation.yield() } },
            ]
        } catch {
            throw adapterError(error)
        }
        defer { watchers.forEach { $0.cancel() } }
        var changed = changes.stream.makeAsyncIterator()
        var last: AdapterAvailability?
        while true {
            let state: AdapterAvailability
            do {
                let names = try await adapterNames(on: connection)
                if let found = name.flatMap({ names.contains($0) ? $0 : nil }) ?? (name == nil ? names.first : nil) {
                    return found
                }
                state = .absent
            } catch {
                guard case .adapterUnavailable = error else { throw error }
                state = .serviceStopped
            }
            if state != last { report(state) }
            last = state
            guard await changed.next() != nil, !Task.isCancelled else {
                throw .adapterUnavailable("stopped waiting: \(state)")
            }
        }
    }

    /// Opens adapter `name` (default: the first one BlueZ has) and starts following BlueZ.
    public static func open(
        adapter name: String? = nil, connection: DBusConnection, options: Options = Options(),
        clock: any WallClock = SystemWallClock(), logger: Logger
    ) async throws(SensorAdapterError) -> BlueZAdapter {
        let names: [String]
        do {
            names = try await adapterNames(on: connection)
        } catch {
            guard options.waitsForAdapter, case .adapterUnavailable = error else { throw error }
            names = []
        }
        let fallback = options.waitsForAdapter ? "hci0" : nil
        guard let chosen = name ?? names.first ?? fallback else {
            throw .adapterUnavailable("BlueZ has no Bluetooth adapter")
        }
        guard names.contains(chosen) || options.waitsForAdapter else {
            throw .adapterUnavailable(
                "no adapter \(chosen); BlueZ has \(names.isEmpty ? "none" : names.joined(separator: ", "))")
        }
        let adapter = BlueZAdapter(
            name: chosen, connection: connection, options: options, clock: clock, logger: logger)
        try await adapter.start()
        return adapter
    }

    private init(name: String, connection: DBusConnection, options: Options, clock: any WallClock, logger: Logger) {
        self.name = name
        self.path = "/org/bluez/" + name
        self.connection = connection
        self.options = options
        self.clock = clock
        self.logger = logger
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
                bytes, characteristic: route.characteristic, from: route.identity, to: broadcaster, clock: clock,
                logger: logger)
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
            serviceRunning = false
        }
        refreshAvailability()
        do {
            try connection.export(path: PairingAgent.path) { call in PairingAgent.handle(call) }
        } catch {
            logger.info("pairing agent not exported", metadata: ["error": "\(error)"])
        }
        if serviceRunning { await registerAgent() }
    }

    /// Registers the pairing agent with bluetoothd (again after it restarts: it forgets agents).
    private func registerAgent() async {
        do {
            _ = try await connection.call(
                destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                member: "RegisterAgent", arguments: [.objectPath(PairingAgent.path), .string("NoInputNoOutput")])
        } catch {
            // Pairing still works without our agent (BlueZ falls back to NoInputNoOutput).
            logger.info("pairing agent not registered", metadata: ["error": "\(error)"])
        }
    }

    /// Stops following BlueZ: unsubscribes notifications, disconnects nothing, ends the event stream.
    public func shutdown() async {
        for (_, session) in sessions { session.task?.cancel() }
        for (address, session) in sessions {
            for characteristic in session.subscribed {
                _ = try? await call(characteristic, "org.bluez.GattCharacteristic1", "StopNotify")
            }
            for socket in session.sockets.values { socket.close() }
            sessions[address]?.subscribed = []
        }
        sessions = [:]
        if let tapID { connection.removeTap(tapID) }
        signalTask?.cancel()
        ownerTask?.cancel()
        connection.unexport(path: PairingAgent.path)
        broadcaster.finish()
    }

    /// Events from now on.
    public nonisolated func events() -> AsyncStream<SensorEvent> { broadcaster.subscribe() }

    private func identity(ofDevice devicePath: String) -> SensorIdentity? {
        guard let address = BlueZPaths.address(ofDevice: devicePath) else { return nil }
        let properties = cache.properties(devicePath, ObjectCache.deviceInterface)
        return SensorIdentity(
            adapter: name, address: address, name: properties?["Alias"]?.string ?? properties?["Name"]?.string)
    }

    /// Devices BlueZ knows on this adapter, with their state.
    public func knownDevices() -> [KnownDevice] {
        cache.devices(under: path).compactMap { devicePath in
            guard let identity = identity(ofDevice: devicePath),
                let properties = cache.properties(devicePath, ObjectCache.deviceInterface)
            else { return nil }
            return KnownDevice(
                identity: identity, rssi: properties["RSSI"]?.integer, services: cache.services(of: devicePath),
                paired: properties["Paired"]?.bool ?? false, trusted: properties["Trusted"]?.bool ?? false,
                bonded: properties["Bonded"]?.bool ?? false, connected: properties["Connected"]?.bool ?? false,
                servicesResolved: properties["ServicesResolved"]?.bool ?? false)
        }
    }

    // MARK: Calls

    @discardableResult
    private func call(
        _ objectPath: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
        timeout: Duration = DBusConnection.defaultTimeout, keepingDescriptors: Bool = false
    ) async throws(BlueZError) -> [DBusValue] {
        let result: Result<[DBusValue], DBusError>
        do {
            result = .success(
                try await connection.call(
                    destination: "org.bluez", path: objectPath, interface: interface, member: member,
                    arguments: arguments, timeout: timeout, keepingDescriptors: keepingDescriptors))
        } catch {
            result = .failure(error)
        }
        // The signals BlueZ sent before its reply are applied before the caller looks at the
        // cache: a Connect that fails after flickering Connected must not read a stale `true`.
        await catchUpWithSignals()
        do {
            return try result.get()
        } catch {
            throw BlueZError(error)
        }
    }

    /// Waits until every signal delivered so far has been applied to the cache.
    private func catchUpWithSignals() async {
        guard !signalsEnded, let target = signalSubscription?.delivered, target > handledSignals else { return }
        await withCheckedContinuation { signalWaiters.append((target, $0)) }
    }

    private func handleCounted(_ signal: DBusSignal) {
        handle(signal)
        handledSignals += 1
        guard !signalWaiters.isEmpty else { return }
        let handled = handledSignals
        for waiter in signalWaiters where waiter.target <= handled { waiter.continuation.resume() }
        signalWaiters.removeAll { $0.target <= handled }
    }

    private func endSignals() {
        signalsEnded = true
        for waiter in signalWaiters { waiter.continuation.resume() }
        signalWaiters = []
    }

    private func setProperty(_ objectPath: String, _ interface: String, _ property: String, _ value: DBusValue)
        async throws(BlueZError)
    {
        try await call(
            objectPath, "org.freedesktop.DBus.Properties", "Set",
            [.string(interface), .string(property), .variant(value)])
    }

    private static func failure(_ error: BlueZError) -> SensorAdapterError {
        .failed(name: error.name, message: error.message)
    }

    // MARK: Discovery

    /// Sets the discovery filter (the services, LE only) and starts discovering.
    public func startDiscovery(services: Set<GATTService>) async throws(SensorAdapterError) {
        discoveringToReconnect = false
        let wanted = services.isEmpty ? Set(GATTService.allCases) : services
        discoveryServices = wanted
        do {
            try await call(
                path, ObjectCache.adapterInterface, "SetDiscoveryFilter",
                [
                    .propertyMap([
                        (
                            "UUIDs",
                            .array(
                                elementSignature: "s",
                                wanted.map { .string($0.uuid.description) }.sorted { $0.string! < $1.string! })
                        ),
                        ("Transport", .string("le")),
                    ])
                ])
            do {
                try await call(path, ObjectCache.adapterInterface, "StartDiscovery")
            } catch  where error.code == .notReady {
                try await powerOn()
                try await call(path, ObjectCache.adapterInterface, "StartDiscovery")
            }
        } catch  where error.code == .inProgress {
            // We already own a discovery session: it is running.
        } catch {
            throw Self.failure(error)
        }
        for device in cache.devices(under: path) { announceIfMatching(device) }
    }

    /// The adapter is off (`NotReady`): set `Powered`, retrying while BlueZ answers `Busy`, and wait
    /// for `Powered=true`.
    private func powerOn() async throws(BlueZError) {
        logger.info("adapter not ready: powering it on", metadata: ["adapter": "\(name)"])
        var attempts = 0
        while true {
            do {
                try await setProperty(path, ObjectCache.adapterInterface, "Powered", .boolean(true))
                break
            } catch  where error.code == .busy && attempts < 10 {
                attempts += 1
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        _ = await waitFor(.seconds(3)) {
            $0.properties(self.path, ObjectCache.adapterInterface)?["Powered"]?.bool == true
        }
    }

    /// Stops discovering.
    public func stopDiscovery() async throws(SensorAdapterError) {
        discoveryServices = nil
        do {
            try await call(path, ObjectCache.adapterInterface, "StopDiscovery")
        } catch  where error.code == .notReady || error.message.contains("No discovery started") {
        } catch {
            throw Self.failure(error)
        }
    }

    private func announceIfMatching(_ devicePath: String) {
        guard let wanted = discoveryServices, let identity = identity(ofDevice: devicePath) else { return }
        // Filters from other clients are OR-merged: re-check against our own.
        let services = cache.services(of: devicePath)
        guard !services.isDisjoint(with: wanted) else { return }
        let rssi = cache.properties(devicePath, ObjectCache.deviceInterface)?["RSSI"]?.integer
        if announced.insert(devicePath).inserted {
            broadcaster.yield(.discovered(DiscoveredSensor(identity: identity, rssi: rssi, services: services)))
        } else {
            broadcaster.yield(.updated(identity, rssi: rssi))
        }
    }

    // MARK: Connections

    /// Connects a sensor and keeps it connected until ``disconnect(_:)``.
    public func connect(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        guard sessions[sensor.address.uppercased()] == nil else { return }
        let devicePath = BlueZPaths.device(adapter: path, address: sensor.address)
        let address = sensor.address.uppercased()
        guard cache.properties(devicePath, ObjectCache.deviceInterface) != nil else {
            if options.connectsUnknownDevices && options.reconnects {
                // A configured strap not seen yet: rediscover it and connect when it shows up.
                var session = Session(identity: sensor, policy: ReconnectPolicy(configuration: reconnectConfiguration))
                session.lastOutcome = .deviceObjectMissing
                sessions[address] = session
                sessions[address]?.task = Task { [weak self] in await self?.reconnect(address: address) }
            }
            throw .unknownSensor(sensor)
        }
        let identity = identity(ofDevice: devicePath) ?? sensor
        sessions[address] = Session(identity: identity, policy: ReconnectPolicy(configuration: reconnectConfiguration))
        do {
            try await establish(address: address)
        } catch {
            // The caller learns the first attempt failed; the adapter keeps trying until disconnect().
            if options.reconnects, sessions[address] != nil {
                sessions[address]?.lastOutcome = Self.outcome(of: error)
                sessions[address]?.task = Task { [weak self] in await self?.reconnect(address: address) }
            } else {
                sessions[address] = nil
            }
            throw error
        }
    }

    /// One connection attempt; throws what the caller should see, schedules nothing.
    private func establish(address: String) async throws(SensorAdapterError) {
        guard let session = sessions[address] else { return }
        let identity = session.identity
        let devicePath = BlueZPaths.device(adapter: path, address: address)
        broadcaster.yield(.connectionChanged(identity, .connecting))
        do {
            try await call(devicePath, ObjectCache.deviceInterface, "Connect", timeout: options.connectTimeout)
        } catch  where error.code == .alreadyConnected {
        } catch  where error.code == .notReady {
            do {
                try await powerOn()
                try await call(devicePath, ObjectCache.deviceInterface, "Connect", timeout: options.connectTimeout)
            } catch {
                broadcaster.yield(.connectionChanged(identity, .disconnected(.adapterUnavailable)))
                throw Self.failure(error)
            }
        } catch  where error.code == .inProgress {
            // Someone else's Connect is pending: wait for it, else cancel it with Disconnect.
            if !(await waitFor(options.connectTimeout, { $0.deviceConnected(devicePath) })) {
                _ = try? await call(devicePath, ObjectCache.deviceInterface, "Disconnect")
                throw .failed(name: error.name, message: "a pending connection never completed")
            }
        } catch {
            // An error does not always mean no link (abort-by-local, some peers): trust Connected,
            // then verify services as usual.
            let linkUp = await waitFor(.seconds(1)) { $0.deviceConnected(devicePath) }
            guard linkUp else {
                var reason = error.description
                if error.code == .authenticationFailed && !options.repairsOnAuthenticationFailure {
                    reason = Self.bondLost(address)
                    logger.warning("the strap's bond is lost", metadata: ["sensor": "\(address)", "error": "\(error)"])
                }
                broadcaster.yield(.connectionChanged(identity, .disconnected(.failed(reason))))
                throw Self.failure(error)
            }
            logger.info("Connect failed but the link is up", metadata: ["sensor": "\(address)", "error": "\(error)"])
        }
        broadcaster.yield(.connectionChanged(identity, .connected))
        // ServicesResolved can be true with no GATT objects exported: wait for the characteristic too.
        let resolved = await waitFor(options.servicesTimeout) { cache in
            cache.deviceServicesResolved(devicePath)
                && Self.measurementCharacteristics.contains { cache.path(of: $0, on: devicePath) != nil }
        }
        guard resolved else {
            _ = try? await call(devicePath, ObjectCache.deviceInterface, "Disconnect")
            broadcaster.yield(.connectionChanged(identity, .disconnected(.timeout)))
            throw .failed(
                name: "org.hrbridge.Error.ServicesNotResolved", message: "services never resolved for \(address)")
        }
        try await subscribe(address: address, devicePath: devicePath, identity: identity)
    }

    static let measurementCharacteristics: [GATTCharacteristic] = [
        .heartRateMeasurement, .cyclingPowerMeasurement, .cscMeasurement, .rscMeasurement, .indoorBikeData,
        .treadmillData,
    ]

    private func subscribe(address: String, devicePath: String, identity: SensorIdentity)
        async throws(SensorAdapterError)
    {
        var services: Set<GATTService> = []
        for characteristic in Self.measurementCharacteristics {
            guard let characteristicPath = cache.path(of: characteristic, on: devicePath) else { continue }
            services.insert(characteristic.service)
            // BlueZ keeps a notify session per sender across reconnects and re-arms it by itself:
            // a second StartNotify would stack on peers that do not de-duplicate.
            guard sessions[address]?.subscribed.contains(characteristicPath) != true,
                sessions[address]?.sockets[characteristicPath] == nil
            else { continue }
            if options.notifications == .acquireNotify,
                cache.properties(characteristicPath, ObjectCache.characteristicInterface)?["NotifyAcquired"] != nil
            {
                do {
                    try await acquire(
                        characteristicPath, characteristic: characteristic, address: address, identity: identity)
                    continue
                } catch {
                    logger.info("AcquireNotify failed, using StartNotify", metadata: ["error": "\(error)"])
                }
            }
            // Subscribed before the call: the first notifications can come before StartNotify's reply.
            sessions[address]?.subscribed.insert(characteristicPath)
            do {
                try await call(characteristicPath, ObjectCache.characteristicInterface, "StartNotify")
            } catch  where error.code == .inProgress {
            } catch {
                sessions[address]?.subscribed.remove(characteristicPath)
                _ = try? await call(devicePath, ObjectCache.deviceInterface, "Disconnect")
                broadcaster.yield(.connectionChanged(identity, .disconnected(.failed("StartNotify: \(error)"))))
                throw Self.failure(error)
            }
        }
        // Battery: Battery1 where BlueZ claims 0x180F (≤ 5.79), else the characteristic.
        if let percent = cache.properties(devicePath, ObjectCache.batteryInterface)?["Percentage"]?.integer {
            broadcaster.yield(.batteryLevel(identity, UInt8(clamping: percent)))
            services.insert(.battery)
        } else if let batteryPath = cache.path(of: .batteryLevel, on: devicePath) {
            if let bytes = try? await read(batteryPath), let level = try? BatteryLevel(bytes: bytes) {
                broadcaster.yield(.batteryLevel(identity, level.percent))
            }
            let flags = cache.properties(batteryPath, ObjectCache.characteristicInterface)?["Flags"]?.arrayElements
            if flags?.contains(.string("notify")) == true {
                sessions[address]?.subscribed.insert(batteryPath)
                if (try? await call(batteryPath, ObjectCache.characteristicInterface, "StartNotify")) == nil {
                    sessions[address]?.subscribed.remove(batteryPath)
                }
            }
            services.insert(.battery)
        }
        if let locationPath = cache.path(of: .bodySensorLocation, on: devicePath),
            let bytes = try? await read(locationPath), let location = try? BodySensorLocation(bytes: bytes)
        {
            broadcaster.yield(.bodySensorLocation(identity, location))
        }
        var information = DeviceInformation()
        for characteristic in DeviceInformationString.characteristics {
            guard let characteristicPath = cache.path(of: characteristic, on: devicePath),
                let bytes = try? await read(characteristicPath),
                let text = try? DeviceInformationString.decode(bytes, characteristic: characteristic)
            else { continue }
            services.insert(.deviceInformation)
            switch characteristic {
            case .manufacturerName: information.manufacturerName = text
            case .modelNumber: information.modelNumber = text
            case .serialNumber: information.serialNumber = text
            case .firmwareRevision: information.firmwareRevision = text
            case .hardwareRevision: information.hardwareRevision = text
            default: information.softwareRevision = text
            }
        }
        if information != DeviceInformation() { broadcaster.yield(.deviceInformation(identity, information)) }
        sessions[address]?.ready = true
        var random = SystemRandomNumberGenerator()
        _ = sessions[address]?.policy.next(after: .connected, using: &random)
        sessions[address]?.lastOutcome = .failed(nil)
        broadcaster.yield(.servicesReady(identity, services))
        broadcaster.yield(.connectionChanged(identity, .ready))
    }

    /// Takes the notification socket; each datagram is one frame. BlueZ closes it on disconnect.
    private func acquire(
        _ characteristicPath: String, characteristic: GATTCharacteristic, address: String, identity: SensorIdentity
    ) async throws(BlueZError) {
        let reply = try await call(
            characteristicPath, ObjectCache.characteristicInterface, "AcquireNotify", [.propertyMap([])],
            keepingDescriptors: true)
        guard reply.count == 2, case .unixFD(let descriptor) = reply[0], descriptor >= 0, let mtu = reply[1].integer
        else {
            // Ours either way: close what a malformed reply carried.
            for case .unixFD(let descriptor) in reply where descriptor >= 0 { close(descriptor) }
            throw BlueZError(DBusError.unexpectedReply("AcquireNotify returned \(reply)"))
        }
        let socket = NotificationSocket(descriptor: descriptor, mtu: mtu)
        sessions[address]?.sockets[characteristicPath] = socket
        Task { [weak self, broadcaster, clock, logger] in
            for await bytes in socket.datagrams {
                Self.deliver(
                    bytes, characteristic: characteristic, from: identity, to: broadcaster, clock: clock, logger: logger
                )
            }
            await self?.socketClosed(characteristicPath, address: address)
        }
    }

    private func socketClosed(_ characteristicPath: String, address: String) {
        sessions[address]?.sockets[characteristicPath]?.close()
        sessions[address]?.sockets[characteristicPath] = nil
    }

    private func read(_ characteristicPath: String) async throws(BlueZError) -> [UInt8] {
        let reply = try await call(
            characteristicPath, ObjectCache.characteristicInterface, "ReadValue", [.propertyMap([])])
        return reply.first?.bytes ?? []
    }

    /// Polls the cache until `condition` holds or `timeout` passes (signals update it meanwhile).
    private func waitFor(_ timeout: Duration, _ condition: (ObjectCache) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(cache) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(cache)
    }

    /// Disconnects a sensor and stops reconnecting it.
    public func disconnect(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let address = sensor.address.uppercased()
        guard let session = sessions.removeValue(forKey: address) else { throw .notConnected(sensor) }
        session.task?.cancel()
        let devicePath = BlueZPaths.device(adapter: path, address: address)
        for characteristic in session.subscribed {
            _ = try? await call(characteristic, ObjectCache.characteristicInterface, "StopNotify")
        }
        for socket in session.sockets.values { socket.close() }
        do {
            try await call(devicePath, ObjectCache.deviceInterface, "Disconnect")
        } catch {
            throw Self.failure(error)
        }
        broadcaster.yield(.connectionChanged(session.identity, .disconnected(.requested)))
    }

    /// Sets Trusted, then pairs; an existing bond counts as success.
    public func pair(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let devicePath = BlueZPaths.device(adapter: path, address: sensor.address)
        guard cache.properties(devicePath, ObjectCache.deviceInterface) != nil else { throw .unknownSensor(sensor) }
        try await trust(sensor)
        do {
            try await call(devicePath, ObjectCache.deviceInterface, "Pair", timeout: .seconds(60))
        } catch  where error.code == .alreadyExists {
        } catch {
            throw Self.failure(error)
        }
    }

    /// Marks a sensor trusted so BlueZ lets it reconnect.
    public func trust(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let devicePath = BlueZPaths.device(adapter: path, address: sensor.address)
        guard cache.properties(devicePath, ObjectCache.deviceInterface) != nil else { throw .unknownSensor(sensor) }
        do {
            try await setProperty(devicePath, ObjectCache.deviceInterface, "Trusted", .boolean(true))
        } catch {
            throw Self.failure(error)
        }
    }

    /// Removes the device and its bond from BlueZ.
    public func forget(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let address = sensor.address.uppercased()
        sessions.removeValue(forKey: address)?.task?.cancel()
        let devicePath = BlueZPaths.device(adapter: path, address: address)
        guard cache.properties(devicePath, ObjectCache.deviceInterface) != nil else { throw .unknownSensor(sensor) }
        do {
            try await call(path, ObjectCache.adapterInterface, "RemoveDevice", [.objectPath(devicePath)])
        } catch {
            throw Self.failure(error)
        }
    }

    /// Writes "reset energy expended" to the Heart Rate Control Point; ATT error 0x80 is typed.
    public func resetEnergyExpended(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let devicePath = BlueZPaths.device(adapter: path, address: sensor.address)
        guard sessions[sensor.address.uppercased()]?.ready == true else { throw .notConnected(sensor) }
        guard let controlPoint = cache.path(of: .heartRateControlPoint, on: devicePath) else {
            throw .failed(name: "org.hrbridge.Error.NotSupported", message: "no heart rate control point")
        }
        do {
            try await call(
                controlPoint, ObjectCache.characteristicInterface, "WriteValue",
                [
                    .bytes(HeartRateControlPoint.resetEnergyExpended.encoded()),
                    .propertyMap([("type", .string("request"))]),
                ])
        } catch {
            if case .attError(let code) = error.code {
                throw .controlPoint(HeartRateControlPoint.error(forATTError: ATTErrorCode(rawValue: code)))
            }
            throw Self.failure(error)
        }
    }

    // MARK: Signals

    private func handle(_ signal: DBusSignal) {
        if signal.member == "PropertiesChanged", signal.interface == "org.freedesktop.DBus.Properties",
            signal.arguments.count >= 2,
            signal.arguments[0].string == ObjectCache.characteristicInterface,
            case .dictionary(_, _, let entries) = signal.arguments[1], entries.count == 1,
            entries[0].key.string == "Value", let bytes = entries[0].value.bytes
        {
            // The hot path, a notification: one lookup; Value is not cached (nothing reads it back).
            characteristicNotified(path: signal.path, bytes: bytes)
            return
        }
        appliedDuringSnapshot?.append(signal)
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            routes = [:]
            guard signal.arguments.count == 2, let objectPath = signal.arguments[0].string else { return }
            cache.add(path: objectPath, interfaces: signal.arguments[1])
            if signal.arguments[1].stringDictionary?[ObjectCache.deviceInterface] != nil {
                announceIfMatching(objectPath)
                advertised(objectPath)
            }
            // A GATT service seen before the advertised UUIDs (a cached device) makes it a match too.
            if signal.arguments[1].stringDictionary?[ObjectCache.serviceInterface] != nil,
                let devicePath = BlueZPaths.device(containing: objectPath)
            {
                announceIfMatching(devicePath)
            }
            if objectPath == path, signal.arguments[1].stringDictionary?[ObjectCache.adapterInterface] != nil {
                // The adapter is back (plugged in again): straps that are backing off try now.
                refreshAvailability()
                for address in sessions.keys { retryNow(address) }
            }
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            routes = [:]
            guard signal.arguments.count == 2, let objectPath = signal.arguments[0].string else { return }
            let interfaces = signal.arguments[1].arrayElements?.compactMap(\.string) ?? []
            let identity = identity(ofDevice: objectPath)
            cache.remove(path: objectPath, interfaces: interfaces)
            if objectPath == path, interfaces.contains(ObjectCache.adapterInterface) {
                // The adapter was unplugged: its links are gone; sessions wait for it to return.
                refreshAvailability()
                for address in sessions.keys { linkDropped(address: address, reason: .adapterUnavailable) }
            }
            if interfaces.contains(ObjectCache.deviceInterface), objectPath.hasPrefix(path + "/"), let identity {
                announced.remove(objectPath)
                broadcaster.yield(.lost(identity))
                // Removed while connected (expired, or removed by another client): the link is gone too.
                if let address = BlueZPaths.address(ofDevice: objectPath) { linkDropped(address: address) }
            }
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard let (interface, changed, invalidated) = Self.propertyChange(in: signal) else { return }
            cache.update(path: signal.path, interface: interface, changed: changed, invalidated: invalidated)
            propertiesChanged(path: signal.path, interface: interface, changed: changed)
        default:
            break
        }
    }

    /// Loads BlueZ's object tree. The signal stream runs meanwhile, and the reply may predate
    /// signals applied while it was on its way (a strap's services resolving, a new adapter): those
    /// are applied again on top of the snapshot, so an older reply never hides them.
    private func loadSnapshot() async throws(SensorAdapterError) {
        appliedDuringSnapshot = []
        defer { appliedDuringSnapshot = nil }
        let snapshot = try await Self.managedObjects(connection)
        cache.load(snapshot: snapshot)
        for signal in appliedDuringSnapshot ?? [] { reapply(signal) }
    }

    /// The interface, changed and invalidated properties of a `PropertiesChanged` signal.
    private static func propertyChange(in signal: DBusSignal) -> (String, [String: DBusValue], [String])? {
        guard signal.arguments.count >= 2, let interface = signal.arguments[0].string,
            let changed = signal.arguments[1].stringDictionary
        else { return nil }
        let invalidated =
            signal.arguments.count > 2 ? signal.arguments[2].arrayElements?.compactMap(\.string) ?? [] : []
        return (interface, changed, invalidated)
    }

    /// Applies a signal's change to the cache only (its events were reported when it arrived).
    private func reapply(_ signal: DBusSignal) {
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard signal.arguments.count == 2, let objectPath = signal.arguments[0].string else { return }
            cache.add(path: objectPath, interfaces: signal.arguments[1])
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard signal.arguments.count == 2, let objectPath = signal.arguments[0].string else { return }
            cache.remove(path: objectPath, interfaces: signal.arguments[1].arrayElements?.compactMap(\.string) ?? [])
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard let (interface, changed, invalidated) = Self.propertyChange(in: signal) else { return }
            cache.update(path: signal.path, interface: interface, changed: changed, invalidated: invalidated)
        default:
            break
        }
    }

    private func propertiesChanged(path objectPath: String, interface: String, changed: [String: DBusValue]) {
        switch interface {
        case ObjectCache.characteristicInterface:
            guard let bytes = changed["Value"]?.bytes else { return }
            characteristicNotified(path: objectPath, bytes: bytes)
        case ObjectCache.deviceInterface:
            guard objectPath.hasPrefix(path + "/") else { return }
            if changed["RSSI"] != nil || changed["UUIDs"] != nil { announceIfMatching(objectPath) }
            if changed["RSSI"] != nil { advertised(objectPath) }
            if changed["Connected"]?.bool == false, let address = BlueZPaths.address(ofDevice: objectPath) {
                linkDropped(address: address)
            }
        case ObjectCache.adapterInterface where objectPath == path:
            refreshAvailability()
            switch changed["Powered"]?.bool {
            case false?:
                // Powered off (or rfkill): every link on this adapter is gone.
                for address in sessions.keys { linkDropped(address: address, reason: .adapterUnavailable) }
            case true?:
                // Powered back on: straps that are backing off try now.
                for address in sessions.keys { retryNow(address) }
            case nil:
                break
            }
        case ObjectCache.batteryInterface:
            guard let percent = changed["Percentage"]?.integer,
                let devicePath = BlueZPaths.device(containing: objectPath),
                let address = BlueZPaths.address(ofDevice: devicePath), let session = sessions[address]
            else { return }
            broadcaster.yield(.batteryLevel(session.identity, UInt8(clamping: percent)))
        default:
            break
        }
    }

    /// A `Value` change on a characteristic: delivered when it is one of a wanted strap's subscriptions.
    private func characteristicNotified(path objectPath: String, bytes: [UInt8]) {
        let route: (address: String, characteristic: GATTCharacteristic)
        if let known = routes[objectPath] {
            route = known
        } else {
            guard let devicePath = BlueZPaths.device(containing: objectPath),
                let address = BlueZPaths.address(ofDevice: devicePath),
                let characteristic = cache.characteristic(at: objectPath)
            else { return }
            route = (address, characteristic)
            routes[objectPath] = route
        }
        guard let session = sessions[route.address], session.subscribed.contains(objectPath) else { return }
        Self.deliver(
            bytes, characteristic: route.characteristic, from: session.identity, to: broadcaster, clock: clock,
            logger: logger)
    }

    /// Rebuilds the loop thread's routes from the sessions' subscriptions and the object cache.
    private func publishFastRoutes() {
        var published: [String: FastRoute] = [:]
        for session in sessions.values {
            for characteristicPath in session.subscribed {
                guard let characteristic = cache.characteristic(at: characteristicPath) else { continue }
                published[characteristicPath] = FastRoute(identity: session.identity, characteristic: characteristic)
            }
        }
        fastRoutes.routes.withLock { $0 = published }
    }

    /// Decodes a notification and delivers the measurement, or the typed error with the frame's hex.
    /// Runs on the actor or on the D-Bus loop thread (the fast path).
    private static func deliver(
        _ bytes: [UInt8], characteristic: GATTCharacteristic, from identity: SensorIdentity,
        to broadcaster: EventBroadcaster<SensorEvent>, clock: any WallClock, logger: Logger
    ) {
        do {
            let value = try GATTValue(characteristic: characteristic, bytes: bytes)
            if case .batteryLevel(let level) = value {
                broadcaster.yield(.batteryLevel(identity, level.percent))
                return
            }
            broadcaster.yield(
                .measurement(
                    SensorMeasurement(
                        sensor: identity, characteristic: characteristic, value: value, receivedAt: clock.now())))
        } catch {
            // Debug only: the event's consumer logs it, and hides a guest's bytes.
            logger.debug(
                "frame refused",
                metadata: [
                    "sensor": "\(identity)", "error": "\(error)",
                    "bytes": "\(bytes.map { String($0, radix: 16) }.joined(separator: " "))",
                ])
            broadcaster.yield(.decodingFailed(identity, error, bytes: bytes))
        }
    }

    /// The link dropped: report it with its reason, then reconnect unless asked not to.
    private func linkDropped(address: String, reason: DisconnectReason = .linkLost) {
        guard var session = sessions[address], session.ready else { return }
        session.ready = false
        broadcaster.yield(.connectionChanged(session.identity, .disconnected(reason)))
        guard options.reconnects else {
            sessions[address] = nil
            return
        }
        session.task?.cancel()
        session.task = Task { [weak self] in await self?.reconnect(address: address) }
        sessions[address] = session
    }

    /// Retries as ``ReconnectPolicy`` says until connected or the session is dropped.
    private func reconnect(address: String) async {
        var random = SystemRandomNumberGenerator()
        let devicePath = BlueZPaths.device(adapter: path, address: address)
        while !Task.isCancelled, let session = sessions[address], !session.ready {
            var outcome = session.lastOutcome
            if cache.properties(devicePath, ObjectCache.deviceInterface) == nil { outcome = .deviceObjectMissing }
            guard let action = sessions[address]?.policy.next(after: outcome, using: &random) else { return }
            sessions[address]?.backingOff = true
            switch action {
            case .none:
                return
            case .connect(let delay):
                try? await Task.sleep(for: delay)
            case .rediscover:
                // The object expired: discovery brings it back when the strap advertises.
                await discoverToReconnect()
                let wait = max(sessions[address]?.policy.nominalDelay ?? .zero, options.initialReconnectDelay)
                _ = await waitFor(wait) { $0.properties(devicePath, ObjectCache.deviceInterface) != nil }
            case .removeAndRepair:
                // Not a backoff: the device reappearing must not start a Connect before the Pair.
                sessions[address]?.backingOff = false
                await repair(address: address, devicePath: devicePath)
            }
            guard !Task.isCancelled, sessions[address] != nil else { return }
            sessions[address]?.backingOff = false
            guard cache.properties(devicePath, ObjectCache.deviceInterface) != nil else {
                sessions[address]?.lastOutcome = .deviceObjectMissing
                continue
            }
            do {
                try await establish(address: address)
                await stopReconnectDiscoveryIfAllReady()
                return
            } catch {
                sessions[address]?.lastOutcome = Self.outcome(of: error)
                logger.info("reconnect failed", metadata: ["sensor": "\(address)", "error": "\(error)"])
            }
        }
    }

    /// A wanted strap that is backing off advertised (or reappeared): connect now, not after the delay.
    private func advertised(_ devicePath: String) {
        guard devicePath.hasPrefix(path + "/"), let address = BlueZPaths.address(ofDevice: devicePath) else { return }
        retryNow(address)
    }

    /// Cuts a strap's backoff short (at most once a second).
    private func retryNow(_ address: String) {
        guard let session = sessions[address], !session.ready, session.backingOff, options.reconnects else { return }
        let now = clock.now()
        if let last = session.advertisedRetry, now.timeIntervalSince(last) < 1 { return }
        sessions[address]?.advertisedRetry = now
        session.task?.cancel()
        sessions[address]?.lastOutcome = .advertised
        sessions[address]?.backingOff = false
        sessions[address]?.task = Task { [weak self] in await self?.reconnect(address: address) }
    }

    /// What a strap whose key is gone is reported with, when re-pairing is not opted in.
    static func bondLost(_ address: String) -> String {
        "the bond is lost (the strap was reset, or another device answers with its address): "
            + "pair it again (hrbridge pair \(address)) or set repair_on_key_loss = true"
    }

    /// Starts discovery to find a strap again, unless one is already running.
    private func discoverToReconnect() async {
        guard discoveryServices == nil else { return }
        try? await startDiscovery(services: [.heartRate])
        discoveringToReconnect = discoveryServices != nil
        // A strap may have come back while StartDiscovery was on its way.
        await stopReconnectDiscoveryIfAllReady()
    }

    /// Discovery competes with connections for the radio: stops ours once every strap is back.
    private func stopReconnectDiscoveryIfAllReady() async {
        guard discoveringToReconnect, sessions.values.allSatisfy(\.ready) else { return }
        discoveringToReconnect = false
        try? await stopDiscovery()
    }

    /// The bond is stale (the strap forgot its key): remove the device, rediscover it, pair again.
    private func repair(address: String, devicePath: String) async {
        logger.notice("authentication failed: removing and pairing again", metadata: ["sensor": "\(address)"])
        if cache.properties(devicePath, ObjectCache.deviceInterface) != nil {
            _ = try? await call(path, ObjectCache.adapterInterface, "RemoveDevice", [.objectPath(devicePath)])
            _ = await waitFor(.seconds(2)) { $0.properties(devicePath, ObjectCache.deviceInterface) == nil }
        }
        await discoverToReconnect()
        guard
            await waitFor(
                options.rediscoveryTimeout, { $0.properties(devicePath, ObjectCache.deviceInterface) != nil }),
            let identity = sessions[address]?.identity
        else { return }
        do {
            try await pair(identity)
        } catch {
            logger.info("pairing again failed", metadata: ["sensor": "\(address)", "error": "\(error)"])
        }
    }

    /// The policy's view of a failed attempt.
    static func outcome(of error: SensorAdapterError) -> ReconnectPolicy.Outcome {
        switch error {
        case .failed(let name, let message): .failed(BlueZError.classify(name: name, message: message))
        case .unknownSensor: .deviceObjectMissing
        case .adapterUnavailable: .failed(.notReady)
        default: .failed(nil)
        }
    }

    /// bluetoothd left or came back: drop stale state, re-snapshot, re-arm.
    private func ownerChanged(_ change: NameOwnerChange) async {
        for address in sessions.keys {
            if sessions[address]?.ready == true {
                sessions[address]?.ready = false
                sessions[address]?.subscribed = []
                if let identity = sessions[address]?.identity {
                    broadcaster.yield(.connectionChanged(identity, .disconnected(.adapterUnavailable)))
                }
            }
        }
        cache = ObjectCache()
        announced = []
        routes = [:]
        serviceRunning = change.newOwner != nil
        guard serviceRunning else {
            refreshAvailability()
            return
        }
        try? await loadSnapshot()
        refreshAvailability()
        await registerAgent()
        if let services = discoveryServices { try? await startDiscovery(services: services) }
        for address in sessions.keys {
            sessions[address]?.task?.cancel()
            sessions[address]?.task = Task { [weak self] in await self?.reconnect(address: address) }
        }
    }
}

extension BlueZAdapter {
    /// Whether the adapter can be used now.
    public var currentAvailability: AdapterAvailability { availability }

    /// Works out the adapter's availability and reports a change with ``SensorEvent/adapterChanged(_:_:)``.
    private func refreshAvailability() {
        let now: AdapterAvailability
        if !serviceRunning {
            now = .serviceStopped
        } else if let properties = cache.properties(path, ObjectCache.adapterInterface) {
            now = properties["Powered"]?.bool == false ? .poweredOff : .ready
        } else {
            now = .absent
        }
        guard now != availability else { return }
        availability = now
        logger.notice("adapter \(now)", metadata: ["adapter": "\(name)"])
        broadcaster.yield(.adapterChanged(name, now))
    }
}

extension ObjectCache {
    func deviceConnected(_ devicePath: String) -> Bool {
        properties(devicePath, Self.deviceInterface)?["Connected"]?.bool == true
    }

    func deviceServicesResolved(_ devicePath: String) -> Bool {
        properties(devicePath, Self.deviceInterface)?["ServicesResolved"]?.bool == true
    }
}

/// A device BlueZ knows, as `hrbridge devices` lists it.
public struct KnownDevice: Hashable, Sendable {
    /// Adapter, address and name.
    public var identity: SensorIdentity
    /// Last signal strength.
    public var rssi: Int?
    /// Fitness services it advertises or exposes.
    public var services: Set<GATTService>
    public var paired: Bool
    public var trusted: Bool
    /// Bonded (keys stored).
    public var bonded: Bool
    public var connected: Bool
    /// GATT services resolved.
    public var servicesResolved: Bool
}
