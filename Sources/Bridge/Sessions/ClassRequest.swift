import JSONSupport
public import Workouts

/// `POST /v1/class`: the activity and place of the class (both optional).
public struct ClassRequest: Sendable, Codable {
    /// nil: `[class] activity`.
    public var activity: WorkoutActivityType?
    public var location: WorkoutLocation = .indoor

    public init(activity: WorkoutActivityType? = nil, location: WorkoutLocation = .indoor) {
        self.activity = activity
        self.location = location
    }

    /// Reads a request body, refusing unknown fields and naming what each wrong one must be.
    public init(from decoder: any Decoder) throws {
        let body = try decoder.container(keyedBy: AnyKey.self)
        try body.refuseUnknown(["activity", "location"])
        let activities = WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", ")
        if let text = try body.field("activity", String.self, "'activity' must be one of \(activities)") {
            guard let activity = WorkoutActivityType(rawValue: text) else {
                throw RequestBodyError(message: "'activity' must be one of \(activities)")
            }
            self.activity = activity
        }
        if let text = try body.field("location", String.self, "'location' must be indoor or outdoor") {
            guard let location = WorkoutLocation(rawValue: text), location != .unknown else {
                throw RequestBodyError(message: "'location' must be indoor or outdoor")
            }
            self.location = location
        }
    }

    private enum CodingKeys: String, CodingKey { case activity, location }

    /// Writes the body a client sends.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(activity?.rawValue, forKey: .activity)
        try container.encode(location.rawValue, forKey: .location)
    }
}
