import DBus
import FoundationEssentials
import GATT
import Logging
public import Sensors

extension BlueZAdapter {
    /// Connects a sensor and keeps it connected until ``disconnect(_:)``, through whichever adapter
    /// of the pool sees it with a free slot. Returns once it streams; throws the first attempt's
    /// failure (the adapter keeps trying in the background when it reconnects).
    public func connect(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let address = sensor.address.uppercased()
        guard links[address] == nil else { return }
        let known = !sightings(of: address).isEmpty
        guard known || (options.connectsUnknownDevices && options.reconnects) else { throw .unknownSensor(sensor) }
        links[address] = Link(
            identity: SensorIdentity(adapter: sensor.adapter, address: address, name: sensor.name),
            machine: SensorConnection(address: address, configuration: options.connection))
        if !known {
            // A configured strap not seen yet: discovered, then connected, in the background.
            feed(address, .start)
            throw .unknownSensor(sensor)
        }
        let outcome = await withCheckedContinuation { continuation in
            links[address]?.waiters.append(continuation)
            feed(address, .start)
        }
        try outcome.get()
    }

    /// Disconnects a sensor and stops reconnecting it.
    public func disconnect(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let address = sensor.address.uppercased()
        guard var link = links.removeValue(forKey: address) else { throw .notConnected(sensor) }
        forgetWaveforms(address)
        let surroundings = surroundings(for: address)
        let actions = link.machine.handle(.stop, in: surroundings, using: &random)
        link.timer?.cancel()
        for waiter in link.waiters { waiter.resume(returning: .failure(.notConnected(sensor))) }
        var failure: BlueZError?
        for action in actions {
            switch action {
            case .release(let adapter):
                failure = await release(link, on: adapter)
            case .report(let state, let adapter):
                broadcaster.yield(.connectionChanged(identity(address, on: adapter), state))
            default:
                break
            }
        }
        if !actions.contains(where: { if case .release = $0 { true } else { false } }) {
            // Not linked now: make sure no half-open link stays behind.
            for socket in link.sockets.values { socket.close() }
            broadcaster.yield(
                .connectionChanged(
                    identity(address, on: link.machine.lastAdapter ?? link.identity.adapter), .disconnected(.requested))
            )
        }
        if let failure { throw Self.failure(failure) }
    }

    /// Stops the strap's notifications, closes its sockets and disconnects it.
    private func release(_ link: Link, on adapter: String) async -> BlueZError? {
        for characteristic in link.subscribed {
            _ = try? await call(characteristic, ObjectCache.characteristicInterface, "StopNotify")
        }
        for socket in link.sockets.values { socket.close() }
        let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: link.machine.address)
        do {
            try await call(devicePath, ObjectCache.deviceInterface, "Disconnect")
            return nil
        } catch {
            return error
        }
    }

    /// The adapters whose device objects are the strap at `address`, with their last RSSI. A
    /// device of another address type than the strap's configured one is not the strap.
    func sightings(of address: String) -> [String: Int?] {
        var sightings: [String: Int?] = [:]
        for adapter in pool.names {
            let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
            if let properties = cache.properties(devicePath, ObjectCache.deviceInterface),
                addressTypeMismatch(devicePath, address: address) == nil
            {
                sightings[adapter] = properties["RSSI"]?.integer
            }
        }
        return sightings
    }

    /// The address type the device object at `devicePath` has when it is not the one configured
    /// for `address` (nil when it matches or nothing is configured); logged once per device object.
    func addressTypeMismatch(_ devicePath: String, address: String) -> String? {
        guard let expected = options.addressTypes[address] else { return nil }
        let seen = cache.properties(devicePath, ObjectCache.deviceInterface)?["AddressType"]?.string ?? "unknown"
        guard seen != expected.rawValue else { return nil }
        if addressTypeMismatches.insert(devicePath).inserted {
            logger.warning(
                "a device repeats a configured strap's address with another address type: not the strap",
                metadata: ["sensor": "\(address)", "addressType": "\(seen.prefix(16))", "configured": "\(expected)"])
        }
        return String(seen.prefix(16))
    }

    /// What the strap's machine knows of the adapters now.
    func surroundings(for address: String) -> SensorConnection.Surroundings {
        let binding = options.bindings[address]
        let seen = sightings(of: address)
        var links: [String: Int] = [:]
        for adapter in seen.keys { links[adapter] = linksInUse(adapter) }
        // A slot on an adapter that has run out before goes to the first waiting strap in priority order.
        let candidates = pool.candidates(sightings: seen, binding: binding) { links[$0] ?? 0 }.filter { adapter in
            !pool.hasRefused(adapter)
                || !waitsBehind(address, for: adapter)
                    && !pool.isTaken(adapter, linksInUse: links[adapter] ?? 0, connecting: connecting(on: adapter))
        }
        let usable = binding.map(pool.isUsable) ?? pool.anyUsable
        let known = seen.keys.contains { (binding == nil || binding == $0) && pool.isUsable($0) }
        let now = clock.now()
        // Heard lately without a link: its broadcast is what the user sees, so attempts stay rare.
        let hearsBroadcast =
            options.followsAdvertisements
            && self.links[address]?.broadcastHeardAt.map { now.timeIntervalSince($0) < 15 } == true
        return SensorConnection.Surroundings(
            now: now, candidates: candidates, adapterUsable: usable, deviceKnown: known,
            hearsBroadcast: hearsBroadcast)
    }

    /// Links being set up on `adapter`: our `Connect` on its way, not yet `Connected`.
    func connecting(on adapter: String) -> Int {
        self.links.values.count { link in
            guard case .connecting(adapter) = link.machine.state else { return false }
            let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: link.machine.address)
            return !cache.deviceConnected(devicePath)
        }
    }

    /// The strap's priority for a free link slot: set while running, else configured, else 0.
    func priority(of address: String) -> Int { priorities[address] ?? options.priorities[address] ?? 0 }

    /// Whether another strap waiting only for a slot on `adapter` comes first (higher priority,
    /// then lower address).
    func waitsBehind(_ address: String, for adapter: String) -> Bool {
        let mine = (priority(of: address), address)
        return self.links.contains { other, link in
            guard other != address, case .waitingForAdapter = link.machine.state,
                options.bindings[other].map({ $0 == adapter }) ?? true, sightings(of: other)[adapter] != nil
            else { return false }
            let theirs = (priority(of: other), other)
            return theirs.0 > mine.0 || theirs.0 == mine.0 && theirs.1 < mine.1
        }
    }

    /// Sets the strap's priority for a free link slot (higher first), over the configured one.
    public func setPriority(_ priority: Int?, for address: String) {
        priorities[address.uppercased()] = priority
    }

    /// Hands `input` to the strap's machine and performs what it answers.
    func feed(_ address: String, _ input: SensorConnection.Input) {
        guard var link = links[address] else { return }
        let actions = link.machine.handle(input, in: surroundings(for: address), using: &random)
        links[address] = link
        for action in actions { perform(action, for: address) }
        settle(address)
    }

    /// Hands `input` to every machine.
    func feedAll(_ input: SensorConnection.Input) {
        for address in links.keys.sorted() { feed(address, input) }
    }

    private func perform(_ action: SensorConnection.Action, for address: String) {
        switch action {
        case .connect(let adapter, let attempt):
            links[address]?.identity.adapter = adapter
            pool.countAttempt(adapter)
            background.spawn { [weak self] in
                guard let self else { return }
                let reply = await self.callConnect(address, on: adapter)
                await self.feed(address, .connectReplied(attempt: attempt, reply))
            }
        case .subscribe(let adapter, let attempt):
            background.spawn { [weak self] in
                guard let self else { return }
                let error = await self.subscribe(address, on: adapter)
                await self.feed(address, .subscribeReplied(attempt: attempt, error))
                if error == nil {
                    await self.readDetails(address, on: adapter)
                    await self.probeWaveforms(address, on: adapter)
                }
            }
        case .disconnect(let adapter):
            let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
            links[address]?.teardown = Task { [weak self] in
                _ = try? await self?.call(devicePath, ObjectCache.deviceInterface, "Disconnect")
            }
        case .release(let adapter):
            guard let link = links[address] else { return }
            background.spawn { [weak self] in _ = await self?.release(link, on: adapter) }
        case .repair(let adapter):
            background.spawn { [weak self] in
                await self?.repair(address: address, on: adapter)
                await self?.feed(address, .repairFinished)
            }
        case .markFull(let adapter):
            let held = linksInUse(adapter)
            pool.markFull(adapter, linksInUse: held)
            logger.notice(
                "adapter out of link slots: trying another",
                metadata: ["adapter": "\(adapter)", "links": "\(held)", "sensor": "\(address)"])
        case .schedule(let date, let generation):
            links[address]?.timer?.cancel()
            links[address]?.timer = Task { [weak self, clock] in
                do {
                    try await clock.sleep(until: date)
                } catch {
                    return
                }
                await self?.feed(address, .timerFired(generation: generation))
            }
        case .cancelTimer:
            links[address]?.timer?.cancel()
            links[address]?.timer = nil
        case .report(let state, let adapter):
            if case .disconnected(let reason) = state {
                switch reason {
                case .linkLost: pool.countLinkLost(adapter)
                case .failed, .timeout: pool.countFailure(adapter)
                default: break
                }
            }
            broadcaster.yield(.connectionChanged(identity(address, on: adapter), state))
        case .attemptEnded(let error):
            links[address]?.lastError = error
            // A `connect` caller learns the first attempt's failure; the machine goes on trying.
            if error != nil, let link = links[address], !link.waiters.isEmpty {
                links[address]?.waiters = []
                answer(link.waiters, link, address: address)
            }
        }
    }

    /// After a transition: drop a machine that stopped, check whether its services already
    /// resolved, answer `connect` callers once the attempt is over, and start or stop discovery.
    private func settle(_ address: String) {
        guard let link = links[address] else { return }
        switch link.machine.state {
        case .idle:
            links[address] = nil
            link.timer?.cancel()
            answer(link.waiters, link, address: address)
        case .resolving(let adapter):
            if servicesResolved(address, on: adapter) {
                feed(address, .servicesResolved(adapter: adapter))
                return
            }
        case .ready, .connecting, .subscribing:
            if link.machine.isReady, link.broadcastHeardAt != nil {
                // Linked: its notifications carry the data; a later drop reconnects at the usual pace.
                links[address]?.broadcastHeardAt = nil
                links[address]?.lastBroadcast = nil
            }
            if link.machine.isReady, !link.waiters.isEmpty {
                links[address]?.waiters = []
                for waiter in link.waiters { waiter.resume(returning: .success(())) }
            }
        default:
            if !link.waiters.isEmpty {
                links[address]?.waiters = []
                answer(link.waiters, link, address: address)
            }
        }
        updateReconnectDiscovery()
    }

    /// Tells `connect` callers the attempt failed, once a half-open link is torn down.
    private func answer(
        _ waiters: [CheckedContinuation<Result<Void, SensorAdapterError>, Never>], _ link: Link, address: String
    ) {
        guard !waiters.isEmpty else { return }
        let error: SensorAdapterError =
            link.lastError.map(Self.failure)
            ?? (pool.anyUsable
                ? .failed(name: "org.hrbridge.Error.NoFreeLinkSlot", message: "no adapter has a free link slot")
                : .adapterUnavailable("\(pool.availability)"))
        let teardown = link.teardown
        // Not owned: a caller waits for this answer even after shutdown cancelled the rest.
        Task {
            await teardown?.value
            for waiter in waiters { waiter.resume(returning: .failure(error)) }
        }
    }

    /// Whether the strap's services resolved on `adapter` with a measurement characteristic
    /// (`ServicesResolved` can be true with no GATT objects exported yet).
    func servicesResolved(_ address: String, on adapter: String) -> Bool {
        let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
        return cache.deviceServicesResolved(devicePath)
            && Self.measurementCharacteristics.contains { cache.path(of: $0, on: devicePath) != nil }
    }

    /// One `Connect` call and how it ended, with whether the link was up when the reply came.
    private func callConnect(_ address: String, on adapter: String) async -> SensorConnection.ConnectReply {
        let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
        do {
            try await call(devicePath, ObjectCache.deviceInterface, "Connect", timeout: options.connectTimeout)
            return .connected
        } catch  where error.code == .alreadyConnected {
            return .connected
        } catch {
            let linkUp = cache.deviceConnected(devicePath)
            if linkUp {
                logger.info(
                    "Connect failed but the link is up", metadata: ["sensor": "\(address)", "error": "\(error)"])
            } else if error.code == .authenticationFailed && !options.repairsOnAuthenticationFailure {
                logger.warning("the strap's bond is lost", metadata: ["sensor": "\(address)", "error": "\(error)"])
            } else {
                logger.info("connect failed", metadata: ["sensor": "\(address)", "error": "\(error)"])
            }
            return .failed(error, linkUp: linkUp)
        }
    }

    static let measurementCharacteristics: [GATTCharacteristic] = [
        .heartRateMeasurement, .cyclingPowerMeasurement, .cscMeasurement, .rscMeasurement, .indoorBikeData,
        .treadmillData,
    ]
}

extension ObjectCache {
    func deviceConnected(_ devicePath: String) -> Bool {
        properties(devicePath, Self.deviceInterface)?["Connected"]?.bool == true
    }

    /// Whether BlueZ holds the device's key (`Bonded`; before BlueZ 5.58, `Paired`), so that its
    /// links are encrypted with it.
    func deviceBonded(_ devicePath: String) -> Bool {
        let properties = properties(devicePath, Self.deviceInterface)
        return (properties?["Bonded"] ?? properties?["Paired"])?.bool == true
    }

    func deviceServicesResolved(_ devicePath: String) -> Bool {
        properties(devicePath, Self.deviceInterface)?["ServicesResolved"]?.bool == true
    }
}
