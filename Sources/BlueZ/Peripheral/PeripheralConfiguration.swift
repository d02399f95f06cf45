public import GATT

/// What hrbridge publishes as a Heart Rate Sensor peripheral, and where.
public struct PeripheralConfiguration: Sendable, Hashable {
    /// The adapter that plays the peripheral (`hci1`): a spare one avoids advertising gaps while
    /// another adapter (re)connects straps.
    public var adapter: String
    /// The advertised name. Untrusted (it may come from a strap's name):
    /// ``AdvertisedName/sanitized(_:)`` makes it safe before it is published.
    public var localName: String
    /// Body Sensor Location (0x2A38).
    public var bodySensorLocation: BodySensorLocation
    /// Whether the Heart Rate Control Point (0x2A39) is published: only when energy expended is
    /// forwarded, since resetting it is its only command.
    public var energyControlPoint: Bool
    /// The advertised GAP appearance: 0x0341, "Heart Rate Sensor: Heart Rate Belt".
    public var appearance: UInt16 = 0x0341
    /// The root of our objects on the bus (the GATT application), e.g. `/org/hrbridge/peripheral/hci1`.
    public var objectPath: String
    /// Device Information's Model Number String (0x2A24).
    public var modelNumber: String = "hrbridge peripheral"

    /// Creates a configuration; the object path defaults to `/org/hrbridge/peripheral/<adapter>`.
    public init(
        adapter: String, localName: String, bodySensorLocation: BodySensorLocation = .chest,
        energyControlPoint: Bool = false, appearance: UInt16 = 0x0341, objectPath: String? = nil,
        modelNumber: String = "hrbridge peripheral"
    ) {
        self.adapter = adapter
        self.localName = localName
        self.bodySensorLocation = bodySensorLocation
        self.energyControlPoint = energyControlPoint
        self.appearance = appearance
        self.objectPath = objectPath ?? "/org/hrbridge/peripheral/" + adapter
        self.modelNumber = modelNumber
    }

    /// The adapter's object path, `/org/bluez/hci1`.
    var adapterPath: String { "/org/bluez/" + adapter }

    /// Why the configuration cannot be served, if it cannot: names that would make invalid paths.
    var problem: PeripheralError? {
        guard !adapter.isEmpty, adapter.utf8.allSatisfy(Self.isPathElementByte) else {
            return .invalidConfiguration("adapter name \"\(adapter.prefix(40))\" is not a BlueZ adapter name")
        }
        let elements = objectPath.split(separator: "/", omittingEmptySubsequences: false)
        guard objectPath.hasPrefix("/"), objectPath != "/", objectPath.utf8.count <= 200,
            elements.dropFirst().allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(Self.isPathElementByte) })
        else {
            return .invalidConfiguration("object path \"\(objectPath.prefix(80))\" is not a D-Bus object path")
        }
        return nil
    }

    /// `[A-Za-z0-9_]`, what a D-Bus object path element may hold.
    private static func isPathElementByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
