public import Foundation

/// What the bridge knows about one sensor, as the API shows it.
public struct SensorStatus: Sendable, Codable, Equatable {
    /// The Bluetooth address, upper case.
    public var address: String
    /// The adapter name.
    public var adapter: String
    /// A display name.
    public var name: String?
    /// `ready`, `connected`, `connecting`, `disconnected` or `seen` (discovered, not connected).
    public var state: String
    /// Why it is disconnected, when it is.
    public var reason: String?
    /// The athlete it belongs to (configuration).
    public var athlete: String?
    /// The last heart rate in bpm.
    public var heartRate: Int?
    /// Battery level in percent.
    public var batteryLevel: Int?
    /// Signal strength in dBm.
    public var rssi: Int?
    /// When the last measurement arrived.
    public var lastMeasurement: Date?
    /// Frames decoded.
    public var framesDecoded = 0
    /// Frames the decoder refused.
    public var framesRefused = 0
    /// Disconnections since start.
    public var disconnections = 0
    /// The session recording it, when one is.
    public var session: UUID?
    /// The athlete's display name, when configured.
    public var athleteName: String?
    /// The heart-rate zone (1-based) of the last heart rate, by the athlete's zones.
    public var zone: Int?
    /// The last heart rate as a percentage of the athlete's maximum.
    public var percentOfMax: Int?

    /// Creates it from its parts.
    public init(address: String, adapter: String, name: String? = nil, state: String = "seen", athlete: String? = nil) {
        self.address = address
        self.adapter = adapter
        self.name = name
        self.state = state
        self.athlete = athlete
    }

    /// The JSON object of this status.
    public var fields: [String: Any] {
        var object: [String: Any] = [
            "address": address, "adapter": adapter, "state": state, "framesDecoded": framesDecoded,
            "framesRefused": framesRefused, "disconnections": disconnections,
        ]
        object["name"] = name ?? NSNull()
        object["reason"] = reason ?? NSNull()
        object["athlete"] = athlete ?? NSNull()
        object["heartRate"] = heartRate ?? NSNull()
        object["batteryLevel"] = batteryLevel ?? NSNull()
        object["rssi"] = rssi ?? NSNull()
        object["lastMeasurement"] = lastMeasurement.map(ISO8601.format) ?? NSNull()
        object["session"] = session?.uuidString.lowercased() ?? NSNull()
        object["athleteName"] = athleteName ?? NSNull()
        object["zone"] = zone ?? NSNull()
        object["percentOfMax"] = percentOfMax ?? NSNull()
        return object
    }
}
