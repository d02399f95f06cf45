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
    public var state: SensorState
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
    public var framesDecoded = 0
    /// Frames and broadcasts the decoders refused.
    public var framesRefused = 0
    /// The refusals by reason, named as `/metrics` names them (`trailing_bytes`, `unknown_length`…).
    public var refusedByReason: [String: Int] = [:]
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
    /// How its last measurement came: `connection` or `advertisement` (`nil` before the first).
    public var via: String?
    /// Whether its last frame through a link came over a bonded one (BlueZ holds the strap's key,
    /// so the link is encrypted with it); `null` before the first. What `[class] join_via = "link"` needs.
    public var bonded: Bool?

    public init(
        address: String, adapter: String, name: String? = nil, state: SensorState = .seen, athlete: String? = nil
    ) {
        self.address = address
        self.adapter = adapter
        self.name = name
        self.state = state
        self.athlete = athlete
    }

    private enum CodingKeys: String, CodingKey {
        case address, adapter, name, state, reason, athlete, heartRate, batteryLevel, rssi, lastMeasurement
        case framesDecoded, framesRefused, refusedByReason, disconnections, session, athleteName, zone, percentOfMax
        case via, bonded
    }

    /// Every key is present: what is unknown is `null`; times are ISO 8601, the session id lower case.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(address, forKey: .address)
        try container.encode(adapter, forKey: .adapter)
        try container.encode(name, forKey: .name)
        try container.encode(state, forKey: .state)
        try container.encode(reason, forKey: .reason)
        try container.encode(athlete, forKey: .athlete)
        try container.encode(heartRate, forKey: .heartRate)
        try container.encode(batteryLevel, forKey: .batteryLevel)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(lastMeasurement.map(ISO8601.format), forKey: .lastMeasurement)
        try container.encode(framesDecoded, forKey: .framesDecoded)
        try container.encode(framesRefused, forKey: .framesRefused)
        try container.encode(refusedByReason, forKey: .refusedByReason)
        try container.encode(disconnections, forKey: .disconnections)
        try container.encode(session?.uuidString.lowercased(), forKey: .session)
        try container.encode(athleteName, forKey: .athleteName)
        try container.encode(zone, forKey: .zone)
        try container.encode(percentOfMax, forKey: .percentOfMax)
        try container.encode(via, forKey: .via)
        try container.encode(bonded, forKey: .bonded)
    }

    /// Reads what ``encode(to:)`` writes (the API client's side).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        address = try container.decode(String.self, forKey: .address)
        adapter = try container.decode(String.self, forKey: .adapter)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        state = try container.decode(SensorState.self, forKey: .state)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        athlete = try container.decodeIfPresent(String.self, forKey: .athlete)
        heartRate = try container.decodeIfPresent(Int.self, forKey: .heartRate)
        batteryLevel = try container.decodeIfPresent(Int.self, forKey: .batteryLevel)
        rssi = try container.decodeIfPresent(Int.self, forKey: .rssi)
        lastMeasurement = try container.decodeIfPresent(String.self, forKey: .lastMeasurement).flatMap(ISO8601.parse)
        framesDecoded = try container.decodeIfPresent(Int.self, forKey: .framesDecoded) ?? 0
        framesRefused = try container.decodeIfPresent(Int.self, forKey: .framesRefused) ?? 0
        refusedByReason = try container.decodeIfPresent([String: Int].self, forKey: .refusedByReason) ?? [:]
        disconnections = try container.decodeIfPresent(Int.self, forKey: .disconnections) ?? 0
        session = try container.decodeIfPresent(String.self, forKey: .session).flatMap(UUID.init(uuidString:))
        athleteName = try container.decodeIfPresent(String.self, forKey: .athleteName)
        zone = try container.decodeIfPresent(Int.self, forKey: .zone)
        percentOfMax = try container.decodeIfPresent(Int.self, forKey: .percentOfMax)
        via = try container.decodeIfPresent(String.self, forKey: .via)
        bonded = try container.decodeIfPresent(Bool.self, forKey: .bonded)
    }
}
