import Samples
public import Workouts

/// Who a session records on a strap, as the strap's status shows it while the session runs: the
/// athlete (none for a guest's session or a strap's own anonymous athlete) and what the heart
/// rate's zone and percentage of maximum are read by (the session's zones, not the configured
/// athlete's).
public struct RecordedAthlete: Sendable, Equatable {
    /// The athlete's id, when shown.
    public var id: String?
    /// The athlete's display name, when shown.
    public var name: String?
    /// The heart-rate zones the session uses.
    public var zones: ZoneConfiguration?
    /// The athlete's maximum heart rate, for the percentage.
    public var maximumHeartRate: Double?

    /// `athlete` recording with `zones` in force (nil: the profile's); `shown` false keeps the
    /// athlete's id and name out of the status (a guest, or a strap's own anonymous athlete).
    public init(_ athlete: BridgeConfiguration.Athlete, zones: ZoneConfiguration?, shown: Bool) {
        id = shown ? athlete.profile.id : nil
        name = shown ? (athlete.profile.name ?? athlete.profile.id) : nil
        self.zones = zones ?? athlete.zones ?? athlete.profile.preferredZoneConfiguration(for: .heartRate)
        maximumHeartRate = athlete.profile.effectiveMaximumHeartRate
    }
}
