public import FoundationEssentials

/// A message the feed wants sent, with the time it was due (a beat's own time, a resend's time);
/// it is sent when the feed returns it.
public struct OSCTimedMessage: Hashable, Sendable, CustomStringConvertible {
    /// When it was due.
    public var due: Date
    /// The message.
    public var message: OSCMessage

    /// A message due at `due`.
    public init(due: Date, message: OSCMessage) {
        self.due = due
        self.message = message
    }

    /// `@800000000.100 /avatar/parameters/isHRBeat ,T`.
    public var description: String {
        "@\(due.timeIntervalSinceReferenceDate) \(message)"
    }
}
