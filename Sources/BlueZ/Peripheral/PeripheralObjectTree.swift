import DBus
import GATT

/// hrbridge's peripheral objects as bluetoothd reads them: the GATT application (services and
/// characteristics with their properties, under the root that serves `GetManagedObjects`) and
/// the advertisement.
///
/// A pure value built from a ``PeripheralConfiguration``. Only two things change once it is
/// built, set through it: the battery level and which characteristics notify. Objects are never
/// added or removed (bluetoothd unregisters a service whose objects go away).
struct PeripheralObjectTree: Hashable, Sendable {
    /// A primary service.
    struct Service: Hashable, Sendable {
        let service: GATTService
        let path: String
    }

    /// A characteristic and its current state.
    struct Characteristic: Hashable, Sendable {
        let kind: PeripheralCharacteristic
        let path: String
        let servicePath: String
        /// What a read returns; `nil` when there is nothing to read (notify-only, or the battery
        /// level is unknown).
        var value: [UInt8]?
        var notifying = false
    }

    /// One property: name and value.
    struct Property: Hashable, Sendable {
        let name: String
        let value: DBusValue
    }

    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let advertisementInterface = "org.bluez.LEAdvertisement1"
    static let manufacturerName = "hrbridge"
    /// Longest Model Number String published (the configuration's is cut between characters).
    static let maximumModelNumberBytes = 64

    /// The GATT application's root: serves `GetManagedObjects`.
    let root: String
    let advertisementPath: String
    let services: [Service]
    private(set) var characteristics: [Characteristic]
    /// The sanitized name the advertisement carries.
    let localName: String
    let appearance: UInt16

    /// The objects for `configuration`, with no battery level and nothing notifying.
    init(configuration: PeripheralConfiguration) {
        root = configuration.objectPath
        advertisementPath = root + "/advertisement0"
        let heart = root + "/service0"
        let battery = root + "/service1"
        let information = root + "/service2"
        services = [
            Service(service: .heartRate, path: heart), Service(service: .battery, path: battery),
            Service(service: .deviceInformation, path: information),
        ]
        var characteristics = [
            Characteristic(kind: .heartRateMeasurement, path: heart + "/char0", servicePath: heart),
            Characteristic(
                kind: .bodySensorLocation, path: heart + "/char1", servicePath: heart,
                value: configuration.bodySensorLocation.encoded()),
        ]
        if configuration.energyControlPoint {
            characteristics.append(Characteristic(kind: .controlPoint, path: heart + "/char2", servicePath: heart))
        }
        characteristics += [
            Characteristic(kind: .batteryLevel, path: battery + "/char0", servicePath: battery),
            Characteristic(
                kind: .manufacturerName, path: information + "/char0", servicePath: information,
                value: Array(Self.manufacturerName.utf8)),
            Characteristic(
                kind: .modelNumber, path: information + "/char1", servicePath: information,
                value: Self.cut(configuration.modelNumber, toBytes: Self.maximumModelNumberBytes)),
        ]
        self.characteristics = characteristics
        localName = AdvertisedName.sanitized(configuration.localName)
        appearance = configuration.appearance
    }

    /// Every path to export: the root, services, characteristics and the advertisement.
    var exportedPaths: [String] {
        [root] + services.map(\.path) + characteristics.map(\.path) + [advertisementPath]
    }

    func characteristic(at path: String) -> Characteristic? { characteristics.first { $0.path == path } }

    func characteristic(_ kind: PeripheralCharacteristic) -> Characteristic? {
        characteristics.first { $0.kind == kind }
    }

    /// Sets what a read of `kind` returns; whether it changed.
    mutating func setValue(_ value: [UInt8]?, of kind: PeripheralCharacteristic) -> Bool {
        guard let index = characteristics.firstIndex(where: { $0.kind == kind }),
            characteristics[index].value != value
        else { return false }
        characteristics[index].value = value
        return true
    }

    /// Sets whether `kind` notifies; whether it changed.
    mutating func setNotifying(_ notifying: Bool, of kind: PeripheralCharacteristic) -> Bool {
        guard let index = characteristics.firstIndex(where: { $0.kind == kind }),
            characteristics[index].notifying != notifying
        else { return false }
        characteristics[index].notifying = notifying
        return true
    }

    // MARK: Properties

    /// The interfaces an object implements besides `org.freedesktop.DBus.Properties`.
    func interfaces(at path: String) -> [String] {
        if path == root { return [Self.objectManagerInterface] }
        if path == advertisementPath { return [Self.advertisementInterface] }
        if services.contains(where: { $0.path == path }) { return [Self.serviceInterface] }
        if characteristic(at: path) != nil { return [Self.characteristicInterface] }
        return []
    }

    /// The properties of `interface` on `path`, in a fixed order; `nil` when the object lacks it.
    func properties(at path: String, interface: String) -> [Property]? {
        switch interface {
        case Self.objectManagerInterface where path == root:
            return []
        case Self.serviceInterface:
            guard let service = services.first(where: { $0.path == path }) else { return nil }
            return [
                Property(name: "UUID", value: .string(service.service.uuid.description)),
                Property(name: "Primary", value: .boolean(true)),
            ]
        case Self.characteristicInterface:
            guard let characteristic = characteristic(at: path) else { return nil }
            var properties = [
                Property(name: "UUID", value: .string(characteristic.kind.characteristic.uuid.description)),
                Property(name: "Service", value: .objectPath(characteristic.servicePath)),
                Property(
                    name: "Flags", value: .array(elementSignature: "s", characteristic.kind.flags.map(DBusValue.string))
                ),
            ]
            if characteristic.kind.isReadable, let value = characteristic.value {
                properties.append(Property(name: "Value", value: .bytes(value)))
            }
            if characteristic.kind.notifies {
                properties.append(Property(name: "Notifying", value: .boolean(characteristic.notifying)))
            }
            return properties
        case Self.advertisementInterface where path == advertisementPath:
            // Only what BlueZ 5.66 takes without --experimental: no intervals, no Discoverable.
            return [
                Property(name: "Type", value: .string("peripheral")),
                Property(
                    name: "ServiceUUIDs",
                    value: .array(
                        elementSignature: "s", [.string(GATTService.heartRate.uuid.shortDescription.uppercased())])),
                Property(name: "LocalName", value: .string(localName)),
                Property(name: "Appearance", value: .uint16(appearance)),
            ]
        default:
            return nil
        }
    }

    /// `a{sv}` of `properties`.
    static func propertyMap(_ properties: [Property]) -> DBusValue {
        .propertyMap(properties.map { ($0.name, $0.value) })
    }

    /// The answer to `GetManagedObjects`: services and characteristics (not the advertisement,
    /// which bluetoothd reads on its own), `a{oa{sa{sv}}}`.
    var managedObjects: DBusValue {
        let paths = services.map(\.path) + characteristics.map(\.path)
        return .dictionary(
            keySignature: "o", valueSignature: "a{sa{sv}}",
            entries: paths.sorted().map { path in
                DBusDictionaryEntry(
                    key: .objectPath(path),
                    value: .dictionary(
                        keySignature: "s", valueSignature: "a{sv}",
                        entries: interfaces(at: path).map { interface in
                            DBusDictionaryEntry(
                                key: .string(interface),
                                value: Self.propertyMap(properties(at: path, interface: interface) ?? []))
                        }))
            })
    }

    /// Every object, interface and property, one per line, sorted by path: for snapshot tests and logs.
    var rendered: String {
        exportedPaths.sorted().flatMap { path in
            interfaces(at: path).flatMap { interface in
                ["\(path) \(interface)"]
                    + (properties(at: path, interface: interface) ?? []).map { "  \($0.name) = \($0.value)" }
            }
        }.joined(separator: "\n")
    }

    /// `text`'s UTF-8, at most `limit` bytes, cut between characters.
    private static func cut(_ text: String, toBytes limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in text {
            let encoded = Array(character.utf8)
            guard bytes.count + encoded.count <= limit else { break }
            bytes += encoded
        }
        return bytes
    }
}
