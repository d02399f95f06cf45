/// Where an athlete of a class is, as the API and the live stream show it (`state` of a class member).
public enum ClassMemberState: String, Codable, Sendable, CaseIterable {
    /// Recording, and heard lately (a link, or a broadcast).
    case `in` = "in"
    /// Recording, but not heard lately: it leaves once out of range for the class's `leaveAfter`.
    case outOfRange = "out of range"
    /// Its session ended (``LeaveReason`` says why).
    case left
}
