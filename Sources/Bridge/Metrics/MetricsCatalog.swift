/// Every metric family `GET /metrics` can serve: its name, its type and the help text Prometheus
/// and Grafana show for it (what it counts, in which unit, by which label).
///
/// The library modules record through swift-metrics, whose API has no help text; the daemon's
/// backend gives each family its `# HELP` line from here. A family missing here is served without
/// one, which `promtool check metrics` reports (`MetricsCatalogTests` and `MetricsLintTests`).
public enum MetricsCatalog {
    /// One family: every time series of a name, whatever its labels.
    public struct Family: Sendable, Equatable {
        /// The Prometheus type (`# TYPE`).
        public enum Kind: String, Sendable {
            /// Only goes up (from process start); its name ends in `_total`.
            case counter
            /// A value read or set as it is now.
            case gauge
            /// Observations in buckets; a swift-metrics `Timer`, its name ends in the unit, `_seconds`.
            case histogram
        }

        /// The metric name, as swift-metrics records it (`hrbridge_…`).
        public let name: String
        /// Its type.
        public let kind: Kind
        /// The `# HELP` text: one line, what it counts, the unit and the labels' values.
        public let help: String
    }

    /// The families, by area: links and frames, the API, sessions and the store, MQTT, a hub's
    /// remote straps.
    public static let families: [Family] = [
        Family(
            name: "hrbridge_frames_decoded_total", kind: .counter,
            help: "Heart-rate frames decoded from straps (notifications, broadcasts and remote frames)."),
        Family(
            name: "hrbridge_frames_refused_total", kind: .counter,
            help: "Frames the strict GATT decoders refused, by reason (too_short, truncated, trailing_bytes, ...)."),
        Family(
            name: "hrbridge_implausible_heart_rates_total", kind: .counter,
            help: "Heart-rate readings outside 20-300 bpm (65535: a field of noise) in decoded frames: no sample is "
                + "made of them; the frames' RR intervals are kept."),
        Family(
            name: "hrbridge_broadcasts_refused_total", kind: .counter,
            help:
                "Heart-rate broadcasts (advertised manufacturer data) the advertisement decoder refused, by reason (unknown_length, ...)."
        ),
        Family(
            name: "hrbridge_forged_signals_dropped_total", kind: .counter,
            help: "D-Bus signals dropped because their sender does not own the name they claim (org.bluez)."),
        Family(
            name: "hrbridge_bluez_malformed_total", kind: .counter,
            help: "Messages from BlueZ refused for their shape, by kind (signal, reply, property): arguments or a "
                + "property of another type than BlueZ's API gives them."),
        Family(
            name: "hrbridge_connections_total", kind: .counter,
            help: "Times a strap became ready: linked, with heart-rate notifications on."),
        Family(
            name: "hrbridge_disconnections_total", kind: .counter,
            help: "Straps that lost or failed their link, by reason (link_lost, timeout, adapter_unavailable, "
                + "requested, failed)."),
        Family(
            name: "hrbridge_reconnect_gap_seconds", kind: .histogram,
            help: "Seconds from a ready strap's drop to ready again."),
        Family(
            name: "hrbridge_sensors_streaming", kind: .gauge,
            help: "Straps ready now (streaming heart rate)."),
        Family(
            name: "hrbridge_adapters", kind: .gauge,
            help: "Sensor adapters now: Bluetooth controllers, the simulator, or a hub's gateways."),
        Family(
            name: "hrbridge_adapter_links", kind: .gauge,
            help: "Strap links in use now, by adapter."),
        Family(
            name: "hrbridge_notification_to_api_seconds", kind: .histogram,
            help: "Seconds from a frame's arrival to its message on the live stream (real clocks only)."),
        Family(
            name: "hrbridge_live_subscribers", kind: .gauge,
            help: "Readers of the live message hub now: API stream clients and the daemon's own (systemd status, MQTT)."
        ),
        Family(
            name: "hrbridge_live_dropped_total", kind: .counter,
            help: "Live messages dropped for API clients that read too slowly."),
        Family(
            name: "hrbridge_sessions", kind: .gauge,
            help: "Workout sessions now, by state (running, paused)."),
        Family(
            name: "hrbridge_store_write_seconds", kind: .histogram,
            help: "Seconds per workout store write transaction (SQLite or PostgreSQL)."),
        Family(
            name: "hrbridge_api_refused_total", kind: .counter,
            help: "API requests refused, by error code (unauthorized, invalid_request, sensor_in_use, busy, ...)."),
        Family(
            name: "hrbridge_mqtt_queue_depth", kind: .gauge,
            help: "MQTT messages waiting in the outbox for the broker now."),
        Family(
            name: "hrbridge_mqtt_reconnects_total", kind: .counter,
            help: "Reconnects to the MQTT broker after the first connection."),
        Family(
            name: "hrbridge_mqtt_dropped_total", kind: .counter,
            help: "MQTT messages dropped from the full outbox, by kind (live, event)."),
        Family(
            name: "hrbridge_mqtt_commands_total", kind: .counter,
            help: "MQTT commands handled, by result (done, refused)."),
        Family(
            name: "hrbridge_mqtt_backfill_frames_total", kind: .counter,
            help: "Frames a gateway published again from its journal after the broker was away."),
        Family(
            name: "hrbridge_mqtt_journal_damaged_total", kind: .counter,
            help: "Damaged stretches of a gateway's journal: torn ends cut off, damaged records skipped."),
        Family(
            name: "hrbridge_mqtt_journal_dropped_total", kind: .counter,
            help: "Frames dropped from a gateway's journal unwritten: over 4 MiB waited, or the disk refused them."),
        Family(
            name: "hrbridge_mqtt_replay_requests_total", kind: .counter,
            help: "Hubs' replay requests a gateway got, by result (served, repeated, refused)."),
        Family(
            name: "hrbridge_remote_refused_total", kind: .counter,
            help: "Envelopes from gateways a hub refused, by reason (too_short, unknown_version, bad_topic, ...)."),
        Family(
            name: "hrbridge_remote_measurements_refused_total", kind: .counter,
            help: "Messages from gateways a hub refused: bad envelopes and batches, oversized messages, "
                + "undecodable backfill frames."),
        Family(
            name: "hrbridge_remote_sequence_gaps_total", kind: .counter,
            help: "Jumps in a remote strap's sequence numbers seen by a hub (frames lost on the way)."),
        Family(
            name: "hrbridge_remote_backfill_frames_total", kind: .counter,
            help: "Frames a hub received from gateways' journals after the broker was away."),
        Family(
            name: "hrbridge_remote_replay_requests_total", kind: .counter,
            help: "Stretches a hub asked gateways to send again: gaps they could not know of."),
        Family(
            name: "hrbridge_peripheral_advertising", kind: .gauge,
            help: "1 while the heart-rate peripheral advertises on the adapter (label adapter), else 0."),
        Family(
            name: "hrbridge_peripheral_centrals", kind: .gauge,
            help: "Apps (centrals) connected to the heart-rate peripheral's adapter (label adapter)."),
        Family(
            name: "hrbridge_peripheral_subscribed", kind: .gauge,
            help: "1 while an app is subscribed to the peripheral's heart-rate notifications (label adapter), else 0."),
        Family(
            name: "hrbridge_peripheral_frames_sent_total", kind: .counter,
            help: "Heart-rate frames the peripheral sent to subscribed apps (label adapter)."),
        Family(
            name: "hrbridge_peripheral_frames_unsubscribed_total", kind: .counter,
            help: "Heart-rate frames of the source that no app was subscribed to (label adapter)."),
        Family(
            name: "hrbridge_peripheral_writes_refused_total", kind: .counter,
            help: "Control-point writes from apps refused with ATT error 0x80 (label adapter)."),
    ]

    private static let byName = Dictionary(uniqueKeysWithValues: families.map { ($0.name, $0) })

    /// The family named `name`, if it is one of ``families``.
    public static func family(named name: String) -> Family? { byName[name] }
}
