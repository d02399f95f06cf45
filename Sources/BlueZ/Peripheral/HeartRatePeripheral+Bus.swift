import DBus
import Logging
import Sensors
import Synchronization

extension HeartRatePeripheral {
    /// Registers the application and the advertisement; registers them again after bluetoothd
    /// restarts (a new `org.bluez` owner knows nothing of us) or the adapter comes back;
    /// unregisters when cancelled. Returns on cancellation; throws only what cannot heal: our
    /// object path taken, an invalid configuration, the bus connection closed.
    ///
    /// Call it once; ``events()`` end when it returns.
    public func run() async throws {
        guard !hasRun else { throw PeripheralError.alreadyRunning }
        if let problem = configuration.problem {
            broadcaster.finish()
            throw problem
        }
        hasRun = true
        let (inputs, input) = AsyncStream<BusInput>.makeStream()
        let paths = server.withLock { $0.tree.exportedPaths }
        do {
            try export(paths, input: input)
        } catch {
            broadcaster.finish()
            throw error
        }
        var failure: (any Error)?
        do {
            try await follow(inputs, input: input)
        } catch {
            failure = error
        }
        await stop(unexporting: paths)
        input.finish()
        if let failure, !(failure is CancellationError) { throw failure }
    }

    private func export(_ paths: [String], input: AsyncStream<BusInput>.Continuation) throws(PeripheralError) {
        var exported: [String] = []
        for path in paths {
            do {
                try connection.exportInOrder(path: path) { [weak self] call in
                    guard let self else {
                        return .failure(DBusError(name: DBusError.unknownObjectName, message: "no such object"))
                    }
                    return self.answer(call, input: input)
                }
                exported.append(path)
            } catch {
                for path in exported { connection.unexport(path: path) }
                throw .objectPathTaken(path)
            }
        }
    }

    /// Follows `org.bluez` until cancelled: its owner, the adapter's object and devices.
    private func follow(_ inputs: AsyncStream<BusInput>, input: AsyncStream<BusInput>.Continuation) async throws {
        // Subscribed before the snapshot: a change made meanwhile arrives after it, not lost.
        let signals = try await connection.signals(matching: MatchRule(sender: Self.bluez))
        let owners = try await connection.nameOwnerChanges(of: Self.bluez)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await signal in signals { input.yield(.signal(signal)) }
                input.yield(.connectionEnded)
            }
            group.addTask {
                for await change in owners { input.yield(.owner(change.newOwner)) }
            }
            let owner = try await connection.nameOwner(of: Self.bluez)
            if owner == nil { await apply(.serviceStopped) }
            await ownerChanged(to: owner)
            for await item in inputs {
                switch item {
                case .owner(let owner): await ownerChanged(to: owner)
                case .signal(let signal): await handle(signal)
                case .released: await apply(.advertisementReleased)
                case .connectionEnded:
                    guard Task.isCancelled else { throw PeripheralError.disconnected }
                }
            }
            group.cancelAll()
        }
    }

    private func ownerChanged(to owner: String?) async {
        guard owner != bluezOwner else { return }
        if bluezOwner != nil {
            logger.info("bluetoothd stopped")
            bluezOwner = nil
            let events = server.withLock { server in
                server.trustedCaller = nil
                return server.forgetSubscriptions()
            }
            for event in events { broadcaster.yield(event) }
            cache = ObjectCache()
            await apply(.serviceStopped)
        }
        guard let owner else { return }
        logger.info("bluetoothd is running", metadata: ["owner": "\(owner)"])
        bluezOwner = owner
        server.withLock { $0.trustedCaller = owner }
        await loadSnapshot(from: owner)
        let adapter = cache.properties(configuration.adapterPath, Self.adapterInterface)
        await apply(.serviceStarted(adapterPresent: adapter != nil, powered: adapter?["Powered"]?.bool ?? false))
    }

    /// The adapter's object and its devices, from `GetManagedObjects`.
    private func loadSnapshot(from owner: String) async {
        cache = ObjectCache()
        do {
            let reply = try await connection.call(
                destination: owner, path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
            guard reply.count == 1, reply[0].signature == BlueZShapes.managedObjectsSignature else {
                return refuse([
                    MalformedBlueZMessage(
                        .reply, member: "GetManagedObjects", path: "/", expected: BlueZShapes.managedObjectsSignature,
                        values: reply)
                ])
            }
            for (path, interfaces) in reply[0].stringDictionary ?? [:] where isFollowed(path) {
                refuse(cache.add(path: path, interfaces: interfaces))
            }
        } catch {
            // bluetoothd went away meanwhile: its owner change follows.
            logger.info("cannot read bluetoothd's objects", metadata: ["error": "\(error)"])
        }
    }

    /// The adapter's own path, or a device directly under it (not their GATT objects).
    private func isFollowed(_ path: String) -> Bool {
        let adapterPath = configuration.adapterPath
        if path == adapterPath { return true }
        guard path.hasPrefix(adapterPath + "/dev_") else { return false }
        return !path.dropFirst(adapterPath.count + 1).contains("/")
    }

    private func handle(_ signal: DBusSignal) async {
        // From the bluetoothd the snapshot came from: anything older is in the snapshot already.
        guard signal.sender == bluezOwner else { return }
        if let problem = BlueZShapes.problem(with: signal) { return refuse([problem]) }
        let adapterPath = configuration.adapterPath
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard signal.arguments.count == 2, let path = signal.arguments[0].string, isFollowed(path) else { return }
            let wasPresent = cache.properties(adapterPath, Self.adapterInterface) != nil
            refuse(cache.add(path: path, interfaces: signal.arguments[1]))
            if path == adapterPath, !wasPresent, let adapter = cache.properties(adapterPath, Self.adapterInterface) {
                await apply(.adapterAppeared(powered: adapter["Powered"]?.bool ?? false))
            }
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard signal.arguments.count == 2, let path = signal.arguments[0].string, isFollowed(path),
                let interfaces = signal.arguments[1].arrayElements?.compactMap(\.string)
            else { return }
            cache.remove(path: path, interfaces: interfaces)
            if path == adapterPath, interfaces.contains(Self.adapterInterface) {
                // Its devices go with it, and the apps' subscriptions with them.
                cache = ObjectCache()
                for event in server.withLock({ $0.forgetSubscriptions() }) { broadcaster.yield(event) }
                await apply(.adapterVanished)
            }
        case (PeripheralObjectTree.propertiesInterface, "PropertiesChanged"):
            guard isFollowed(signal.path), signal.arguments.count >= 2, let interface = signal.arguments[0].string,
                let received = signal.arguments[1].stringDictionary,
                // Only objects we know (a change racing an InterfacesRemoved must not bring one
                // back), or a central's device linking that a full cache left out when it appeared.
                cache.properties(signal.path, interface) != nil
                    || (interface == Self.deviceInterface && received["Connected"]?.bool == true)
            else { return }
            let invalidated = signal.arguments.count > 2 ? signal.arguments[2].arrayElements?.compactMap(\.string) : nil
            let checked = BlueZShapes.checked(received, of: interface, at: signal.path)
            refuse(checked.refused)
            let changed = checked.kept
            cache.update(
                path: signal.path, interface: interface, changed: changed, invalidated: invalidated ?? [],
                admittingLinked: true)
            guard signal.path == adapterPath else { return }
            if interface == Self.adapterInterface, let powered = changed["Powered"]?.bool {
                await apply(.poweredChanged(powered))
            }
            if interface == Self.advertisingManagerInterface, let free = changed["SupportedInstances"]?.integer,
                free > 0
            {
                await apply(.advertisingInstanceFreed)
            }
        default:
            break
        }
    }

    /// Advertises afresh (after a strap was connected on this adapter: the kernel paused
    /// advertising while it connected). Nothing when not advertising.
    public func readvertise() async {
        await apply(.readvertiseRequested)
    }

    /// Stops advertising, saying why, until ``resumeAdvertising()``; apps already connected stay.
    public func pauseAdvertising(reason: String) async {
        await apply(.pauseRequested(reason))
    }

    /// Advertises again after ``pauseAdvertising(reason:)``.
    public func resumeAdvertising() async {
        await apply(.resumeRequested)
    }

    /// Whether the adapter can hold straps while apps are connected to it: BlueZ lists
    /// `central-peripheral` in its roles; `nil` while unknown (no bluetoothd, no adapter, or a
    /// BlueZ that does not publish roles).
    public var supportsSimultaneousRoles: Bool? {
        guard let roles = cache.properties(configuration.adapterPath, Self.adapterInterface)?["Roles"]?.arrayElements
        else { return nil }
        return roles.contains { $0.string == "central-peripheral" }
    }

    /// Disconnects the apps connected to the adapter (not the excluded addresses: our straps).
    /// How many were asked to go.
    @discardableResult
    public func disconnectCentrals() async -> Int {
        let adapterPath = configuration.adapterPath
        var asked = 0
        for path in cache.devices(under: adapterPath) {
            guard let device = cache.properties(path, Self.deviceInterface), device["Connected"]?.bool == true else {
                continue
            }
            let address = device["Address"]?.string ?? BlueZPaths.address(ofDevice: path) ?? ""
            guard !excludedAddresses.contains(address.uppercased()) else { continue }
            do {
                _ = try await connection.call(
                    destination: Self.bluez, path: path, interface: Self.deviceInterface, member: "Disconnect",
                    timeout: Self.unregistrationTimeout)
                asked += 1
            } catch {
                logger.info("cannot disconnect an app", metadata: ["device": "\(path)", "error": "\(error)"])
            }
        }
        return asked
    }

    /// Feeds `input` to the registration machine and performs its actions, registration calls
    /// included (their outcomes are fed back in turn).
    private func apply(_ input: PeripheralRegistration.Input) async {
        var pending = [input]
        // Cancelled: what is registered so far is unregistered on the way out.
        while !pending.isEmpty, !Task.isCancelled {
            for action in registration.handle(pending.removeFirst()) {
                switch action {
                case .report(let event):
                    logger.info("peripheral: \(event)")
                    broadcaster.yield(event)
                case .registerApplication:
                    let error = await register(
                        Self.gattManagerInterface, "RegisterApplication", object: configuration.objectPath)
                    pending.append(error.map { .applicationFailed($0) } ?? .applicationRegistered)
                case .registerAdvertisement:
                    let path = server.withLock { $0.tree.advertisementPath }
                    let error = await register(Self.advertisingManagerInterface, "RegisterAdvertisement", object: path)
                    pending.append(error.map { .advertisementFailed($0) } ?? .advertisementRegistered)
                case .unregisterAdvertisement:
                    let path = server.withLock { $0.tree.advertisementPath }
                    _ = try? await connection.call(
                        destination: Self.bluez, path: configuration.adapterPath,
                        interface: Self.advertisingManagerInterface, member: "UnregisterAdvertisement",
                        arguments: [.objectPath(path)], timeout: Self.registrationTimeout)
                }
            }
        }
    }

    /// Calls `member(object, {})` on the adapter; the error, if it failed.
    private func register(_ interface: String, _ member: String, object: String) async -> DBusError? {
        do {
            _ = try await connection.call(
                destination: Self.bluez, path: configuration.adapterPath, interface: interface, member: member,
                arguments: [.objectPath(object), .propertyMap([])], timeout: Self.registrationTimeout)
            return nil
        } catch {
            logger.info("\(member) failed", metadata: ["error": "\(error)"])
            return error
        }
    }

    /// Unregisters what bluetoothd holds, stops serving, ends the events.
    private func stop(unexporting paths: [String]) async {
        if let owner = bluezOwner {
            let tree = server.withLock { $0.tree }
            if registration.advertisementRegistered {
                _ = try? await connection.call(
                    destination: owner, path: configuration.adapterPath, interface: Self.advertisingManagerInterface,
                    member: "UnregisterAdvertisement", arguments: [.objectPath(tree.advertisementPath)],
                    timeout: Self.unregistrationTimeout)
            }
            if registration.applicationRegistered {
                _ = try? await connection.call(
                    destination: owner, path: configuration.adapterPath, interface: Self.gattManagerInterface,
                    member: "UnregisterApplication", arguments: [.objectPath(tree.root)],
                    timeout: Self.unregistrationTimeout)
            }
        }
        for path in paths { connection.unexport(path: path) }
        let events = server.withLock { server in
            server.trustedCaller = nil
            return server.forgetSubscriptions()
        }
        for event in events { broadcaster.yield(event) }
        for case .report(let event) in registration.handle(.stopped) { broadcaster.yield(event) }
        broadcaster.finish()
    }

    /// Counts and logs refused BlueZ messages (each kind and member at warning once, then debug).
    func refuse(_ problems: [MalformedBlueZMessage]) {
        guard !problems.isEmpty else { return }
        malformedMessages += problems.count
        MalformedBlueZMessage.report(problems, logger: logger, logged: &loggedMalformed)
    }
}
