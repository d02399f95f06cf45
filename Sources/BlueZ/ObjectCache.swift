import DBus
import GATT

/// BlueZ's object tree as last seen: path → interface → property → value.
///
/// A pure value fed by the `GetManagedObjects` snapshot and by `InterfacesAdded`,
/// `InterfacesRemoved` and `PropertiesChanged` (including invalidated properties).
struct ObjectCache: Sendable {
    private(set) var objects: [String: [String: [String: DBusValue]]] = [:]
    /// Device objects kept at most: anyone in radio range can make bluetoothd create them (one
    /// per random address advertised), and this copy of its tree must stay bounded. A strap well
    /// within radio range of a gym is one of a few hundred at most.
    var deviceLimit = 4_096
    /// Addresses whose device objects are kept past ``deviceLimit``: the straps hrbridge wants.
    var preferredAddresses: Set<String> = []
    /// Device objects (and their GATT objects) left out because ``deviceLimit`` was reached.
    private(set) var devicesRefused = 0
    /// Device objects held now.
    private(set) var deviceCount = 0

    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let batteryInterface = "org.bluez.Battery1"

    /// Replaces the cache with a `GetManagedObjects` reply; returns the properties refused for
    /// their type (``BlueZShapes``), which are left out.
    @discardableResult
    mutating func load(snapshot: DBusValue) -> [MalformedBlueZMessage] {
        objects = [:]
        deviceCount = 0
        var refused: [MalformedBlueZMessage] = []
        // Parents first: a GATT object is judged by whether its device is held.
        let objects = (snapshot.stringDictionary ?? [:]).sorted { $0.key.count < $1.key.count }
        for (path, interfaces) in objects {
            refused += add(path: path, interfaces: interfaces)
        }
        return refused
    }

    /// Adds an object's interfaces; returns the properties refused for their type (left out).
    @discardableResult
    mutating func add(path: String, interfaces: DBusValue) -> [MalformedBlueZMessage] {
        let byInterface = interfaces.stringDictionary ?? [:]
        let connected = byInterface[Self.deviceInterface]?.stringDictionary?["Connected"]?.bool == true
        guard admits(path, connected: connected) else {
            devicesRefused += 1
            return []
        }
        let wasAbsent = objects[path] == nil
        var refused: [MalformedBlueZMessage] = []
        for (interface, properties) in byInterface {
            let checked = BlueZShapes.checked(properties.stringDictionary ?? [:], of: interface, at: path)
            objects[path, default: [:]][interface] = checked.kept
            refused += checked.refused
        }
        if wasAbsent, objects[path] != nil, BlueZPaths.device(containing: path) == path { deviceCount += 1 }
        return refused
    }

    /// Adds what an older reading of an object has and the cache lacks (the values it holds came
    /// from newer signals); returns the properties refused for their type.
    @discardableResult
    mutating func merge(path: String, interfaces: DBusValue) -> [MalformedBlueZMessage] {
        guard objects[path] != nil else { return add(path: path, interfaces: interfaces) }
        var refused: [MalformedBlueZMessage] = []
        for (interface, properties) in interfaces.stringDictionary ?? [:] {
            let checked = BlueZShapes.checked(properties.stringDictionary ?? [:], of: interface, at: path)
            for (name, value) in checked.kept where objects[path]?[interface]?[name] == nil {
                objects[path, default: [:]][interface, default: [:]][name] = value
            }
            refused += checked.refused
        }
        return refused
    }

    mutating func remove(path: String, interfaces: [String]) {
        for interface in interfaces { objects[path]?[interface] = nil }
        if objects[path]?.isEmpty == true {
            objects[path] = nil
            if BlueZPaths.device(containing: path) == path { deviceCount -= 1 }
        }
    }

    /// Whether a new object at `path` may be kept: adapters always; anything while fewer than
    /// ``deviceLimit`` devices are held; past it, a wanted strap's device, a device with a link
    /// (`connected`: a controller's few link slots bound those) and the GATT objects of devices held.
    func admits(_ path: String, connected: Bool = false) -> Bool {
        guard objects[path] == nil, let device = BlueZPaths.device(containing: path) else { return true }
        if deviceCount < deviceLimit { return true }
        if device != path { return objects[device] != nil }
        return connected || BlueZPaths.address(ofDevice: path).map { preferredAddresses.contains($0) } ?? false
    }

    /// Applies a `PropertiesChanged`; returns the properties refused for their type (not applied).
    /// With `admittingLinked`, a device left out when it appeared comes in past the limit once it
    /// links, holding only what changed (the peripheral's centrals, read by their path).
    @discardableResult
    mutating func update(
        path: String, interface: String, changed: [String: DBusValue], invalidated: [String],
        admittingLinked: Bool = false
    ) -> [MalformedBlueZMessage] {
        let checked = BlueZShapes.checked(changed, of: interface, at: path)
        let connected =
            admittingLinked && interface == Self.deviceInterface && checked.kept["Connected"]?.bool == true
        guard objects[path]?[interface] != nil || (!checked.kept.isEmpty && admits(path, connected: connected)) else {
            return checked.refused
        }
        if objects[path] == nil, BlueZPaths.device(containing: path) == path { deviceCount += 1 }
        for (name, value) in checked.kept { objects[path, default: [:]][interface, default: [:]][name] = value }
        for name in invalidated { objects[path]?[interface]?[name] = nil }
        return checked.refused
    }

    func properties(_ path: String, _ interface: String) -> [String: DBusValue]? { objects[path]?[interface] }

    /// Adapter paths (`/org/bluez/hci0`…) with their names, sorted.
    var adapters: [(path: String, name: String)] {
        objects.compactMap { path, interfaces in
            interfaces[Self.adapterInterface] == nil ? nil : (path, String(path.split(separator: "/").last ?? ""))
        }.sorted { $0.path.count != $1.path.count ? $0.path.count < $1.path.count : $0.path < $1.path }
    }

    /// Device paths directly under `adapter`.
    func devices(under adapter: String) -> [String] {
        objects.keys.filter { path in
            path.hasPrefix(adapter + "/dev_") && !path.dropFirst(adapter.count + 1).contains("/")
                && objects[path]?[Self.deviceInterface] != nil
        }.sorted()
    }

    /// The characteristics of a device: path → characteristic UUID.
    func characteristics(of device: String) -> [String: BluetoothUUID] {
        var result: [String: BluetoothUUID] = [:]
        for (path, interfaces) in objects where path.hasPrefix(device + "/") {
            guard let properties = interfaces[Self.characteristicInterface],
                let text = properties["UUID"]?.string, let uuid = BluetoothUUID(text)
            else { continue }
            result[path] = uuid
        }
        return result
    }

    /// The characteristic path of `characteristic` on a device, if exported.
    func path(of characteristic: GATTCharacteristic, on device: String) -> String? {
        characteristics(of: device).filter { $0.value == characteristic.uuid }.keys.sorted().first
    }

    /// The characteristic a path carries, if hrbridge knows it.
    func characteristic(at path: String) -> GATTCharacteristic? {
        properties(path, Self.characteristicInterface)?["UUID"]?.string.flatMap(BluetoothUUID.init)
            .flatMap(GATTCharacteristic.init(uuid:))
    }

    /// The services a device advertises or exposes, among those hrbridge knows.
    func services(of device: String) -> Set<GATTService> {
        var uuids = properties(device, Self.deviceInterface)?["UUIDs"]?.arrayElements?.compactMap(\.string) ?? []
        // A cached device's resolved GATT services count too (its UUIDs may be empty).
        let prefix = device + "/"
        for (path, interfaces) in objects where path.hasPrefix(prefix) {
            if let uuid = interfaces[Self.serviceInterface]?["UUID"]?.string { uuids.append(uuid) }
        }
        return Set(uuids.compactMap(BluetoothUUID.init).compactMap(GATTService.init(uuid:)))
    }
}
