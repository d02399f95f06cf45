/// Why an athlete left a class (`leftBecause` of a class member).
public enum LeaveReason: String, Codable, Sendable, CaseIterable {
    /// Out of range for the class's `leaveAfter`: its workout is saved, and it joins again when back.
    case outOfRange = "out of range"
    /// Its session ended through the API (or its plan ended): it does not join again by itself.
    case stopped
    /// The class ended, and every session in it.
    case classEnded = "class ended"
}
