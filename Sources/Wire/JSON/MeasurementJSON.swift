public import Foundation
public import GATT
public import JSONSupport
public import Sensors

/// A heart-rate frame as `monitor --json` prints it and the daemon's `measurement` message carries it.
public struct MeasurementJSON: Codable, Sendable, Equatable {
    /// When it arrived, ISO 8601.
    public var time: String
    /// The strap's address.
    public var sensor: String
    /// bpm.
    public var heartRate: Int
    public var sensorContact: String
    /// kJ since the last reset, when the strap sends it.
    @Nullable public var energyExpended: Int?
    /// Seconds.
    public var rrIntervals: [Double]
    /// `connection` (a notification on a link) or `advertisement` (heart rate only, no RR intervals).
    public var via: String

    /// The frame's JSON.
    public init(_ frame: HeartRateMeasurement, receivedAt: Date, sensor: String, via: MeasurementPath = .connection) {
        time = ISO8601.format(receivedAt)
        self.sensor = sensor
        heartRate = Int(frame.heartRate)
        sensorContact = frame.sensorContact.rawValue
        energyExpended = frame.energyExpended.map(Int.init)
        rrIntervals = frame.rrIntervals.map(\.seconds)
        self.via = via.rawValue
    }

    /// The same object written by hand, with `kind` and `session` when given: one per frame, so it
    /// skips `JSONEncoder` (Benchmarks/README.md). `MeasurementJSONTests` holds it to the encoder's bytes.
    public static func line(
        _ frame: HeartRateMeasurement, receivedAt: Date, sensor: String, kind: LiveMessageKind? = .measurement,
        session: UUID? = nil, via: MeasurementPath = .connection
    ) -> String {
        writer(frame, receivedAt: receivedAt, sensor: sensor, kind: kind, session: session, via: via).text()
    }

    /// The line's writer, for a caller that wants its bytes (`monitor --json` writes them to stdout as they are).
    public static func writer(
        _ frame: HeartRateMeasurement, receivedAt: Date, sensor: String, kind: LiveMessageKind?, session: UUID? = nil,
        via: MeasurementPath = .connection
    ) -> JSONObjectWriter {
        var object = JSONObjectWriter(capacity: 160)
        object.add("energyExpended", frame.energyExpended.map(Int.init))
        object.add("heartRate", Int(frame.heartRate))
        if let kind { object.add("kind", kind.rawValue) }
        object.add("rrIntervals", frame.rrIntervals.map(\.seconds))
        object.add("sensor", sensor)
        object.add("sensorContact", frame.sensorContact.rawValue)
        if let session { object.add("session", session) }
        object.add("time", ISO8601.format(receivedAt))
        object.add("via", via.rawValue)
        return object
    }
}
