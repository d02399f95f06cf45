import JSONSupport
import Wire
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
        activity = try body.activity()
        if let location = try body.location() { self.location = location }
    }

    private enum CodingKeys: String, CodingKey { case activity, location }

    /// Writes the body a client sends.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(activity?.rawValue, forKey: .activity)
        try container.encode(location.rawValue, forKey: .location)
    }
}
