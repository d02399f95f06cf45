/// Which adapter serves apps as a heart-rate sensor, and which ones hold straps.
///
/// One controller in both roles works badly on most kernels and controllers (advertising pauses
/// while a strap connects; before Linux 6.11 a strap often cannot be reconnected while an app is
/// connected), so a second adapter takes the peripheral role whenever there is one.
public struct PeripheralPlacement: Hashable, Sendable {
    /// The adapter that advertises and serves the heart-rate service.
    public var peripheral: String
    /// The adapters straps are connected through; `nil`: every adapter.
    public var straps: [String]?
    /// Whether the peripheral shares its adapter with straps.
    public var isShared: Bool

    public init(peripheral: String, straps: [String]?, isShared: Bool) {
        self.peripheral = peripheral
        self.straps = straps
        self.isShared = isShared
    }

    /// Places the roles on `available` adapters (in BlueZ's order).
    /// - Parameters:
    ///   - requested: the peripheral adapter asked for, if any.
    ///   - strapAdapters: the adapters asked for straps (empty: any).
    ///   - busy: adapters already holding straps (the daemon's pool knows), avoided when possible.
    public static func choose(
        available: [String], requested: String? = nil, strapAdapters: [String] = [], busy: Set<String> = []
    ) -> PeripheralPlacement? {
        let peripheral: String
        if let requested {
            peripheral = requested
        } else if let free = available.last(where: { !strapAdapters.contains($0) && !busy.contains($0) }),
            available.count > 1 || strapAdapters.isEmpty && busy.isEmpty && available.count == 1
        {
            peripheral = free
        } else if let free = available.last(where: { !strapAdapters.contains($0) }), available.count > 1 {
            peripheral = free
        } else if let first = strapAdapters.first ?? available.first {
            peripheral = first
        } else {
            return nil
        }
        let straps: [String]?
        if !strapAdapters.isEmpty {
            straps = strapAdapters
        } else {
            let others = available.filter { $0 != peripheral }
            straps = others.isEmpty ? nil : others
        }
        let isShared = straps.map { $0.contains(peripheral) } ?? true
        return PeripheralPlacement(peripheral: peripheral, straps: straps, isShared: isShared)
    }
}
