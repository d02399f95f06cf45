public import Foundation
import JSONSupport

/// A session as the API and the live stream show it: who, what, since when, and either its live
/// figures (statistics, zone, HRV, energy, laps, plan) or, once ended, its summary.
public struct SessionJSON: Codable, Sendable, Equatable {
    /// The figures of a session that is still recording; `null` where nothing is known yet.
    public struct Live: Sendable, Equatable {
        public var statistics: [String: WorkoutJSON.Statistics]
        public var zones: [WorkoutJSON.ZoneDuration]
        public var zone: WorkoutJSON.Zone?
        public var rmssd: Double?
        public var alpha1: WorkoutJSON.HRVWindow?
        /// kcal.
        public var activeEnergy: Double?
        public var laps: Int
        public var plan: PlanJSON.Status?
        /// Why no HRV is computed now, when that is so: every strap of the session is heard
        /// through its broadcast, which carries no RR intervals.
        public var hrvUnavailable: String?

        public init(
            statistics: [String: WorkoutJSON.Statistics], zones: [WorkoutJSON.ZoneDuration], zone: WorkoutJSON.Zone?,
            rmssd: Double?, alpha1: WorkoutJSON.HRVWindow?, activeEnergy: Double?, laps: Int, plan: PlanJSON.Status?,
            hrvUnavailable: String?
        ) {
            self.statistics = statistics
            self.zones = zones
            self.zone = zone
            self.rmssd = rmssd
            self.alpha1 = alpha1
            self.activeEnergy = activeEnergy
            self.laps = laps
            self.plan = plan
            self.hrvUnavailable = hrvUnavailable
        }
    }

    public var id: UUID
    public var athlete: String
    public var guest: Bool
    public var state: String
    public var activity: String
    public var location: String
    public var sensors: [String]
    public var start: Date
    public var elapsedTime: Double
    /// What the store has not taken yet, when anything waits or was lost.
    public var store: StoreHealthJSON?
    /// While recording.
    public var live: Live?
    /// Once ended.
    public var summary: WorkoutJSON.Summary?
    /// False while an ended session's workout waits for the store.
    public var saved: Bool?

    public init(
        id: UUID, athlete: String, guest: Bool, state: String, activity: String, location: String, sensors: [String],
        start: Date, elapsedTime: Double
    ) {
        self.id = id
        self.athlete = athlete
        self.guest = guest
        self.state = state
        self.activity = activity
        self.location = location
        self.sensors = sensors
        self.start = start
        self.elapsedTime = elapsedTime
    }

    private enum Key: String, CodingKey {
        case id, athlete, guest, state, activity, location, sensors, start, elapsedTime, store, summary, saved
        case statistics, zones, zone, rmssd, alpha1, activeEnergy, laps, plan, hrvUnavailable
    }

    /// The common keys, then the live figures (nulls kept) or the summary.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id.uuidString.lowercased(), forKey: .id)
        try container.encode(athlete, forKey: .athlete)
        try container.encode(guest, forKey: .guest)
        try container.encode(state, forKey: .state)
        try container.encode(activity, forKey: .activity)
        try container.encode(location, forKey: .location)
        try container.encode(sensors, forKey: .sensors)
        try container.encode(ISO8601.format(start), forKey: .start)
        try container.encode(elapsedTime, forKey: .elapsedTime)
        try container.encodeIfPresent(store, forKey: .store)
        try container.encodeIfPresent(summary, forKey: .summary)
        try container.encodeIfPresent(saved, forKey: .saved)
        guard let live else { return }
        try container.encode(live.statistics, forKey: .statistics)
        try container.encode(live.zones, forKey: .zones)
        try container.encode(live.zone, forKey: .zone)
        try container.encode(live.rmssd, forKey: .rmssd)
        try container.encode(live.alpha1, forKey: .alpha1)
        try container.encode(live.activeEnergy, forKey: .activeEnergy)
        try container.encode(live.laps, forKey: .laps)
        try container.encodeIfPresent(live.plan, forKey: .plan)
        try container.encode(live.hrvUnavailable, forKey: .hrvUnavailable)
    }

    /// Reads what ``encode(to:)`` writes (a client's side): the live figures when `statistics` is
    /// there, the summary when `summary` is.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let text = try container.decode(String.self, forKey: .id)
        guard let id = UUID(uuidString: text) else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not a UUID: \(text)")
        }
        self.id = id
        athlete = try container.decode(String.self, forKey: .athlete)
        guest = try container.decode(Bool.self, forKey: .guest)
        state = try container.decode(String.self, forKey: .state)
        activity = try container.decode(String.self, forKey: .activity)
        location = try container.decode(String.self, forKey: .location)
        sensors = try container.decode([String].self, forKey: .sensors)
        let startText = try container.decode(String.self, forKey: .start)
        guard let start = ISO8601.parse(startText) else {
            throw DecodingError.dataCorruptedError(
                forKey: .start, in: container, debugDescription: "not an ISO 8601 date: \(startText)")
        }
        self.start = start
        elapsedTime = try container.decode(Double.self, forKey: .elapsedTime)
        store = try container.decodeIfPresent(StoreHealthJSON.self, forKey: .store)
        summary = try container.decodeIfPresent(WorkoutJSON.Summary.self, forKey: .summary)
        saved = try container.decodeIfPresent(Bool.self, forKey: .saved)
        guard container.contains(.statistics) else { return }
        live = Live(
            statistics: try container.decode([String: WorkoutJSON.Statistics].self, forKey: .statistics),
            zones: try container.decode([WorkoutJSON.ZoneDuration].self, forKey: .zones),
            zone: try container.decodeIfPresent(WorkoutJSON.Zone.self, forKey: .zone),
            rmssd: try container.decodeIfPresent(Double.self, forKey: .rmssd),
            alpha1: try container.decodeIfPresent(WorkoutJSON.HRVWindow.self, forKey: .alpha1),
            activeEnergy: try container.decodeIfPresent(Double.self, forKey: .activeEnergy),
            laps: try container.decode(Int.self, forKey: .laps),
            plan: try container.decodeIfPresent(PlanJSON.Status.self, forKey: .plan),
            hrvUnavailable: try container.decodeIfPresent(String.self, forKey: .hrvUnavailable))
    }
}
