public import GATT

/// The daemon's `[peripheral]`: hrbridge as a Bluetooth heart-rate sensor for apps.
public struct PeripheralSettings: Hashable, Sendable {
    /// The adapter that serves apps; `nil`: automatic (an adapter holding no straps when there is one).
    public var adapter: String?
    /// Whose readings are passed on.
    public var source: RelaySource = .session
    /// The name apps see (made safe before it is advertised).
    public var name = "hrbridge HR"
    /// Pass on RR intervals.
    public var forwardRR = true
    /// Pass on energy expended and serve the control point that resets it.
    public var forwardEnergy = false
    /// What 0x2A38 reads.
    public var location: BodySensorLocation = .chest
    /// A second sensor, on another adapter, whose "heart rate" is the session's DFA α1 × 100.
    public var alpha1 = false
    /// The adapter of that second sensor; `nil`: automatic.
    public var alpha1Adapter: String?
    /// Its name.
    public var alpha1Name = "hrbridge a1x100"

    public init() {}

    /// The spellings of body sensor locations in configuration and on the command line.
    public static let locations: [(String, BodySensorLocation)] = [
        ("chest", .chest), ("wrist", .wrist), ("finger", .finger), ("hand", .hand), ("earlobe", .earLobe),
        ("foot", .foot), ("other", .other),
    ]

    /// A location by its name (any case), or `nil`.
    public static func location(named name: String) -> BodySensorLocation? {
        locations.first { $0.0 == name.lowercased() }?.1
    }
}
