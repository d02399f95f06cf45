public import DBus
import Synchronization

/// Calls `member` on `org.bluez`, as an app (or a test) does.
public func callBlueZ(
    _ connection: DBusConnection, _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []
) async throws -> [DBusValue] {
    try await connection.call(
        destination: "org.bluez", path: path, interface: interface, member: member, arguments: arguments)
}

/// org.bluez's objects: path → interface → properties.
public func blueZObjects(_ connection: DBusConnection) async throws -> [String: [String: [String: DBusValue]]] {
    let reply = try await callBlueZ(connection, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
    var objects: [String: [String: [String: DBusValue]]] = [:]
    for (path, interfaces) in reply.first?.stringDictionary ?? [:] {
        objects[path] = (interfaces.stringDictionary ?? [:]).mapValues { $0.stringDictionary ?? [:] }
    }
    return objects
}

/// An app on adapter `central` finds the advertisement of adapter `peripheral` (made
/// discoverable first: BlueZoo lists an advertisement only of a discoverable adapter), scanning
/// LE only (BlueZoo would otherwise report the BR/EDR side on the same path); returns the
/// device's properties as the app sees them at `device`, once it is there.
public func discoverAdvertisement(
    _ app: DBusConnection, central: String, peripheral: String, device: String
) async throws -> [String: DBusValue] {
    _ = try await callBlueZ(
        app, "/org/bluez/\(peripheral)", "org.freedesktop.DBus.Properties", "Set",
        [.string("org.bluez.Adapter1"), .string("Discoverable"), .variant(.boolean(true))])
    _ = try await callBlueZ(
        app, "/org/bluez/\(central)", "org.bluez.Adapter1", "SetDiscoveryFilter",
        [.propertyMap([("Transport", .string("le"))])])
    _ = try await callBlueZ(app, "/org/bluez/\(central)", "org.bluez.Adapter1", "StartDiscovery")
    var properties: [String: DBusValue] = [:]
    try await eventually("the advertisement of \(peripheral) seen from \(central)") {
        properties = try await blueZObjects(app)[device]?["org.bluez.Device1"] ?? [:]
        return !properties.isEmpty
    }
    _ = try await callBlueZ(app, "/org/bluez/\(central)", "org.bluez.Adapter1", "StopDiscovery")
    return properties
}

/// Records the `Value` bytes of one characteristic's PropertiesChanged signals: what an app
/// subscribed to it receives.
public final class ValueRecorder: Sendable {
    private let values = Mutex<[[UInt8]]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    public init() {}

    /// Records `signals` until they end.
    public func record(_ signals: AsyncStream<DBusSignal>) async {
        for await signal in signals {
            guard signal.arguments.count >= 2, let bytes = signal.arguments[1].stringDictionary?["Value"]?.bytes else {
                continue
            }
            values.withLock { $0.append(bytes) }
        }
    }

    /// Starts recording the characteristic at `path` (its signals from org.bluez on `connection`)
    /// until ``stop()``.
    public static func start(_ path: String, on connection: DBusConnection) async throws -> ValueRecorder {
        let recorder = ValueRecorder()
        let signals = try await connection.signals(
            matching: MatchRule(
                sender: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged"))
        recorder.task.withLock { $0 = Task { await recorder.record(signals) } }
        return recorder
    }

    public func stop() { task.withLock { $0?.cancel() } }

    /// Every value received so far, in order.
    public var all: [[UInt8]] { values.withLock { $0 } }
}
