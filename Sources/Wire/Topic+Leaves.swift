extension Topic {
    /// What a sensor topic carries.
    public enum SensorLeaf: String, CaseIterable, Hashable, Sendable {
        /// The strap's state as JSON (retained).
        case state
        /// `online` while the strap streams, else `offline` (retained).
        case availability
        /// One frame for hubs, in the binary envelope (QoS 0).
        case measurement
        /// Journaled frames sent again after the broker was away (QoS 1).
        case backfill
    }

    /// What a session topic carries.
    public enum SessionLeaf: String, CaseIterable, Hashable, Sendable {
        /// The session as the API returns it (retained).
        case state
        /// Workout events: pause, resume, lap, segment, marker.
        case event
        /// Zone changes.
        case zone
        /// Plan steps begun and ended, alerts.
        case plan
        /// DFA α1 windows.
        case hrv
    }
}
