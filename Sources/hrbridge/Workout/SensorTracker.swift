import Foundation
import GATT
import Sensors
import Synchronization

/// What the live view and the summary know about each sensor, from the adapter's events.
final class SensorTracker: Sendable {
    struct Status: Sendable {
        var state = "discovered"
        var battery: UInt8?
        var heartRate: UInt16?
        var contact: SensorContact?
        var lastRR: Double?
        var frames = 0
        var refusedFrames = 0
        var disconnections = 0
    }

    private let statuses = Mutex<[SensorIdentity: Status]>([:])

    func record(_ event: SensorEvent) {
        statuses.withLock { statuses in
            switch event {
            case .discovered(let sensor): statuses[sensor.identity, default: Status()].state = "discovered"
            case .connectionChanged(let sensor, let state):
                switch state {
                case .connecting: statuses[sensor, default: Status()].state = "connecting"
                case .connected: statuses[sensor, default: Status()].state = "connected"
                case .ready: statuses[sensor, default: Status()].state = "ready"
                case .disconnected(let reason):
                    statuses[sensor, default: Status()].state = "disconnected (\(reason))"
                    statuses[sensor, default: Status()].disconnections += 1
                }
            case .batteryLevel(let sensor, let percent): statuses[sensor, default: Status()].battery = percent
            case .measurement(let measurement):
                statuses[measurement.sensor, default: Status()].frames += 1
                if case .heartRateMeasurement(let frame) = measurement.value {
                    statuses[measurement.sensor, default: Status()].heartRate = frame.heartRate
                    statuses[measurement.sensor, default: Status()].contact = frame.sensorContact
                    if let last = frame.rrIntervals.last {
                        statuses[measurement.sensor, default: Status()].lastRR = last.seconds
                    }
                }
            case .decodingFailed(let sensor, _, _): statuses[sensor, default: Status()].refusedFrames += 1
            default: break
            }
        }
    }

    /// By identity, else by address: a strap heard through another adapter than named is the same strap.
    func status(of sensor: SensorIdentity) -> Status {
        statuses.withLock { $0[sensor] ?? $0.first { $0.key.address == sensor.address }?.value ?? Status() }
    }
}
