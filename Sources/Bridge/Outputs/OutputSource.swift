import BridgeOut
import Foundation
import GATT
import Sensors
import Workouts

/// Which strap a daemon output (the Bluetooth peripheral, OSC) passes on: a configured one, the
/// simulator's first, or the running session's primary heart-rate strap, followed as it changes.
struct OutputSource: Sendable {
    let source: RelaySource
    /// The strap passed on now.
    private(set) var address: String?
    /// The session followed (`session` source), and its straps.
    private(set) var session: UUID?
    private var sessionStraps: Set<String> = []

    init(source: RelaySource, simulatorStrap: String?) {
        self.source = source
        address =
            switch source {
            case .strap(let address): address
            case .simulator: simulatorStrap
            case .session: nil
            }
    }

    /// Whether `event` is heart rate from another strap of the followed session: its primary may
    /// have moved there.
    func mayHaveMoved(_ event: SensorEvent) -> Bool {
        guard source == .session, case .measurement(let measurement) = event,
            case .heartRateMeasurement = measurement.value
        else { return false }
        return measurement.sensor.address != address && sessionStraps.contains(measurement.sensor.address)
    }

    /// Follows the oldest running (or paused) session's primary heart-rate strap; whether the
    /// strap passed on changed.
    mutating func followSession(_ sessions: SessionManager) async -> Bool {
        guard source == .session else { return false }
        var chosen: (id: UUID, strap: String?, straps: Set<String>)?
        for candidate in await sessions.active {
            let state = await candidate.state
            guard state == .running || state == .paused else { continue }
            chosen = (candidate.id, await candidate.primaryHeartRateStrap(), Set(candidate.sensors.map(\.address)))
            break
        }
        session = chosen?.id
        sessionStraps = chosen?.straps ?? []
        guard chosen?.strap != address else { return false }
        address = chosen?.strap
        return true
    }
}
