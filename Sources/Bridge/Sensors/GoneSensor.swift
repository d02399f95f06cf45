import Wire

/// The live message of a strap that left the list: `{"kind":"sensor","address":…,"state":"gone"}`,
/// with `"forgotten":true` when the user forgot it (the API's `DELETE /v1/sensors/…`), absent when
/// it only went out of range.
struct GoneSensor: Codable, Sendable {
    var address: String
    var state = SensorState.gone
    /// True when forgotten on request; nil when it went out of range.
    var forgotten: Bool?
}
