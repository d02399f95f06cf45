public import DBus
import FoundationEssentials
public import GATT
import Logging
public import Sensors

extension BlueZAdapter {
    /// Sets the discovery filter (the services, LE only) and starts discovering on every usable
    /// adapter of the pool (and on adapters that join it later, until ``stopDiscovery()``).
    public func startDiscovery(services: Set<GATTService>) async throws(SensorAdapterError) {
        let wanted = services.isEmpty ? Set(GATTService.allCases) : services
        let adapters = pool.names.filter { pool.availability(of: $0) != .absent && pool.serviceRunning }
        guard !adapters.isEmpty else {
            throw .adapterUnavailable(pool.serviceRunning ? "no Bluetooth adapter" : "bluetoothd is not running")
        }
        discoveryServices = wanted
        var lastError: BlueZError?
        var started = 0
        for adapter in adapters {
            do {
                try await discover(on: adapter, services: wanted)
                started += 1
            } catch {
                logger.info("discovery not started", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
                lastError = error
            }
        }
        if started == 0, let lastError {
            discoveryServices = nil
            throw Self.failure(lastError)
        }
        reconnectDiscovery = []
        for devicePath in adapters.flatMap({ cache.devices(under: Self.adapterPath($0)) }) {
            announceIfMatching(devicePath)
        }
    }

    /// Filter, then `StartDiscovery` on one adapter, powering it on when it is off (`NotReady`).
    func discover(on adapter: String, services: Set<GATTService>) async throws(BlueZError) {
        let path = Self.adapterPath(adapter)
        discoveryStarting.insert(adapter)
        defer { discoveryStarting.remove(adapter) }
        do {
            try await call(
                path, ObjectCache.adapterInterface, "SetDiscoveryFilter",
                [
                    .propertyMap([
                        (
                            "UUIDs",
                            .array(
                                elementSignature: "s",
                                services.map { .string($0.uuid.description) }.sorted { $0.string! < $1.string! })
                        ),
                        ("Transport", .string("le")),
                        // Every advertisement, not only the first: broadcast heart rate changes in them.
                        ("DuplicateData", .boolean(options.followsAdvertisements)),
                    ])
                ])
            do {
                try await call(path, ObjectCache.adapterInterface, "StartDiscovery")
            } catch  where error.code == .notReady {
                try await powerOn(adapter)
                try await call(path, ObjectCache.adapterInterface, "StartDiscovery")
            }
        } catch  where error.code == .inProgress {
            // We already own a discovery session on it: it is running.
        }
    }

    /// The adapter is off (`NotReady`): set `Powered`, retrying while BlueZ answers `Busy`, and wait
    /// for `Powered=true`.
    private func powerOn(_ adapter: String) async throws(BlueZError) {
        logger.info("adapter not ready: powering it on", metadata: ["adapter": "\(adapter)"])
        let path = Self.adapterPath(adapter)
        var attempts = 0
        while true {
            do {
                try await setProperty(path, ObjectCache.adapterInterface, "Powered", .boolean(true))
                break
            } catch  where error.code == .busy && attempts < 10 {
                attempts += 1
                // On the adapter's clock, as every wait of the adapter is (tests inject theirs).
                try? await clock.sleep(until: clock.now().addingTimeInterval(0.2))
            }
        }
        _ = await waitUntil(.seconds(3)) { $0.properties(path, ObjectCache.adapterInterface)?["Powered"]?.bool == true }
    }

    /// Stops discovering on every adapter.
    public func stopDiscovery() async throws(SensorAdapterError) {
        discoveryServices = nil
        var lastError: BlueZError?
        for adapter in pool.names where pool.availability(of: adapter) != .absent {
            do {
                try await call(Self.adapterPath(adapter), ObjectCache.adapterInterface, "StopDiscovery")
            } catch  where error.code == .notReady || error.message.contains("No discovery started") {
            } catch {
                lastError = error
            }
        }
        if let lastError { throw Self.failure(lastError) }
    }

    /// Reports a device that offers one of the wanted services (once per strap, then RSSI updates).
    func announceIfMatching(_ devicePath: String) {
        guard let wanted = discoveryServices ?? (reconnectDiscovery.isEmpty ? nil : [.heartRate]),
            let adapter = adapterName(ofDevice: devicePath), pool.allows(adapter),
            let address = BlueZPaths.address(ofDevice: devicePath)
        else { return }
        // Filters from other clients are OR-merged: re-check against our own.
        let services = cache.services(of: devicePath)
        guard !services.isDisjoint(with: wanted) else { return }
        let rssi = cache.properties(devicePath, ObjectCache.deviceInterface)?["RSSI"]?.integer
        let identity = identity(address, on: adapter)
        if announced.insert(address).inserted {
            broadcaster.yield(.discovered(DiscoveredSensor(identity: identity, rssi: rssi, services: services)))
        } else {
            broadcaster.yield(.updated(identity, rssi: rssi))
        }
    }

    /// `hci0` from `/org/bluez/hci0/dev_…` (or from the adapter's own path).
    func adapterName(ofDevice path: String) -> String? {
        let parts = path.split(separator: "/")
        guard parts.count >= 3, parts[0] == "org", parts[1] == "bluez" else { return nil }
        return String(parts[2])
    }

    /// Starts discovery on usable adapters while a strap needs finding again, stops it once none does
    /// (discovery competes with connections for the radio). A caller's own discovery is left alone.
    func updateReconnectDiscovery() {
        // Also while a strap waits for a link, when its broadcast heart rate is followed meanwhile.
        let wanted = links.values.contains {
            $0.machine.wantsDiscovery || options.followsAdvertisements && $0.machine.awaitsLink
        }
        if wanted && discoveryServices == nil {
            let missing = pool.names.filter { pool.isUsable($0) && !reconnectDiscovery.contains($0) }
            guard !missing.isEmpty else { return }
            reconnectDiscovery.formUnion(missing)
            // Chained after the previous start or stop: BlueZ sees them in the order decided here.
            let previous = reconnectDiscoveryCalls
            reconnectDiscoveryCalls = Task {
                await previous?.value
                for adapter in missing {
                    do {
                        try await discover(on: adapter, services: [.heartRate])
                    } catch {
                        logger.info("discovery not started", metadata: ["adapter": "\(adapter)", "error": "\(error)"])
                    }
                }
            }
        } else if !wanted && !reconnectDiscovery.isEmpty {
            let running = reconnectDiscovery
            reconnectDiscovery = []
            guard discoveryServices == nil else { return }
            let previous = reconnectDiscoveryCalls
            reconnectDiscoveryCalls = Task {
                await previous?.value
                for adapter in running.sorted() {
                    _ = try? await call(Self.adapterPath(adapter), ObjectCache.adapterInterface, "StopDiscovery")
                }
            }
        }
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
}
