import Foundation
public import JSONSupport

/// A class as the API and the live stream show it: its activity, whether straps sign in by
/// themselves, and who is in it.
public struct ClassJSON: Codable, Sendable, Equatable {
    /// One athlete's strap in the class.
    public struct Member: Codable, Sendable, Equatable {
        public var sensor: String
        public var athlete: String
        /// `in` (recording), `out of range` (recording, not heard lately) or `left` (session ended).
        public var state: ClassMemberState
        /// The session recording it now (its id, lower-case as everywhere in the API).
        @Nullable public var session: String?
        /// Every session it recorded in this class (a strap that leaves and comes back has two).
        public var sessions: [String]
        /// ISO 8601, as every date of the API.
        public var joined: String
        /// When it was last heard (a link, or a broadcast).
        @Nullable public var lastHeard: String?
        /// When it left.
        @Nullable public var left: String?
        /// Why it left: `out of range`, `stopped` (its session ended through the API) or `class ended`.
        @Nullable public var leftBecause: LeaveReason?

        public init(
            sensor: String, athlete: String, state: ClassMemberState, session: String?, sessions: [String],
            joined: String, lastHeard: String?, left: String?, leftBecause: LeaveReason?
        ) {
            self.sensor = sensor
            self.athlete = athlete
            self.state = state
            self.session = session
            self.sessions = sessions
            self.joined = joined
            self.lastHeard = lastHeard
            self.left = left
            self.leftBecause = leftBecause
        }
    }

    /// Lower-case, as session ids are.
    public var id: String
    /// `running` or `ended`.
    public var state: String
    public var activity: String
    public var location: String
    public var start: String
    @Nullable public var end: String?
    /// Whether configured straps seen in range join by themselves.
    public var autoJoin: Bool
    /// Seconds out of range before an athlete leaves.
    public var leaveAfter: Double
    /// What signs a strap in: `link` (the default) or `broadcast` too.
    public var joinVia: ClassJoinPath
    public var members: [Member]

    public init(
        id: String, state: String, activity: String, location: String, start: String, end: String?, autoJoin: Bool,
        leaveAfter: Double, joinVia: ClassJoinPath, members: [Member]
    ) {
        self.id = id
        self.state = state
        self.activity = activity
        self.location = location
        self.start = start
        self.end = end
        self.autoJoin = autoJoin
        self.leaveAfter = leaveAfter
        self.joinVia = joinVia
        self.members = members
    }
}
