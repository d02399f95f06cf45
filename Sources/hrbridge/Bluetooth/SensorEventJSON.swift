import Foundation
import Wire

/// A status line of `monitor --json`, `scan --json` and `workout run --json` about a strap or the
/// adapter: what happened, to which, when; each other key only when it applies.
struct SensorEventJSON: Codable, Equatable {
    /// `sensor` in `workout run --json`, absent in `monitor --json`.
    var kind: String?
    /// `connected`, `disconnected`, `reconnecting`, `battery`, `frameRefused`, `adapter`…
    var event: String
    var sensor: String?
    var adapter: String?
    /// The adapter's state: `ready`, `poweredOff`, `absent`, `serviceStopped`.
    var state: String?
    var detail: String?
    var reason: String?
    var batteryLevel: Int?
    var error: String?
    /// A refused frame's bytes in hex.
    var bytes: String?
    var time: String

    init(
        kind: String? = nil, event: String, sensor: String? = nil, adapter: String? = nil, state: String? = nil,
        detail: String? = nil, reason: String? = nil, batteryLevel: Int? = nil, error: String? = nil,
        bytes: [UInt8]? = nil, time: Date
    ) {
        self.kind = kind
        self.event = event
        self.sensor = sensor
        self.adapter = adapter
        self.state = state
        self.detail = detail
        self.reason = reason
        self.batteryLevel = batteryLevel
        self.error = error
        self.bytes = bytes.map(HexBytes.format)
        self.time = ISO8601.format(time)
    }
}
