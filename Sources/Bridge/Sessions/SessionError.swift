import Foundation
public import WorkoutStore

/// Why a session request was refused: each maps to a 4xx answer with a stable code.
public enum SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownSession(String)
    case unknownSensor(String)
    case unknownAthlete(String)
    case noSensors
    case sensorInUse(String, session: String)
    case athleteBusy(String)
    case invalid(String)
    case notAllowed(String)
    /// The store refused to begin the workout (a full disk): nothing started.
    case storage(StoreError)

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .unknownSession: "unknown_session"
        case .unknownSensor: "unknown_sensor"
        case .unknownAthlete: "unknown_athlete"
        case .noSensors: "no_sensors"
        case .sensorInUse: "sensor_in_use"
        case .athleteBusy: "athlete_busy"
        case .invalid: "invalid_request"
        case .notAllowed: "not_allowed"
        case .storage(let error): APIError(error).code
        }
    }

    /// A one-line description for messages and logs.
    public var description: String {
        switch self {
        case .unknownSession(let id): "no session \(String(id.prefix(64)).debugDescription)"
        case .unknownSensor(let address): "no sensor \(address)"
        case .unknownAthlete(let id): "no athlete \(String(id.prefix(64)).debugDescription) in the configuration"
        case .noSensors: "a session needs at least one sensor"
        case .sensorInUse(let address, let holder):
            UUID(uuidString: holder) != nil
                ? "sensor \(address) is recording session \(holder)" : "sensor \(address) is in use: \(holder)"
        case .athleteBusy(let id): "athlete \(String(id.prefix(64)).debugDescription) already has a running session"
        case .invalid(let why): why
        case .notAllowed(let why): why
        case .storage(let error): "the session could not start: \(error)"
        }
    }
}
