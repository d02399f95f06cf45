public import DBus
import FoundationEssentials
import Logging
public import Sensors

extension BlueZAdapter {
    /// Calls `org.bluez`; before returning, applies every signal BlueZ sent before its reply.
    @discardableResult
    func call(
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
    func catchUpWithSignals() async {
        guard !signalsEnded, let target = signalSubscription?.delivered, target > handledSignals else { return }
        await withCheckedContinuation { signalWaiters.append((target, $0)) }
    }

    func handleCounted(_ signal: DBusSignal) {
        handle(signal)
        handledSignals += 1
        guard !signalWaiters.isEmpty else { return }
        let handled = handledSignals
        for waiter in signalWaiters where waiter.target <= handled { waiter.continuation.resume() }
        signalWaiters.removeAll { $0.target <= handled }
    }

    func endSignals() {
        signalsEnded = true
        for waiter in signalWaiters { waiter.continuation.resume() }
        signalWaiters = []
    }

    func setProperty(_ objectPath: String, _ interface: String, _ property: String, _ value: DBusValue)
        async throws(BlueZError)
    {
        try await call(
            objectPath, "org.freedesktop.DBus.Properties", "Set",
            [.string(interface), .string(property), .variant(value)])
    }

    /// A characteristic's value (`ReadValue`); a reply that is not one `ay` is refused and counted.
    func read(_ characteristicPath: String) async throws(BlueZError) -> [UInt8] {
        let reply = try await call(
            characteristicPath, ObjectCache.characteristicInterface, "ReadValue", [.propertyMap([])])
        guard reply.count == 1, let bytes = reply[0].bytes, reply[0].signature == "ay" else {
            let problem = MalformedBlueZMessage(
                .reply, member: "ReadValue", path: characteristicPath, expected: "ay", values: reply)
            refuse([problem])
            throw BlueZError(name: MalformedBlueZMessage.errorName, message: problem.description)
        }
        return bytes
    }

    /// Waits until `condition` holds on the cache or `timeout` passes: woken by the cache's
    /// changes, never by polling.
    func waitUntil(_ timeout: Duration, _ condition: @escaping @Sendable (ObjectCache) -> Bool) async -> Bool {
        if condition(cache) { return true }
        let id = nextWaiterID
        nextWaiterID += 1
        let deadline = clock.now().addingTimeInterval(timeout.seconds)
        let expiry = Task { [weak self, clock] in
            try? await clock.sleep(until: deadline)
            await self?.expireWaiter(id)
        }
        defer { expiry.cancel() }
        return await withCheckedContinuation { cacheWaiters[id] = (condition, $0) }
    }

    private func expireWaiter(_ id: Int) {
        guard let waiter = cacheWaiters.removeValue(forKey: id) else { return }
        waiter.continuation.resume(returning: waiter.condition(cache))
    }

    /// Wakes the waiters whose condition now holds.
    func resumeSatisfiedWaiters() {
        guard !cacheWaiters.isEmpty else { return }
        for (id, waiter) in cacheWaiters where waiter.condition(cache) {
            cacheWaiters[id] = nil
            waiter.continuation.resume(returning: true)
        }
    }

    static func failure(_ error: BlueZError) -> SensorAdapterError {
        .failed(name: error.name, message: error.message)
    }

    static func adapterError(_ error: DBusError) -> SensorAdapterError {
        let classified = BlueZError(error)
        if classified.code == .serviceUnavailable {
            return .adapterUnavailable("bluetoothd (org.bluez) is not running on the system bus")
        }
        return .failed(name: error.name, message: error.message)
    }

    /// BlueZ's object tree (`GetManagedObjects`), or why its reply cannot be read.
    static func managedObjects(
        _ connection: DBusConnection
    ) async throws(SensorAdapterError) -> Result<DBusValue, MalformedBlueZMessage> {
        let reply: [DBusValue]
        do {
            reply = try await connection.call(
                destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
        } catch {
            throw Self.adapterError(error)
        }
        guard reply.count == 1, reply[0].signature == BlueZShapes.managedObjectsSignature else {
            return .failure(
                MalformedBlueZMessage(
                    .reply, member: "GetManagedObjects", path: "/", expected: BlueZShapes.managedObjectsSignature,
                    values: reply))
        }
        return .success(reply[0])
    }

    /// The adapter error a refused reply becomes.
    static func adapterError(_ problem: MalformedBlueZMessage) -> SensorAdapterError {
        .failed(name: MalformedBlueZMessage.errorName, message: problem.description)
    }

    /// The names of the adapters BlueZ has, in index order (`hci0`, `hci1`, … `hci10`).
    public static func adapterNames(on connection: DBusConnection) async throws(SensorAdapterError) -> [String] {
        var cache = ObjectCache()
        switch try await managedObjects(connection) {
        case .success(let snapshot): cache.load(snapshot: snapshot)
        case .failure(let problem): throw adapterError(problem)
        }
        return cache.adapters.map(\.name)
    }
}
