import DBus
import FoundationEssentials
import GATT
import Logging
import Sensors
import Synchronization

extension BlueZAdapter {
    /// Applies one `org.bluez` signal to the cache and turns it into the machines' inputs.
    func handle(_ signal: DBusSignal) {
        // Sent by a bluetoothd that has since left (queued before its owner change was applied):
        // its objects are gone, and applying it would bring them back into the new one's cache.
        guard !retiredOwners.contains(signal.sender) else {
            staleSignals += 1
            return
        }
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
        if let problem = BlueZShapes.problem(with: signal) { return refuse([problem]) }
        appliedDuringSnapshot?.append(signal)
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            routes = [:]
            guard signal.arguments.count == 2, let objectPath = signal.arguments[0].string else { return }
            let interfaces = signal.arguments[1].stringDictionary ?? [:]
            refuse(cache.add(path: objectPath, interfaces: signal.arguments[1]))
            if interfaces[ObjectCache.adapterInterface] != nil {
                // An adapter plugged in (again): it joins the pool.
                refreshAdapters()
            }
            if interfaces[ObjectCache.deviceInterface] != nil, let adapter = adapterName(ofDevice: objectPath),
                let address = BlueZPaths.address(ofDevice: objectPath)
            {
                announceIfMatching(objectPath)
                feed(address, .deviceAppeared(adapter: adapter))
            }
            // A GATT object may complete a device's services: announce it, and a strap resolving goes on.
            if interfaces[ObjectCache.deviceInterface] == nil,
                let devicePath = BlueZPaths.device(containing: objectPath)
            {
                if interfaces[ObjectCache.serviceInterface] != nil { announceIfMatching(devicePath) }
                servicesMayHaveResolved(devicePath)
            }
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            routes = [:]
            guard signal.arguments.count == 2, let objectPath = signal.arguments[0].string else { return }
            let interfaces = signal.arguments[1].arrayElements?.compactMap(\.string) ?? []
            let adapter = adapterName(ofDevice: objectPath)
            let address = BlueZPaths.address(ofDevice: objectPath)
            let lostIdentity = address.flatMap { address in adapter.map { identity(address, on: $0) } }
            cache.remove(path: objectPath, interfaces: interfaces)
            if interfaces.contains(ObjectCache.adapterInterface) {
                // The adapter was unplugged: its links are gone; its straps move or wait for it.
                refreshAdapters()
            }
            if interfaces.contains(ObjectCache.deviceInterface), let adapter, let address, let lostIdentity,
                pool.allows(adapter), BlueZPaths.device(containing: objectPath) == objectPath
            {
                if sightings(of: address).isEmpty {
                    announced.remove(address)
                    broadcaster.yield(.lost(lostIdentity))
                }
                // Removed while connected (expired, or removed by another client): the link is gone too.
                feed(address, .deviceRemoved(adapter: adapter))
                freeSlots()
            }
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard let (interface, changed, invalidated) = Self.propertyChange(in: signal) else { return }
            let checked = BlueZShapes.checked(changed, of: interface, at: signal.path)
            refuse(checked.refused)
            cache.update(path: signal.path, interface: interface, changed: checked.kept, invalidated: invalidated)
            propertiesChanged(path: signal.path, interface: interface, changed: checked.kept)
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
            guard let adapter = adapterName(ofDevice: objectPath), pool.allows(adapter),
                let address = BlueZPaths.address(ofDevice: objectPath)
            else { return }
            if changed["RSSI"] != nil || changed["UUIDs"] != nil { announceIfMatching(objectPath) }
            if changed["RSSI"] != nil { feed(address, .advertised(adapter: adapter)) }
            // A name first heard in a scan response, or an alias the user set: told for a strap
            // already listed, so what shows its name follows.
            if changed["Alias"] != nil || changed["Name"] != nil, announced.contains(address) || links[address] != nil {
                let rssi = cache.properties(objectPath, ObjectCache.deviceInterface)?["RSSI"]?.integer
                let renamed = identity(address, on: adapter)
                if let name = renamed.name { links[address]?.identity.name = name }
                broadcaster.yield(.updated(renamed, rssi: rssi))
            }
            if let manufacturerData = changed["ManufacturerData"] {
                broadcastHeard(manufacturerData, from: address, on: adapter)
            }
            switch changed["Connected"]?.bool {
            case true?:
                feed(address, .linkUp(adapter: adapter))
            case false?:
                feed(address, .linkDown(adapter: adapter))
                freeSlots()
            case nil:
                break
            }
            if changed["ServicesResolved"]?.bool == true { servicesMayHaveResolved(objectPath) }
            if changed["Paired"]?.bool == true, cache.services(of: objectPath).contains(.heartRate) {
                broadcaster.yield(.paired(identity(address, on: adapter)))
            }
        case ObjectCache.adapterInterface:
            if changed["Powered"] != nil { refreshAdapters() }
        case ObjectCache.batteryInterface:
            guard let percent = changed["Percentage"]?.integer,
                let devicePath = BlueZPaths.device(containing: objectPath),
                let adapter = adapterName(ofDevice: devicePath),
                let address = BlueZPaths.address(ofDevice: devicePath), links[address] != nil
            else { return }
            broadcaster.yield(.batteryLevel(identity(address, on: adapter), UInt8(clamping: percent)))
        default:
            break
        }
    }

    /// Manufacturer data from a wanted strap without a link: Polar's broadcast heart rate becomes a
    /// measurement `via: .advertisement`. A layout the decoder does not know is refused and reported.
    /// A reading under the address of a strap linked at that moment is refused too
    /// (`heardWhileLinked`): the link's notifications are the strap's, and one strap cannot be in
    /// two places, so the broadcast is either the strap repeating itself or someone else's radio.
    private func broadcastHeard(_ manufacturerData: DBusValue, from address: String, on adapter: String) {
        guard options.followsAdvertisements, let link = links[address],
            case .dictionary(_, _, let entries) = manufacturerData.unwrapped,
            let entry = entries.first(where: { $0.key.integer == Int(PolarHeartRateBroadcast.companyID) }),
            let bytes = entry.value.bytes
        else { return }
        let sender = identity(address, on: adapter)
        let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
        if let seen = addressTypeMismatch(devicePath, address: address) {
            broadcaster.yield(
                .advertisementRefused(
                    sender,
                    AdvertisementDecodingError(
                        company: PolarHeartRateBroadcast.companyID, bytes: bytes,
                        reason: .addressTypeMismatch(seen: seen))))
            return
        }
        let broadcast: PolarHeartRateBroadcast
        do {
            broadcast = try PolarHeartRateBroadcast(company: PolarHeartRateBroadcast.companyID, bytes: bytes)
        } catch {
            // A linked strap's own advertising is not read: only a reading is worth flagging.
            guard !link.machine.isReady else { return }
            logger.debug("broadcast refused", metadata: ["sensor": "\(address)", "error": "\(error)"])
            broadcaster.yield(.advertisementRefused(sender, error))
            return
        }
        guard !link.machine.isReady else {
            broadcaster.yield(
                .advertisementRefused(
                    sender,
                    AdvertisementDecodingError(
                        company: PolarHeartRateBroadcast.companyID, bytes: bytes, reason: .heardWhileLinked)))
            return
        }
        let firstHeard = link.broadcastHeardAt == nil
        links[address]?.broadcastHeardAt = clock.now()
        if firstHeard { feed(address, .broadcastHeard) }
        // BlueZ reports a change only, but the same reading can come back through another adapter.
        guard broadcast != link.lastBroadcast else { return }
        links[address]?.lastBroadcast = broadcast
        let frame = HeartRateMeasurement(
            heartRate: UInt16(broadcast.heartRate), sensorContact: broadcast.skinContact ? .detected : .notDetected)
        broadcaster.yield(
            .measurement(
                SensorMeasurement(
                    sensor: sender, characteristic: .heartRateMeasurement, value: .heartRateMeasurement(frame),
                    receivedAt: clock.now(), via: .advertisement)))
    }

    /// A strap resolving on this device's adapter goes on once its services are there.
    private func servicesMayHaveResolved(_ devicePath: String) {
        guard let address = BlueZPaths.address(ofDevice: devicePath), let adapter = adapterName(ofDevice: devicePath),
            case .resolving(adapter)? = links[address]?.machine.state, servicesResolved(address, on: adapter)
        else { return }
        feed(address, .servicesResolved(adapter: adapter))
    }

    /// Adapters that refused a link and now hold fewer: the straps waiting for a slot try them.
    private func freeSlots() {
        for adapter in pool.freeSlots(linksInUse: linksInUse) {
            logger.info("a link slot freed", metadata: ["adapter": "\(adapter)"])
            // Highest priority first: the first waiting strap takes the slot.
            for address in links.keys.sorted(by: { (-priority(of: $0), $0) < (-priority(of: $1), $1) }) {
                feed(address, .slotFreed(adapter: adapter))
            }
        }
    }

    /// A `Value` change on a characteristic: delivered when it is one of a wanted strap's subscriptions.
    private func characteristicNotified(path objectPath: String, bytes: [UInt8]) {
        if let pmd = pmdRoutes[objectPath] { return pmdNotified(pmd, path: objectPath, bytes: bytes) }
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
        guard let link = links[route.address], link.subscribed.contains(objectPath),
            let adapter = adapterName(ofDevice: objectPath)
        else { return }
        Self.deliver(
            bytes, characteristic: route.characteristic,
            from: SensorIdentity(adapter: adapter, address: route.address, name: link.identity.name),
            bonded: cache.deviceBonded(BlueZPaths.device(adapter: Self.adapterPath(adapter), address: route.address)),
            to: broadcaster, clock: clock, logger: logger)
    }

    /// The cache changed: rebuild the fast routes and wake the waiters whose condition holds.
    func cacheChanged() {
        publishFastRoutes()
        resumeSatisfiedWaiters()
        if cache.devicesRefused != loggedDevicesRefused {
            // Once per full cache (a new bluetoothd starts a new one).
            if loggedDevicesRefused == 0 {
                logger.warning(
                    "bluetoothd holds more devices than hrbridge follows; new ones are left out",
                    metadata: ["limit": "\(cache.deviceLimit)"])
            }
            loggedDevicesRefused = cache.devicesRefused
        }
    }

    /// Rebuilds the loop thread's routes from the links' subscriptions and the object cache.
    func publishFastRoutes() {
        var published: [String: FastRoute] = [:]
        for link in links.values {
            for characteristicPath in link.subscribed {
                guard let characteristic = cache.characteristic(at: characteristicPath),
                    let adapter = adapterName(ofDevice: characteristicPath)
                else { continue }
                published[characteristicPath] = FastRoute(
                    identity: SensorIdentity(adapter: adapter, address: link.machine.address, name: link.identity.name),
                    characteristic: characteristic,
                    bonded: cache.deviceBonded(
                        BlueZPaths.device(adapter: Self.adapterPath(adapter), address: link.machine.address)))
            }
        }
        fastRoutes.routes.withLock { $0 = published }
    }

    /// Brings the pool in line with the cache's adapters, reports each adapter whose availability
    /// changed, tells the machines which adapters were lost or became usable, and starts a running
    /// discovery on adapters that joined.
    func refreshAdapters() {
        var present: [String: Bool] = [:]
        for (path, name) in cache.adapters {
            present[name] = cache.properties(path, ObjectCache.adapterInterface)?["Powered"]?.bool != false
        }
        for name in Set(pool.names).union(present.keys) where pool.allows(name) {
            pool.update(name, present: present[name] != nil, powered: present[name] ?? false)
        }
        pool.removeAbsent()
        for name in Set(reportedAvailability.keys).union(pool.names).sorted() {
            let now = pool.availability(of: name)
            guard reportedAvailability[name] != now else { continue }
            let first = reportedAvailability[name] == nil
            reportedAvailability[name] = now
            // Adapters ready when the pool opens are simply there; anything later is news.
            if first && now == .ready && !opened { continue }
            logger.notice("adapter \(now)", metadata: ["adapter": "\(name)"])
            broadcaster.yield(.adapterChanged(name, now))
        }
        if reportedAvailability.isEmpty, pool.availability != reportedPoolAvailability {
            // No adapter to speak for it: the pool reports bluetoothd coming and going itself.
            reportedPoolAvailability = pool.availability
            logger.notice("Bluetooth \(pool.availability)")
            broadcaster.yield(.adapterChanged(self.name, pool.availability))
        }
        let before = usableAdapters
        usableAdapters = Set(pool.names.filter(pool.isUsable))
        for name in before.union(usableAdapters).sorted() {
            let was = before.contains(name)
            let usable = usableAdapters.contains(name)
            if was && !usable { feedAll(.adapterLost(adapter: name)) }
            if !was && usable {
                feedAll(.adapterReady(adapter: name))
                // (Unless it is being powered on by that very discovery.)
                if let services = discoveryServices, !discoveryStarting.contains(name) {
                    background.spawn { [weak self] in try? await self?.discover(on: name, services: services) }
                }
            }
        }
        updateReconnectDiscovery()
    }

    /// Straps wanted now whose device objects a full cache may have left out: bluetoothd will not
    /// announce them again, so their objects are read from its tree and added to the cache (past
    /// the limit, a wanted strap's fit). Nothing else of the cache changes.
    func readBackIfLeftOut(_ addresses: Set<String>) {
        guard cache.devicesRefused > 0, addresses.contains(where: { sightings(of: $0).isEmpty }) else { return }
        background.spawn { [weak self] in await self?.readBackWantedStraps() }
    }

    private func readBackWantedStraps() async {
        let owners = ownerChanges
        let snapshot: DBusValue
        do {
            switch try await Self.managedObjects(connection) {
            case .success(let value): snapshot = value
            case .failure(let problem): return refuse([problem])
            }
        } catch {
            logger.warning("cannot read bluetoothd's objects again", metadata: ["error": "\(error)"])
            return
        }
        // An answer of a bluetoothd that has left since describes objects that are gone.
        guard owners == ownerChanges else { return }
        // Every strap wanted now (one wanted while this was on its way too), parents first. What
        // the cache holds of them already came from newer signals: only what it lacks is added.
        let wanted = Set(links.keys)
        var appeared: [(address: String, adapter: String, path: String)] = []
        let objects = (snapshot.stringDictionary ?? [:]).sorted { $0.key.count < $1.key.count }
        for (path, interfaces) in objects {
            guard let device = BlueZPaths.device(containing: path), let address = BlueZPaths.address(ofDevice: device),
                wanted.contains(address), let adapter = adapterName(ofDevice: device), pool.allows(adapter)
            else { continue }
            refuse(cache.merge(path: path, interfaces: interfaces))
            if device == path, cache.properties(path, ObjectCache.deviceInterface) != nil {
                appeared.append((address, adapter, path))
            }
        }
        guard !appeared.isEmpty else { return }
        logger.info("read a wanted strap's objects that a full cache had left out")
        for device in appeared {
            announceIfMatching(device.path)
            feed(device.address, .deviceAppeared(adapter: device.adapter))
        }
    }

    /// Loads BlueZ's object tree. The signal stream runs meanwhile, and the reply may predate
    /// signals applied while it was on its way (a strap's services resolving, a new adapter): those
    /// are applied again on top of the snapshot, so an older reply never hides them.
    func loadSnapshot() async throws(SensorAdapterError) {
        appliedDuringSnapshot = []
        defer { appliedDuringSnapshot = nil }
        switch try await Self.managedObjects(connection) {
        case .success(let snapshot):
            refuse(cache.load(snapshot: snapshot))
        case .failure(let problem):
            refuse([problem])
            throw Self.adapterError(problem)
        }
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

    /// Applies a signal's change to the cache only (its inputs were fed when it arrived).
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

    /// bluetoothd left or came back: every link is gone with it; re-snapshot, re-register, re-arm.
    func ownerChanged(_ change: NameOwnerChange) async {
        // A new bluetoothd knows no notify session of ours: subscribe again after reconnecting.
        for address in links.keys {
            links[address]?.subscribed = []
            for socket in links[address]?.sockets.values ?? [:].values { socket.close() }
            links[address]?.sockets = [:]
        }
        ownerChanges += 1
        if let retired = change.oldOwner {
            // Unique names are never reused on a bus; the last few are enough to recognise.
            retiredOwners.insert(retired)
            retiredOrder.append(retired)
            if retiredOrder.count > Self.retiredOwnerLimit { retiredOwners.remove(retiredOrder.removeFirst()) }
        }
        var fresh = ObjectCache()
        fresh.deviceLimit = cache.deviceLimit
        fresh.preferredAddresses = cache.preferredAddresses
        cache = fresh
        announced = []
        routes = [:]
        reconnectDiscovery = []
        pool.serviceRunning = false
        refreshAdapters()
        guard change.newOwner != nil else { return }
        try? await loadSnapshot()
        pool.serviceRunning = true
        refreshAdapters()
        await registerAgent()
        if let services = discoveryServices { try? await startDiscovery(services: services) }
    }

    /// Counts and logs refused BlueZ messages (each kind and member at warning once, then debug).
    func refuse(_ problems: [MalformedBlueZMessage]) {
        guard !problems.isEmpty else { return }
        malformedMessages += problems.count
        MalformedBlueZMessage.report(problems, logger: logger, logged: &loggedMalformed)
    }
}
