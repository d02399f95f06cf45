public import FoundationEssentials
import GATT
public import Sensors

/// What the OSC feed is told about its source, each fact with its time.
public enum OSCFact: Hashable, Sendable {
    /// A heart-rate frame (it also means the source is connected).
    case reading(OSCReading)
    /// The source is connected (a strap's link is ready).
    case connected(at: Date)
    /// The source dropped (the strap's link is down, or the source went away).
    case disconnected(at: Date)
    /// The strap's battery level in percent.
    case battery(percent: Int, at: Date)

    /// When it happened.
    public var time: Date {
        switch self {
        case .reading(let reading): reading.receivedAt
        case .connected(at: let time), .disconnected(at: let time), .battery(_, at: let time): time
        }
    }

    /// The fact a sensor event states about the strap at `address`, or nil when it states none
    /// (another strap, another characteristic, discovery). `now` dates the events that carry no time.
    public init?(_ event: SensorEvent, address: String, now: Date) {
        switch event {
        case .measurement(let measurement) where measurement.sensor.address == address:
            guard case .heartRateMeasurement(let frame) = measurement.value else { return nil }
            self = .reading(
                OSCReading(
                    heartRate: Int(frame.heartRate), rrIntervals: frame.rrIntervals, contact: frame.sensorContact,
                    receivedAt: measurement.receivedAt))
        case .connectionChanged(let sensor, .ready) where sensor.address == address:
            self = .connected(at: now)
        case .connectionChanged(let sensor, .disconnected) where sensor.address == address:
            self = .disconnected(at: now)
        case .batteryLevel(let sensor, let percent) where sensor.address == address:
            self = .battery(percent: Int(percent), at: now)
        default:
            return nil
        }
    }
}
