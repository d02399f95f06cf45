import Bridge
import Foundation
import GATT
import Samples
import Sensors
import Synchronization
import Workouts

/// Prints JSON lines for `workout run --json`, one whole line at a time from any task.
final class JSONLineWriter: Sendable {
    private let enabled: Bool
    private let lock = Mutex(())

    init(enabled: Bool) { self.enabled = enabled }

    private func write(_ object: [String: Any]) {
        guard enabled, let text = try? JSONText.render(object) else { return }
        lock.withLock { _ in FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    }

    func samples(_ samples: [QuantitySample]) {
        for sample in samples {
            var object = SampleJSON.object(sample)
            object["kind"] = "sample"
            write(object)
        }
    }

    func builderUpdate(_ update: BuilderUpdate) {
        switch update {
        case .collected: break
        case .event(let event): write(["kind": "event"].merging(WorkoutJSON.event(event)) { $1 })
        case .zone(let zone):
            write([
                "kind": "zone", "type": zone.type.rawValue, "current": zone.current.zone.index,
                "previous": zone.previous.map { $0.zone.index as Any } ?? NSNull(),
                "date": ISO8601.format(zone.lastSampleProcessedDate),
                "durations": zone.group.durations.map(WorkoutJSON.zoneDuration),
            ])
        case .activityBegan(let activity):
            write(["kind": "activityBegan", "activity": WorkoutJSON.activity(activity)])
        case .activityEnded(let activity):
            write(["kind": "activityEnded", "activity": WorkoutJSON.activity(activity)])
        case .heartRateVariability(let window):
            write(["kind": "hrv"].merging(WorkoutJSON.hrvWindow(window)) { $1 })
        }
    }

    func sensorEvent(_ event: SensorEvent, at date: Date) {
        var object: [String: Any] = ["kind": "sensor", "time": ISO8601.format(date)]
        switch event {
        case .connectionChanged(let sensor, let state):
            object["sensor"] = sensor.address
            switch state {
            case .connecting: object["event"] = "connecting"
            case .connected: object["event"] = "connected"
            case .ready: object["event"] = "ready"
            case .disconnected(let reason):
                object["event"] = "disconnected"
                object["reason"] = reason.description
            }
        case .batteryLevel(let sensor, let percent):
            object["sensor"] = sensor.address
            object["event"] = "battery"
            object["batteryLevel"] = Int(percent)
        case .decodingFailed(let sensor, let error, let bytes):
            object["sensor"] = sensor.address
            object["event"] = "frameRefused"
            object["error"] = error.description
            object["bytes"] = bytes.map { String(format: "%02x", $0) }.joined(separator: " ")
        default:
            return
        }
        write(object)
    }

    /// A plan event: `{"kind":"plan","event":"stepStarted",…}`.
    func plan(_ object: [String: Any]) { write(["kind": "plan"].merging(object) { $1 }) }

    func summary(_ workout: Workout) { write(WorkoutJSON.summary(workout)) }
}
