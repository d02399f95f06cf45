public import DBus
public import GATT
public import Logging
import Sensors
import Synchronization

/// hrbridge as a Bluetooth LE Heart Rate Sensor, through bluetoothd's D-Bus API: a GATT
/// application (Heart Rate 0x180D, Battery 0x180F, Device Information 0x180A) and an
/// advertisement, registered on one adapter.
///
/// A thin shell around pure values: ``PeripheralObjectTree`` (what is published),
/// ``PeripheralServer`` (answers bluetoothd's calls, on the D-Bus loop thread in arrival order)
/// and ``PeripheralRegistration`` (what to register when). `run()` feeds bus facts to them and
/// performs the registration calls; `+Bus` holds that part.
public actor HeartRatePeripheral {
    /// What `run()` waits for, in bus order per source.
    enum BusInput: Sendable {
        /// `org.bluez` has a new owner (`nil`: none).
        case owner(String?)
        /// A signal from `org.bluez`.
        case signal(DBusSignal)
        /// bluetoothd released the advertisement.
        case released
        /// The connection's signals ended.
        case connectionEnded
    }

    static let bluez = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let gattManagerInterface = "org.bluez.GattManager1"
    static let advertisingManagerInterface = "org.bluez.LEAdvertisingManager1"
    /// bluetoothd reads every object of the application before it answers.
    static let registrationTimeout: Duration = .seconds(10)
    /// Unregistering on the way out must not hold up a shutdown.
    static let unregistrationTimeout: Duration = .seconds(2)

    let connection: DBusConnection
    /// What is published, and where.
    public nonisolated let configuration: PeripheralConfiguration
    let logger: Logger
    let broadcaster = EventBroadcaster<PeripheralEvent>()
    /// Shared with the exported objects' handler, which answers on the D-Bus loop thread.
    let server: Mutex<PeripheralServer>
    var registration: PeripheralRegistration
    /// The adapter's object and its devices, as bluetoothd last showed them.
    var cache = ObjectCache()
    /// The unique name of the bluetoothd the cache and registrations belong to.
    var bluezOwner: String?
    var excludedAddresses: Set<String> = []
    var framesSent = 0
    var framesDropped = 0
    var rrIntervalsTrimmed = 0
    /// BlueZ messages refused for their shape (``MalformedBlueZMessage``).
    var malformedMessages = 0
    /// The kinds and members of refused messages already logged at warning level.
    var loggedMalformed: Set<String> = []
    var hasRun = false

    /// A peripheral for `configuration` on `connection` (the system bus); nothing is published
    /// before ``run()``.
    public init(connection: DBusConnection, configuration: PeripheralConfiguration, logger: Logger) {
        self.connection = connection
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "peripheral"] = "\(configuration.adapter)"
        self.logger = logger
        server = Mutex(PeripheralServer(tree: PeripheralObjectTree(configuration: configuration)))
        registration = PeripheralRegistration(adapter: configuration.adapter)
    }

    /// Events from now on; they end when ``run()`` returns.
    public nonisolated func events() -> AsyncStream<PeripheralEvent> { broadcaster.subscribe() }

    /// Sends one Heart Rate Measurement notification (`PropertiesChanged` of `Value` on 0x2A37)
    /// if an app is subscribed; otherwise counts a drop. No queue: nothing is ever re-sent or
    /// invented. RR intervals that would not fit the default ATT payload are left out (oldest
    /// first) and counted.
    public func send(_ measurement: HeartRateMeasurement) {
        let notification = server.withLock { server in
            server.notification(for: measurement).map { ($0.change, $0.trimmed, server.trustedCaller) }
        }
        guard let (change, trimmed, owner) = notification, let owner, emit(change, to: owner) else {
            framesDropped += 1
            return
        }
        framesSent += 1
        rrIntervalsTrimmed += trimmed
    }

    /// Sets the Battery Level (0x2A19) reads return, and notifies subscribers of a change. `nil`
    /// (or above 100) means unknown: reads are then refused rather than answered with a guess.
    public func setBatteryLevel(_ percent: UInt8?) {
        let notification = server.withLock { server in
            server.setBatteryLevel(percent).map { ($0, server.trustedCaller) }
        }
        if let (change, owner) = notification, let owner { _ = emit(change, to: owner) }
    }

    /// Addresses (our own straps) not counted as connected centrals.
    public func setExcludedAddresses(_ addresses: Set<String>) {
        excludedAddresses = Set(addresses.map { $0.uppercased() })
    }

    /// The current state and counters.
    public var status: PeripheralStatus {
        let (notifying, refusedWrites, refusedCalls) = server.withLock {
            ($0.isNotifying, $0.refusedWrites, $0.refusedCalls)
        }
        return PeripheralStatus(
            adapter: configuration.adapter, registered: registration.isRegistered,
            advertising: registration.isAdvertising, reason: registration.reason, notifying: notifying,
            connectedCentrals: connectedCentrals, framesSent: framesSent, framesDropped: framesDropped,
            refusedWrites: refusedWrites, refusedCalls: refusedCalls, rrIntervalsTrimmed: rrIntervalsTrimmed)
    }

    /// Devices connected to the adapter, excluding ``setExcludedAddresses(_:)``.
    var connectedCentrals: Int {
        cache.devices(under: configuration.adapterPath).count { path in
            guard let device = cache.properties(path, Self.deviceInterface), device["Connected"]?.bool == true else {
                return false
            }
            let address = device["Address"]?.string ?? BlueZPaths.address(ofDevice: path) ?? ""
            return !excludedAddresses.contains(address.uppercased())
        }
    }

    /// Answers a call on one of our objects (on the D-Bus loop thread, in arrival order).
    nonisolated func answer(_ call: DBusMethodCall, input: AsyncStream<BusInput>.Continuation) -> DBusMethodReply {
        let (outcome, owner) = server.withLock { server in (server.answer(call), server.trustedCaller) }
        if let caller = outcome.refusedCallerToLog {
            logger.warning(
                "refused a call from a connection that is not bluetoothd",
                metadata: ["sender": "\(caller)", "member": "\(call.member.prefix(64))", "path": "\(call.path)"])
        }
        for event in outcome.events { broadcaster.yield(event) }
        if let owner {
            for change in outcome.changes { _ = emit(change, to: owner) }
        }
        if outcome.released { input.yield(.released) }
        return outcome.reply
    }

    /// Emits `change` to bluetoothd only: heart-rate data is not broadcast to every listener on
    /// the system bus. Whether it was sent.
    nonisolated func emit(_ change: PeripheralServer.Change, to owner: String) -> Bool {
        do {
            try connection.emitSignal(
                path: change.path, interface: PeripheralObjectTree.propertiesInterface, member: "PropertiesChanged",
                arguments: change.signalArguments, destination: owner)
            return true
        } catch {
            logger.debug("cannot emit PropertiesChanged", metadata: ["error": "\(error)"])
            return false
        }
    }
}
