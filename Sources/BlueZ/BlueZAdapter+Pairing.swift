import DBus
import FoundationEssentials
import GATT
import Logging
public import Sensors

extension BlueZAdapter {
    /// The adapter a command about `sensor` goes through: where it is linked, else the one its
    /// identity names when that adapter sees it, else the strongest sighting.
    func commandAdapter(for sensor: SensorIdentity) -> String? {
        let address = sensor.address.uppercased()
        if let placed = links[address]?.machine.placedAdapter { return placed }
        let seen = sightings(of: address)
        if seen[sensor.adapter] != nil { return sensor.adapter }
        return seen.max { ($0.value ?? Int.min, $1.key) < ($1.value ?? Int.min, $0.key) }?.key
    }

    /// The device path of `sensor` on the adapter commands go through; `unknownSensor` when none sees it.
    private func devicePath(for sensor: SensorIdentity) throws(SensorAdapterError) -> (adapter: String, path: String) {
        guard let adapter = commandAdapter(for: sensor) else { throw .unknownSensor(sensor) }
        return (adapter, BlueZPaths.device(adapter: Self.adapterPath(adapter), address: sensor.address))
    }

    /// Sets Trusted, then pairs; an existing bond counts as success.
    public func pair(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let (_, devicePath) = try devicePath(for: sensor)
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
        let (_, devicePath) = try devicePath(for: sensor)
        do {
            try await setProperty(devicePath, ObjectCache.deviceInterface, "Trusted", .boolean(true))
        } catch {
            throw Self.failure(error)
        }
    }

    /// Removes the device and its bond from BlueZ (from every adapter of the pool that knows it).
    public func forget(_ sensor: SensorIdentity) async throws(SensorAdapterError) {
        let address = sensor.address.uppercased()
        if let link = links.removeValue(forKey: address) {
            link.timer?.cancel()
            for waiter in link.waiters { waiter.resume(returning: .failure(.notConnected(sensor))) }
        }
        let adapters = sightings(of: address).keys.sorted()
        guard !adapters.isEmpty else { throw .unknownSensor(sensor) }
        for adapter in adapters {
            let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
            do {
                try await call(
                    Self.adapterPath(adapter), ObjectCache.adapterInterface, "RemoveDevice", [.objectPath(devicePath)])
            } catch {
                throw Self.failure(error)
            }
        }
    }

    /// The bond is stale (the strap forgot its key): remove the device, rediscover it, pair again.
    func repair(address: String, on adapter: String) async {
        logger.notice("authentication failed: removing and pairing again", metadata: ["sensor": "\(address)"])
        let adapterPath = Self.adapterPath(adapter)
        let devicePath = BlueZPaths.device(adapter: adapterPath, address: address)
        if cache.properties(devicePath, ObjectCache.deviceInterface) != nil {
            _ = try? await call(adapterPath, ObjectCache.adapterInterface, "RemoveDevice", [.objectPath(devicePath)])
            _ = await waitUntil(.seconds(2)) { $0.properties(devicePath, ObjectCache.deviceInterface) == nil }
        }
        // The machine is repairing: it wants discovery, which brings the device back.
        updateReconnectDiscovery()
        guard
            await waitUntil(
                options.rediscoveryTimeout, { $0.properties(devicePath, ObjectCache.deviceInterface) != nil })
        else { return }
        do {
            try await pair(SensorIdentity(adapter: adapter, address: address))
        } catch {
            logger.info("pairing again failed", metadata: ["sensor": "\(address)", "error": "\(error)"])
        }
    }

    /// Registers the pairing agent with bluetoothd (again after it restarts: it forgets agents).
    func registerAgent() async {
        do {
            _ = try await connection.call(
                destination: "org.bluez", path: "/org/bluez", interface: "org.bluez.AgentManager1",
                member: "RegisterAgent", arguments: [.objectPath(PairingAgent.path), .string("NoInputNoOutput")])
        } catch {
            // Pairing still works without our agent (BlueZ falls back to NoInputNoOutput).
            logger.info("pairing agent not registered", metadata: ["error": "\(error)"])
        }
    }
}
