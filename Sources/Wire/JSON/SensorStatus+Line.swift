import Foundation
import JSONSupport

extension SensorStatus {
    /// The live stream's `sensor` message written by hand, as `JSONText.line` writes
    /// `TaggedJSON(kind: .sensor, sensor: address, payload: self)`: every strap's status goes out
    /// with its heart rate once a second, and `JSONEncoder` was most of a hub's encoding
    /// (Benchmarks/README.md). `HandWrittenJSONTests` holds it to the encoder's bytes.
    public func liveLine() -> String {
        // Keys in bytewise order, the tags (`kind`, `sensor`) among the payload's own.
        var object = JSONObjectWriter(capacity: 512)
        object.add("adapter", adapter)
        object.add("address", address)
        object.add("athlete", athlete)
        object.add("athleteName", athleteName)
        object.add("batteryLevel", batteryLevel)
        if let bonded { object.add("bonded", bonded) } else { object.addNull("bonded") }
        object.add("disconnections", disconnections)
        object.add("framesDecoded", framesDecoded)
        object.add("framesRefused", framesRefused)
        object.add("heartRate", heartRate)
        object.add("kind", LiveMessageKind.sensor.rawValue)
        object.add("lastMeasurement", lastMeasurement.map(ISO8601.format))
        object.add("name", name)
        object.add("percentOfMax", percentOfMax)
        object.add("reason", reason)
        object.addObject("refusedByReason") { reasons in
            for (reason, count) in refusedByReason.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                reasons.add(named: reason, count)
            }
        }
        object.add("rssi", rssi)
        object.add("sensor", address)
        object.add("session", session)
        object.add("state", state.rawValue)
        object.add("via", via)
        object.add("zone", zone)
        return object.text()
    }
}
