import DBus

/// Several adapters in python-dbusmock's bluez5 template, and straps heard by some of them.
extension MockBlueZ {
    /// `/org/bluez/hci1/dev_C0_FF_EE_00_00_01`.
    public static func devicePath(_ adapter: String, _ address: String) -> String {
        "/org/bluez/\(adapter)/dev_" + address.uppercased().replacing(":", with: "_")
    }

    /// The Heart Rate Measurement characteristic of a strap added with ``addStrap(_:on:rssi:)``.
    public static func characteristicPath(_ adapter: String, _ address: String) -> String {
        devicePath(adapter, address) + "/service0010/char0011"
    }

    /// Plugs in adapter `name`, powered.
    public func addAdapter(_ name: String) async throws {
        try await call("/", "org.bluez.Mock", "AddAdapter", [.string(name), .string("bridge-\(name)")])
    }

    /// A strap heard by `adapter` at `rssi`, with its Heart Rate service resolved.
    public func addStrap(_ address: String, on adapter: String, rssi: Int16) async throws {
        let device = Self.devicePath(adapter, address)
        try await call("/", "org.bluez.Mock", "AddDevice", [.string(adapter), .string(address), .string("Strap")])
        try await call("/", "org.hrbridge.Faults", "AddHeartRateService", [.objectPath(device)])
        try await call(
            device, "org.freedesktop.DBus.Mock", "UpdateProperties",
            [
                .string("org.bluez.Device1"),
                .propertyMap([("RSSI", .int16(rssi)), ("ServicesResolved", .boolean(true))]),
            ])
    }

    /// A Heart Rate Measurement notification from a strap as heard through `adapter`.
    public func notify(_ address: String, on adapter: String, _ frame: [UInt8]) async throws {
        try await call(
            Self.characteristicPath(adapter, address), "org.freedesktop.DBus.Mock", "UpdateProperties",
            [.string("org.bluez.GattCharacteristic1"), .propertyMap([("Value", .bytes(frame))])])
    }

    /// A strap added with ``addStrap(_:on:rssi:)`` advertises `bytes` as manufacturer data of
    /// `company` as heard through `adapter` (0x006B: Polar's broadcast heart rate).
    public func advertise(_ address: String, on adapter: String, _ bytes: [UInt8], company: UInt16 = 0x006B)
        async throws
    {
        try await call(
            Self.devicePath(adapter, address), "org.freedesktop.DBus.Mock", "UpdateProperties",
            [
                .string("org.bluez.Device1"),
                .propertyMap([("ManufacturerData", Self.manufacturerData(bytes, company: company))]),
            ])
    }

    /// The adapter's controller holds `count` links; one more `Connect` fails as a full one does
    /// (applies to the devices the adapter has now).
    public func limitLinks(_ adapter: String, _ count: UInt32) async throws {
        try await call("/", "org.hrbridge.Faults", "LimitLinks", [.string(adapter), .uint32(count)])
    }

    /// Sets `Powered` on adapter `name`.
    public func power(_ name: String, _ on: Bool) async throws {
        try await call(
            "/org/bluez/\(name)", "org.freedesktop.DBus.Mock", "UpdateProperties",
            [.string("org.bluez.Adapter1"), .propertyMap([("Powered", .boolean(on))])])
    }
}
