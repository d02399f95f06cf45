import DBus

/// Whether bluetoothd holds our GATT application and advertisement, and what to do next: a pure
/// state machine. Facts about the bus go in; registration calls to make and events to report come
/// out. Nothing here waits or polls: every retry is set off by a fact (bluetoothd starting, the
/// adapter appearing, an advertising instance freed).
struct PeripheralRegistration: Hashable, Sendable {
    /// A fact about bluetoothd, the adapter, or a registration call's outcome.
    enum Input: Hashable, Sendable {
        /// bluetoothd owns `org.bluez` (again): it knows nothing of us.
        case serviceStarted(adapterPresent: Bool, powered: Bool)
        /// Nobody owns `org.bluez` any more.
        case serviceStopped
        /// The adapter's object appeared (InterfacesAdded).
        case adapterAppeared(powered: Bool)
        /// The adapter's object went away.
        case adapterVanished
        /// The adapter's `Powered` changed.
        case poweredChanged(Bool)
        case applicationRegistered
        case applicationFailed(DBusError)
        case advertisementRegistered
        case advertisementFailed(DBusError)
        /// bluetoothd called `Release` on the advertisement.
        case advertisementReleased
        /// The adapter has an advertising instance free again (`SupportedInstances` > 0).
        case advertisingInstanceFreed
        /// The peripheral stops.
        case stopped
        /// Advertise afresh: a strap was just connected on the same adapter, and connecting
        /// paused advertising in the kernel.
        case readvertiseRequested
        /// Stop advertising for this reason (the strap comes first on an adapter that cannot be
        /// central and peripheral at once); the application stays registered.
        case pauseRequested(String)
        /// Advertise again after a pause.
        case resumeRequested
    }

    /// What to do.
    enum Action: Hashable, Sendable {
        case registerApplication
        case registerAdvertisement
        case unregisterAdvertisement
        case report(PeripheralEvent)
    }

    let adapter: String
    private(set) var serviceRunning = false
    /// Whether bluetoothd was ever seen (its absence then reads "stopped", not "not running").
    private(set) var serviceSeen = false
    private(set) var adapterPresent = false
    private(set) var powered = false
    private(set) var applicationRegistered = false
    private(set) var advertisementRegistered = false
    /// Why the last registration failed, until a fact changes.
    private(set) var failure: String?
    /// The advertisement was refused for want of an instance: retried when one is freed.
    private(set) var waitingForInstance = false
    private(set) var released = false
    /// Why advertising is paused on request, while it is.
    private(set) var paused: String?
    /// The advertisement is being registered afresh: its return is no news.
    private(set) var readvertising = false
    private(set) var isStopped = false
    /// Whether any fact came in yet (``HeartRatePeripheral/run()`` started).
    private(set) var hasStarted = false
    /// The advertising state last reported.
    private(set) var reported: PeripheralEvent?

    init(adapter: String) { self.adapter = adapter }

    /// Both the application and the advertisement are held by bluetoothd.
    var isRegistered: Bool { serviceRunning && applicationRegistered && advertisementRegistered }

    /// The advertisement is on the air.
    var isAdvertising: Bool { isRegistered && adapterPresent && powered }

    /// Why it is not advertising; `nil` while it is.
    var reason: String? {
        if isAdvertising { return nil }
        if !hasStarted { return "not started" }
        if isStopped { return "stopped" }
        if let paused, serviceRunning, adapterPresent { return paused }
        if !serviceRunning { return serviceSeen ? "bluetoothd stopped" : "bluetoothd not running" }
        if !adapterPresent { return "adapter \(adapter) missing" }
        if let failure { return failure }
        if released { return "advertisement released by bluetoothd" }
        if isRegistered && !powered { return "adapter \(adapter) powered off" }
        return "registering"
    }

    mutating func handle(_ input: Input) -> [Action] {
        hasStarted = true
        switch input {
        case .serviceStarted(let present, let isPowered):
            forgetRegistration()
            serviceRunning = true
            serviceSeen = true
            adapterPresent = present
            powered = isPowered
            return present ? [.registerApplication] : report()
        case .serviceStopped:
            forgetRegistration()
            serviceRunning = false
            adapterPresent = false
            return report()
        case .adapterAppeared(let isPowered):
            guard serviceRunning, !adapterPresent else { return [] }
            forgetRegistration()
            adapterPresent = true
            powered = isPowered
            return [.registerApplication]
        case .adapterVanished:
            guard adapterPresent else { return [] }
            // bluetoothd drops an adapter's applications and advertisements with it.
            forgetRegistration()
            adapterPresent = false
            return report()
        case .poweredChanged(let isPowered):
            powered = isPowered
            // A released advertisement is tried again once the adapter is back on.
            if isPowered, released, paused == nil, serviceRunning, adapterPresent, applicationRegistered {
                released = false
                return [.registerAdvertisement]
            }
            return report()
        case .applicationRegistered:
            applicationRegistered = true
            failure = nil
            return paused == nil ? [.registerAdvertisement] : report()
        case .applicationFailed(let error):
            // A reply lost after bluetoothd took it: ours already.
            if error.name == "org.bluez.Error.AlreadyExists" { return handle(.applicationRegistered) }
            return failed(error, call: "RegisterApplication")
        case .advertisementRegistered:
            if paused != nil {
                // Paused while the call was out: bluetoothd holds the advertisement now, so take it back.
                readvertising = false
                return [.unregisterAdvertisement] + report()
            }
            advertisementRegistered = true
            failure = nil
            released = false
            waitingForInstance = false
            defer { readvertising = false }
            return (readvertising ? [] : [.report(.registered(adapter: adapter))]) + report()
        case .advertisementFailed(let error):
            if error.name == "org.bluez.Error.AlreadyExists" { return handle(.advertisementRegistered) }
            waitingForInstance = error.name == "org.bluez.Error.NotPermitted"
            return failed(error, call: "RegisterAdvertisement")
        case .advertisementReleased:
            guard advertisementRegistered else { return [] }
            advertisementRegistered = false
            released = true
            return report()
        case .advertisingInstanceFreed:
            guard paused == nil, waitingForInstance, serviceRunning, adapterPresent, applicationRegistered,
                !advertisementRegistered
            else { return [] }
            waitingForInstance = false
            return [.registerAdvertisement]
        case .readvertiseRequested:
            guard paused == nil, advertisementRegistered, serviceRunning, adapterPresent else { return [] }
            advertisementRegistered = false
            // Quietly: apps see a moment's gap, not a state worth reporting.
            readvertising = true
            return [.unregisterAdvertisement, .registerAdvertisement]
        case .pauseRequested(let why):
            guard paused == nil else { return [] }
            paused = why
            let held = advertisementRegistered
            advertisementRegistered = false
            return (held ? [.unregisterAdvertisement] : []) + report()
        case .resumeRequested:
            guard paused != nil else { return [] }
            paused = nil
            guard serviceRunning, adapterPresent, applicationRegistered, !advertisementRegistered else {
                return report()
            }
            return [.registerAdvertisement]
        case .stopped:
            isStopped = true
            applicationRegistered = false
            advertisementRegistered = false
            return report()
        }
    }

    private mutating func forgetRegistration() {
        readvertising = false
        applicationRegistered = false
        advertisementRegistered = false
        failure = nil
        waitingForInstance = false
        released = false
    }

    private mutating func failed(_ error: DBusError, call: String) -> [Action] {
        if error.name == DBusError.unknownObjectName {
            // The adapter went away before its InterfacesRemoved reached us: wait for it to return.
            forgetRegistration()
            adapterPresent = false
        } else {
            failure = Self.describe(error, call: call)
        }
        return report()
    }

    /// A short reason for a refused registration, bounded (the message comes from the bus).
    static func describe(_ error: DBusError, call: String) -> String {
        switch error.name {
        case "org.bluez.Error.NotPermitted" where call == "RegisterAdvertisement":
            return "NotPermitted: no advertising instance left"
        case "org.bluez.Error.InvalidLength":
            return "InvalidLength: the advertisement does not fit"
        default:
            let name = error.name.split(separator: ".").last.map(String.init) ?? error.name
            let message = error.message.prefix(120)
            return message.isEmpty ? "\(call): \(name)" : "\(call): \(name): \(message)"
        }
    }

    /// The advertising state as an event, when it differs from what was last reported; nothing
    /// while a registration is under way.
    private mutating func report() -> [Action] {
        let reason = self.reason
        guard reason != "registering" else { return [] }
        let event = PeripheralEvent.advertising(on: isAdvertising, reason: reason ?? "registered with bluetoothd")
        guard event != reported else { return [] }
        reported = event
        return [.report(event)]
    }
}
