public import Workouts

/// A request body that is not what the API expects; the message names the field and what it must be.
public struct RequestBodyError: Error, Sendable {
    public var message: String

    public init(message: String) { self.message = message }
}

/// Any key of a JSON object, so a body's unknown fields can be named.
public struct AnyKey: CodingKey {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
    public init(_ name: String) { stringValue = name }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// Refuses a key not in `known`.
    public func refuseUnknown(_ known: [String]) throws {
        if let unknown = allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
            let named = String(unknown.prefix(64)).debugDescription
            throw RequestBodyError(
                message: known.isEmpty
                    ? "unknown field \(named): this request takes no fields"
                    : "unknown field \(named); known: \(known.joined(separator: ", "))")
        }
    }

    /// The field's value when present; `null` or a value of the wrong type is `message`.
    public func field<Value: Decodable>(_ name: String, _ type: Value.Type, _ message: String) throws -> Value? {
        let key = AnyKey(name)
        guard contains(key) else { return nil }
        do {
            guard try !decodeNil(forKey: key) else { throw RequestBodyError(message: message) }
            return try decode(type, forKey: key)
        } catch {
            throw RequestBodyError(message: message)
        }
    }
}

extension KeyedDecodingContainer where Key == AnyKey {
    /// `activity`, when present: one of the activity types.
    public func activity() throws -> WorkoutActivityType? {
        let activities = WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", ")
        guard let text = try field("activity", String.self, "'activity' must be one of \(activities)") else {
            return nil
        }
        guard let activity = WorkoutActivityType(rawValue: text) else {
            throw RequestBodyError(message: "'activity' must be one of \(activities)")
        }
        return activity
    }

    /// `location`, when present: indoor or outdoor.
    public func location() throws -> WorkoutLocation? {
        guard let text = try field("location", String.self, "'location' must be indoor or outdoor") else { return nil }
        guard let location = WorkoutLocation(rawValue: text), location != .unknown else {
            throw RequestBodyError(message: "'location' must be indoor or outdoor")
        }
        return location
    }
}
