/// What the peripheral reports while it runs.
public enum PeripheralEvent: Sendable, Hashable {
    /// bluetoothd accepted both the GATT application and the advertisement on `adapter` (again
    /// after every restart of bluetoothd or return of the adapter).
    case registered(adapter: String)
    /// Advertising started or stopped, and why: `"bluetoothd stopped"`, `"adapter hci1 missing"`,
    /// `"NotPermitted: no advertising instance left"`…
    case advertising(on: Bool, reason: String)
    /// A central subscribed to Heart Rate Measurement (0x2A37) notifications, or the last one left.
    case notifying(Bool)
    /// An app wrote `0x01` (reset energy expended) to the Heart Rate Control Point.
    case energyResetRequested
    /// An app wrote something else to the control point (its first bytes, at most 4); it was
    /// answered with ATT error 0x80.
    case refusedWrite(bytes: [UInt8])
}
