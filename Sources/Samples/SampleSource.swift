/// The sensor a sample came from: identity is adapter + address; the name is for display.
public struct SampleSource: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The adapter that saw the sensor: `hci0`, `mock`.
    public var adapter: String
    /// The sensor's Bluetooth address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// The sensor's name or alias, for display only.
    public var name: String?

    /// Creates a source.
    public init(adapter: String, address: String, name: String? = nil) {
        self.adapter = adapter
        self.address = address
        self.name = name
    }

    /// `Polar H10 (hci0/AA:BB:…)`.
    public var description: String {
        name.map { "\($0) (\(adapter)/\(address))" } ?? "\(adapter)/\(address)"
    }

    /// Two sources are the same sensor when adapter and address match, whatever the name.
    public static func == (lhs: SampleSource, rhs: SampleSource) -> Bool {
        lhs.adapter == rhs.adapter && lhs.address == rhs.address
    }

    /// Hashes the identity only.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(adapter)
        hasher.combine(address)
    }
}
