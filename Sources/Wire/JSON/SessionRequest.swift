import Foundation
public import JSONSupport
import Sensors
public import Workouts

/// What a client asks for when it creates a session (`POST /v1/sessions`; `hrbridge session start`
/// sends it, the API reads it with each mistake named).
public struct SessionRequest: Sendable, Codable {
    public var activity: WorkoutActivityType = .running
    /// Indoor or outdoor.
    public var location: WorkoutLocation = .indoor
    /// Sensor addresses; each is bound to this session alone (at most 16: a session is one person's).
    public var sensors: [String]
    /// The athlete; nil: the configured owner of the first sensor, else the anonymous athlete.
    public var athlete: String?
    /// Heart-rate zone boundaries in bpm (overrides the athlete's); sorted, as they are a set.
    public var zones: [Double]?
    /// A guest session: streamed live, never written to the store.
    public var guest = false
    /// A structured workout to run (the plan file format, version 1); the session ends with it.
    public var plan: JSONValue?

    public init(
        activity: WorkoutActivityType = .running, location: WorkoutLocation = .indoor, sensors: [String],
        athlete: String? = nil, zones: [Double]? = nil, guest: Bool = false, plan: JSONValue? = nil
    ) {
        self.activity = activity
        self.location = location
        self.sensors = sensors
        self.athlete = athlete
        self.zones = zones
        self.guest = guest
        self.plan = plan
    }

    static let fields = ["activity", "location", "sensors", "athlete", "zones", "guest", "plan"]

    /// Reads a request body, refusing unknown fields and naming what each wrong one must be.
    public init(from decoder: any Decoder) throws {
        let body = try decoder.container(keyedBy: AnyKey.self)
        try body.refuseUnknown(Self.fields)
        let sensorsMessage = "'sensors' must be a non-empty array of sensor addresses"
        guard let sensors = try body.field("sensors", [String].self, sensorsMessage), !sensors.isEmpty else {
            throw RequestBodyError(message: sensorsMessage)
        }
        guard sensors.count <= 16 else { throw RequestBodyError(message: "'sensors' holds at most 16 addresses") }
        for sensor in sensors where !BluetoothAddress.isValid(sensor) {
            throw RequestBodyError(
                message:
                    "\(String(sensor.prefix(64)).debugDescription) is not a Bluetooth address such as C0:FF:EE:00:00:01"
            )
        }
        self.sensors = sensors
        if let activity = try body.activity() { self.activity = activity }
        if let location = try body.location() { self.location = location }
        let athleteMessage = "'athlete' must be an athlete id of 1 to 64 characters"
        if let text = try body.field("athlete", String.self, athleteMessage) {
            // Scalars, not characters: one character may carry thousands of combining marks.
            guard (1...64).contains(text.unicodeScalars.count) else { throw RequestBodyError(message: athleteMessage) }
            athlete = text
        }
        let zonesMessage =
            "'zones' must be an array of 2 to 8 distinct heart rates in bpm, each above 0 and at most 300"
        if let numbers = try body.field("zones", [Double].self, zonesMessage) {
            guard (2...8).contains(numbers.count), Set(numbers).count == numbers.count,
                numbers.allSatisfy({ $0.isFinite && $0 > 0 && $0 <= 300 })
            else { throw RequestBodyError(message: zonesMessage) }
            zones = numbers.sorted()
        }
        let planMessage = "'plan' must be a plan object (the plan file format, version 1)"
        if let value = try body.field("plan", JSONValue.self, planMessage) {
            guard value.object != nil else { throw RequestBodyError(message: planMessage) }
            plan = value
        }
        if let flag = try body.field("guest", Bool.self, "'guest' must be true or false") { guest = flag }
    }

    private enum CodingKeys: String, CodingKey { case activity, location, sensors, athlete, zones, guest, plan }

    /// Writes the body a client sends.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(activity.rawValue, forKey: .activity)
        try container.encode(location.rawValue, forKey: .location)
        try container.encode(sensors, forKey: .sensors)
        try container.encodeIfPresent(athlete, forKey: .athlete)
        try container.encodeIfPresent(zones, forKey: .zones)
        try container.encode(guest, forKey: .guest)
        try container.encodeIfPresent(plan, forKey: .plan)
    }
}

/// `POST /v1/sessions/{id}/activity`: the next activity of a multisport workout.
public struct ActivityChange: Sendable, Codable {
    public var activity: WorkoutActivityType
    public var location: WorkoutLocation?

    public init(activity: WorkoutActivityType, location: WorkoutLocation? = nil) {
        self.activity = activity
        self.location = location
    }

    /// Reads a request body, refusing unknown fields.
    public init(from decoder: any Decoder) throws {
        let body = try decoder.container(keyedBy: AnyKey.self)
        try body.refuseUnknown(["activity", "location"])
        guard let activity = try body.activity() else {
            throw RequestBodyError(message: "'activity' must name an activity type")
        }
        self.activity = activity
        location = try body.location()
    }

    private enum CodingKeys: String, CodingKey { case activity, location }

    /// Writes the body a client sends.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(activity.rawValue, forKey: .activity)
        try container.encodeIfPresent(location?.rawValue, forKey: .location)
    }
}
