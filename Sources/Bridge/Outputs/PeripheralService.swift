import BlueZ
public import BridgeOut
public import DBus
import Foundation
import GATT
import JSONSupport
public import Logging
import Metrics
import Samples
import Sensors
public import ServiceLifecycle
public import Wire

/// `[peripheral]`: the daemon as a Bluetooth heart-rate sensor for Zwift, watches and phones.
///
/// Passes on the configured source's frames (a strap, the running session's primary strap,
/// or the simulator's first strap) through a ``HeartRatePeripheral`` on its adapter, and with
/// `alpha1` a second sensor on another adapter whose "heart rate" is the session's DFA α1 × 100.
/// Its state goes to the live hub as `peripheral` messages (and so to MQTT), to `/v1/health`
/// and to `/metrics`.
public actor PeripheralService: Service, PeripheralStateSource {
    private let settings: PeripheralSettings
    private let core: BridgeCore
    private let logger: Logger
    /// The adapter that serves apps, and whether straps share it.
    public nonisolated let placement: PeripheralPlacement
    /// The adapter of the α1 sensor, when there is one.
    public nonisolated let alpha1Adapter: String?
    private let peripheral: HeartRatePeripheral
    private let alpha1Peripheral: HeartRatePeripheral?
    /// Straps and apps on one adapter: advertising again after each strap's connection, the
    /// strap passed on first where the controller needs it.
    private let sharedAdapter: SharedAdapter?
    private var relay: HeartRateRelay
    private var source: OutputSource
    /// The last α1 of the followed session, passed on with each of its strap's frames.
    private var alpha1: Double?
    /// The session that α1 came from.
    private var alpha1Session: UUID?
    private var lastPublished: PeripheralJSON?

    /// - Parameters:
    ///   - simulatorStrap: the simulator's first strap, when the daemon runs the simulator.
    public init(
        settings: PeripheralSettings, core: BridgeCore, connection: DBusConnection, placement: PeripheralPlacement,
        alpha1Adapter: String?, simulatorStrap: String?, logger: Logger
    ) {
        self.settings = settings
        self.core = core
        self.logger = logger
        self.placement = placement
        self.alpha1Adapter = settings.alpha1 ? alpha1Adapter : nil
        var configuration = PeripheralConfiguration(
            adapter: placement.peripheral, localName: AdvertisedName.sanitized(settings.name))
        configuration.bodySensorLocation = settings.location
        configuration.energyControlPoint = settings.forwardEnergy
        peripheral = HeartRatePeripheral(connection: connection, configuration: configuration, logger: logger)
        if let adapter = self.alpha1Adapter {
            var identity = PeripheralConfiguration(
                adapter: adapter, localName: AdvertisedName.sanitized(settings.alpha1Name))
            identity.bodySensorLocation = .other
            identity.energyControlPoint = false
            alpha1Peripheral = HeartRatePeripheral(connection: connection, configuration: identity, logger: logger)
        } else {
            alpha1Peripheral = nil
        }
        sharedAdapter = placement.isShared ? SharedAdapter(adapter: placement.peripheral) : nil
        source = OutputSource(source: settings.source, simulatorStrap: simulatorStrap)
        relay = HeartRateRelay(
            address: source.address,
            options: .init(forwardRR: settings.forwardRR, forwardEnergy: settings.forwardEnergy))
    }

    public func run() async throws {
        let events = core.sensors.adapter.events()
        let messages = core.hub.subscribe(kinds: [.session, .hrv], byteBudget: 1 << 20)
        let peripheralEvents = peripheral.events()
        let alpha1Events = alpha1Peripheral?.events()
        await followSession()
        // Its events are heard from now on; a strap that came up before says so only here.
        await adoptStrapState()
        await excludeOurStraps()
        await publish()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [peripheral, logger] in
                do {
                    try await peripheral.run()
                } catch {
                    logger.error("the heart-rate peripheral stopped: \(error)")
                }
            }
            if let alpha1Peripheral, let alpha1Events {
                group.addTask { [logger] in
                    do {
                        try await alpha1Peripheral.run()
                    } catch {
                        logger.error("the α1 peripheral stopped: \(error)")
                    }
                }
                group.addTask { [weak self] in
                    for await event in alpha1Events { await self?.noted(event, alpha1: true) }
                }
            }
            group.addTask { [weak self] in
                for await event in events { await self?.handle(event) }
            }
            group.addTask { [weak self] in
                for await delivery in messages {
                    guard case .message(let message) = delivery else { continue }
                    await self?.handle(message)
                }
            }
            group.addTask { [weak self] in
                for await event in peripheralEvents { await self?.noted(event, alpha1: false) }
            }
            group.addTask { try? await gracefulShutdown() }
            await group.next()
            messages.finish()
            group.cancelAll()
        }
    }

    /// How many times the followed session was looked up; only the latest lookup is applied.
    private var followCalls = 0
    /// Link and battery events of the followed strap handled so far: a status read before one of
    /// them is older than what it said.
    private var strapEvents = 0

    // MARK: Frames

    private func handle(_ event: SensorEvent) async {
        switch event {
        case .connectionChanged(let strap, _) where strap.address == relay.address,
            .batteryLevel(let strap, _) where strap.address == relay.address:
            strapEvents += 1
        default:
            break
        }
        // Another strap of the session sent heart rate: the primary may have moved to it.
        if source.mayHaveMoved(event) { await followSession() }
        if case .connectionChanged(let strap, .ready) = event {
            // A strap the daemon holds is never counted or disconnected as an app.
            await excludeOurStraps()
            // Its connection paused advertising in the kernel (and a pause for the strap passed
            // on ends): from the event itself, whatever the relay already knew.
            if let sharedAdapter {
                await peripheral.shareAdapter(
                    sharedAdapter, strap: strap, up: true, passedOn: strap.address == relay.address)
            }
        }
        for action in relay.handle(event) {
            switch action {
            case .send(let frame):
                await peripheral.send(frame)
                if let alpha1Peripheral, let alpha1 {
                    // One α1 frame per strap frame: the watch sees a live sensor; the value is
                    // the last window's, never made up between windows.
                    let value = UInt16(min(max((alpha1 * 100).rounded(), 0), 300))
                    await alpha1Peripheral.send(HeartRateMeasurement(heartRate: value, sensorContact: .notSupported))
                }
            case .battery(let level):
                await peripheral.setBatteryLevel(level)
            case .source(let strap, let up):
                if let sharedAdapter, !up {
                    await peripheral.shareAdapter(sharedAdapter, strap: strap, up: false, passedOn: true)
                }
                await publish()
            }
        }
    }

    private func handle(_ message: LiveMessage) async {
        switch message.kind {
        case .session:
            // A session that ended leaves no α1 standing.
            if message.session == alpha1Session,
                let state = try? JSONText.decode(StateOnly.self, from: Data(message.json.utf8)).state,
                state == "ended" || state == "stopped"
            {
                alpha1 = nil
                alpha1Session = nil
            }
            guard settings.source == .session else { return }
            await followSession()
        case .hrv:
            guard alpha1Peripheral != nil, let session = message.session, await records(session),
                let window = try? JSONText.decode(Alpha1Only.self, from: Data(message.json.utf8))
            else { return }
            if let value = window.alpha1 {
                alpha1 = value
                alpha1Session = session
            }
        default:
            break
        }
    }

    /// Whether `session` is the one whose α1 goes out: the followed session, or (for a strap or
    /// the simulator) a session recording the strap passed on.
    private func records(_ session: UUID) async -> Bool {
        if settings.source == .session { return session == source.session }
        guard let address = relay.address, let recording = try? await core.sessions.session(session.uuidString)
        else { return false }
        return recording.sensors.contains { $0.address == address }
    }

    private struct StateOnly: Decodable {
        var state: String
    }

    private struct Alpha1Only: Decodable {
        var alpha1: Double?
    }

    /// Follows the oldest running session's primary heart-rate strap.
    private func followSession() async {
        followCalls += 1
        let call = followCalls
        let before = source.session
        // Copied out: an actor's stored value cannot be mutated across an await.
        var next = source
        let moved = await next.followSession(core.sessions)
        // A call that started later (a session message and a strap's frame at once) read the
        // sessions later: its answer stands, this older one is dropped.
        guard call == followCalls else { return }
        source = next
        if source.session != before { alpha1 = nil }
        guard moved else { return }
        relay.follow(source.address)
        let strap = await adoptStrapState()
        if let sharedAdapter {
            // A pause was for the strap passed on before; the new one's own state decides now.
            await peripheral.resumeAdvertising()
            if let strap {
                await peripheral.shareAdapter(sharedAdapter, strap: strap, up: relay.isUp, passedOn: true)
            }
        }
        logger.info("peripheral follows \(source.address ?? "no strap")")
        await excludeOurStraps()
        await publish()
    }

    /// The straps the daemon knows and the one passed on: not apps, on a shared adapter or not.
    private func excludeOurStraps() async {
        var straps = Set(await core.sensors.list().map { $0.address.uppercased() })
        if let address = relay.address { straps.insert(address) }
        await peripheral.setExcludedAddresses(straps)
    }

    /// The followed strap's link and battery level as the sensors know them now (its events say
    /// only what changes later); no strap: the battery level is unknown, never the last strap's.
    /// - Returns: the strap followed, through the adapter the sensors know it on.
    @discardableResult
    private func adoptStrapState() async -> SensorIdentity? {
        guard let address = relay.address else {
            await peripheral.setBatteryLevel(nil)
            return nil
        }
        let seen = strapEvents
        let status = await core.sensors.status(address)
        let strap = SensorIdentity(adapter: status?.adapter ?? "", address: address)
        // Another follow ran meanwhile (its own adoption stands), or the strap's own events
        // said something newer than this status.
        guard relay.address == address, strapEvents == seen else { return strap }
        relay.linkIs(up: status?.state == .ready)
        await peripheral.setBatteryLevel(status?.batteryLevel.flatMap { UInt8(exactly: $0) })
        return strap
    }

    // MARK: State

    private func noted(_ event: PeripheralEvent, alpha1: Bool) async {
        switch event {
        case .energyResetRequested:
            relay.resetEnergy()
        case .refusedWrite(let bytes):
            logger.notice("an app wrote \(bytes.count) bytes to the control point: refused")
        default:
            break
        }
        await publish()
    }

    /// The state as the API, MQTT and `/metrics` show it.
    public func snapshot() async -> PeripheralJSON {
        let status = await peripheral.status
        var json = PeripheralJSON(
            adapter: status.adapter, registered: status.registered, advertising: status.advertising,
            reason: status.reason, notifying: status.notifying, centrals: status.connectedCentrals,
            source: settings.source.description, following: relay.address, sourceUp: relay.isUp,
            framesIn: relay.framesIn, framesSent: status.framesSent, framesDropped: status.framesDropped,
            refusedWrites: status.refusedWrites)
        if let alpha1Peripheral {
            let other = await alpha1Peripheral.status
            json.alpha1 = PeripheralJSON.Alpha1(
                adapter: other.adapter, registered: other.registered, advertising: other.advertising,
                notifying: other.notifying, framesSent: other.framesSent, value: alpha1)
        }
        return json
    }

    /// A `peripheral` message on the live hub when the state changed (not for counters alone).
    private func publish() async {
        var current = await snapshot()
        current.framesSent = 0
        current.framesDropped = 0
        current.framesIn = 0
        current.alpha1?.value = nil
        current.alpha1?.framesSent = 0
        current.centrals = 0
        guard current != lastPublished else { return }
        lastPublished = current
        core.hub.publish(LiveMessage(kind: .peripheral, sensor: nil, payload: await snapshot()))
    }
}
