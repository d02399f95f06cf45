import Foundation
import GATT
import JSONSupport
import Samples
import Sensors
import Synchronization
import Wire
import WorkoutPlans
import Workouts

/// Prints JSON lines for `workout run --json`, one whole line at a time from any task; each line
/// carries `kind` (`sample`, `event`, `zone`, `activityBegan`, `activityEnded`, `hrv`, `sensor`, `plan`),
/// the last one is the summary.
final class JSONLineWriter: Sendable {
    private let enabled: Bool
    /// Whether standard output went away (the reader closed the pipe: `| head`): nothing more is
    /// written, and the run stops and saves the workout as an interrupt does.
    private let closed = Mutex(false)

    init(enabled: Bool) { self.enabled = enabled }

    /// True once a line could not be written.
    var isClosed: Bool { closed.withLock { $0 } }

    private func write(line: String) {
        closed.withLock { closed in
            guard !closed else { return }
            do {
                try FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8))
            } catch {
                closed = true
                StandardError.write("hrbridge: standard output closed: the workout stops here and is saved")
            }
        }
    }

    private func write(_ value: some Encodable) {
        guard enabled, let line = try? JSONText.line(value) else { return }
        write(line: line)
    }

    func samples(_ samples: [QuantitySample]) {
        guard enabled else { return }
        for sample in samples { write(line: SampleJSON.line(sample, kind: .sample, session: nil, sensor: nil)) }
    }

    private struct ActivityChange: Encodable {
        var activity: WorkoutJSON.Activity
    }

    func builderUpdate(_ update: BuilderUpdate) {
        switch update {
        case .collected: break
        case .event(let event): write(TaggedJSON(kind: .event, payload: WorkoutJSON.Event(event)))
        case .zone(let zone): write(TaggedJSON(kind: .zone, payload: WorkoutJSON.ZoneChange(zone)))
        case .activityBegan(let activity):
            write(TaggedJSON(kind: .activityBegan, payload: ActivityChange(activity: WorkoutJSON.Activity(activity))))
        case .activityEnded(let activity):
            write(TaggedJSON(kind: .activityEnded, payload: ActivityChange(activity: WorkoutJSON.Activity(activity))))
        case .heartRateVariability(let window):
            write(TaggedJSON(kind: .hrv, payload: WorkoutJSON.HRVWindow(window)))
        }
    }

    func sensorEvent(_ event: SensorEvent, at date: Date) {
        let line: SensorEventJSON
        switch event {
        case .connectionChanged(let sensor, let state):
            switch state {
            case .connecting:
                line = SensorEventJSON(kind: "sensor", event: "connecting", sensor: sensor.address, time: date)
            case .connected:
                line = SensorEventJSON(kind: "sensor", event: "connected", sensor: sensor.address, time: date)
            case .ready: line = SensorEventJSON(kind: "sensor", event: "ready", sensor: sensor.address, time: date)
            case .disconnected(let reason):
                line = SensorEventJSON(
                    kind: "sensor", event: "disconnected", sensor: sensor.address, reason: reason.description,
                    time: date)
            }
        case .batteryLevel(let sensor, let percent):
            line = SensorEventJSON(
                kind: "sensor", event: "battery", sensor: sensor.address, batteryLevel: Int(percent), time: date)
        case .decodingFailed(let sensor, let error, let bytes):
            line = SensorEventJSON(
                kind: "sensor", event: "frameRefused", sensor: sensor.address, error: error.description, bytes: bytes,
                time: date)
        default:
            return
        }
        write(line)
    }

    /// A plan event: `{"kind":"plan","event":"stepStarted",…}`.
    func plan(_ event: PlanEvent) { write(TaggedJSON(kind: .plan, payload: PlanJSON.Event(event))) }

    func summary(_ workout: Workout) { write(WorkoutJSON.Summary(workout)) }
}
