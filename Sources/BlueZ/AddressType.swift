/// A Bluetooth LE address's type, as BlueZ's `Device1.AddressType` names it.
public enum AddressType: String, Sendable, Hashable, CaseIterable {
    /// An address registered with the IEEE: fixed for the device's life.
    case `public`
    /// A random address: static (set at power-up, or chosen by anyone with `btmgmt static-addr`)
    /// or private.
    case random
}
