import DBus

/// The shapes BlueZ's API gives the signals, replies and properties hrbridge reads: anything else
/// is a ``MalformedBlueZMessage``, refused rather than read as empty or absent.
enum BlueZShapes {
    /// What a property's value must be.
    enum PropertyType: Hashable, Sendable {
        case boolean
        case string
        /// Any integer type: BlueZ's are `n` (RSSI) and `y` (Percentage); the value is what counts.
        case integer
        case strings
        case bytes
        /// `a{qv}`: company identifier → data.
        case companyData

        var name: String {
            switch self {
            case .boolean: "b"
            case .string: "s"
            case .integer: "an integer"
            case .strings: "as"
            case .bytes: "ay"
            case .companyData: "a{qv}"
            }
        }

        func accepts(_ value: DBusValue) -> Bool {
            switch (self, value.unwrapped) {
            case (.boolean, .boolean), (.string, .string): true
            case (.integer, let value): value.integer != nil
            case (.strings, .array("s", _)), (.bytes, .bytes), (.bytes, .array("y", _)): true
            case (.companyData, .dictionary("q", "v", _)): true
            default: false
            }
        }
    }

    /// The properties hrbridge reads, by interface. Others are kept as they come: nothing reads them.
    static let propertyTypes: [String: [String: PropertyType]] = [
        ObjectCache.adapterInterface: ["Powered": .boolean],
        ObjectCache.deviceInterface: [
            "Address": .string, "Name": .string, "Alias": .string, "AddressType": .string, "RSSI": .integer,
            "UUIDs": .strings, "Paired": .boolean, "Bonded": .boolean, "Trusted": .boolean, "Connected": .boolean,
            "ServicesResolved": .boolean, "ManufacturerData": .companyData,
        ],
        ObjectCache.serviceInterface: ["UUID": .string],
        ObjectCache.characteristicInterface: ["UUID": .string, "Value": .bytes],
        ObjectCache.batteryInterface: ["Percentage": .integer],
        "org.bluez.LEAdvertisingManager1": ["SupportedInstances": .integer],
    ]

    /// The argument signatures of the `org.bluez` signals hrbridge applies.
    static let signalSignatures = [
        "InterfacesAdded": "oa{sa{sv}}", "InterfacesRemoved": "oas", "PropertiesChanged": "sa{sv}as",
    ]

    /// `GetManagedObjects`' reply.
    static let managedObjectsSignature = "a{oa{sa{sv}}}"

    /// Why `signal` (one of ``signalSignatures``' members) cannot be applied; nil when it can.
    static func problem(with signal: DBusSignal) -> MalformedBlueZMessage? {
        guard let expected = signalSignatures[signal.member] else { return nil }
        let received = signal.arguments.map(\.signature).joined()
        guard received != expected else { return nil }
        return MalformedBlueZMessage(
            kind: .signal, member: signal.member, path: signal.path, expected: expected, received: received)
    }

    /// `properties` of `interface` at `path` without those of another type than BlueZ gives them,
    /// and a refusal for each of those.
    static func checked(_ properties: [String: DBusValue], of interface: String, at path: String) -> (
        kept: [String: DBusValue], refused: [MalformedBlueZMessage]
    ) {
        guard let types = propertyTypes[interface] else { return (properties, []) }
        var kept = properties
        var refused: [MalformedBlueZMessage] = []
        for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
            guard let type = types[name], !type.accepts(value) else { continue }
            kept[name] = nil
            let short = interface.split(separator: ".").last.map(String.init) ?? interface
            refused.append(
                MalformedBlueZMessage(
                    kind: .property, member: "\(short).\(name)", path: path, expected: type.name,
                    received: value.unwrapped.signature))
        }
        return (kept, refused)
    }
}
