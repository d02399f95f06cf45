public import Threads

/// A D-Bus error: from the peer (an error reply) or from the connection itself.
///
/// `name` is the D-Bus error name, such as `org.bluez.Error.InProgress`; `message` is the
/// peer's text. Local failures use the standard names (`NoReply`, `Disconnected`).
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The error name.
    public var name: String
    /// The error message.
    public var message: String

    /// Creates an error.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// `name: message`.
    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// No reply within the timeout.
    public static let noReplyName = "org.freedesktop.DBus.Error.NoReply"
    /// An operation other than a call (a connect) did not end within its time.
    public static let timeoutName = "org.freedesktop.DBus.Error.Timeout"
    /// The connection is closed.
    public static let disconnectedName = "org.freedesktop.DBus.Error.Disconnected"
    /// The destination name has no owner.
    public static let serviceUnknownName = "org.freedesktop.DBus.Error.ServiceUnknown"
    /// The object does not exist.
    public static let unknownObjectName = "org.freedesktop.DBus.Error.UnknownObject"
    /// The method does not exist.
    public static let unknownMethodName = "org.freedesktop.DBus.Error.UnknownMethod"
    /// Arguments of the wrong type.
    public static let invalidArgsName = "org.freedesktop.DBus.Error.InvalidArgs"
    /// A generic failure.
    public static let failedName = "org.freedesktop.DBus.Error.Failed"
    /// Access denied by policy.
    public static let accessDeniedName = "org.freedesktop.DBus.Error.AccessDenied"
    /// A limit of the process was reached (here: no thread could be started).
    public static let limitsExceededName = "org.freedesktop.DBus.Error.LimitsExceeded"

    /// The connection is closed.
    public static func disconnected(_ message: String = "connection closed") -> DBusError {
        DBusError(name: disconnectedName, message: message)
    }

    /// A thread the connection needs could not be started.
    public static func threadUnavailable(_ error: ThreadStartError) -> DBusError {
        DBusError(name: limitsExceededName, message: error.description)
    }

    /// A reply of an unexpected shape.
    public static func unexpectedReply(_ message: String) -> DBusError {
        DBusError(name: invalidArgsName, message: message)
    }
}
