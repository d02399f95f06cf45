public import DBus
import FoundationEssentials
public import Sensors

/// A BlueZ error, classified by the action it calls for (retry, wait, re-pair or give up).
public struct BlueZError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Code: Hashable, Sendable {
        /// `Failed le-connection-abort-by-local` (RF interference): retry right after `Connected=false`.
        case connectionAbortedByLocal
        /// Connection cancelled, aborted by the remote, timed out, or no reply: transient.
        case transientConnectionFailure
        /// `InProgress`: another operation is pending.
        case inProgress
        /// `AlreadyConnected`.
        case alreadyConnected
        /// `AlreadyExists` (e.g. already paired).
        case alreadyExists
        /// `NotReady`: the adapter is off.
        case notReady
        /// `Busy`: a property change is pending.
        case busy
        /// `NotConnected`.
        case notConnected
        /// `NotPermitted` (e.g. "Notify acquired").
        case notPermitted
        /// `NotSupported`.
        case notSupported
        /// The object was removed (`UnknownObject`).
        case unknownObject
        /// `org.bluez` is not on the bus (`ServiceUnknown`, `NameHasNoOwner`).
        case serviceUnavailable
        /// Authentication failed or the bond is missing: remove, rediscover, re-pair.
        case authenticationFailed
        /// The controller has no free link slot (`le-connection-concurrent-connection-limit`,
        /// "Too many links"): another adapter may have one.
        case connectionLimitReached
        /// An ATT application error such as 0x80 from a characteristic write.
        case attError(UInt8)
        /// Anything else.
        case other
    }

    /// The classification.
    public var code: Code
    /// The D-Bus error name.
    public var name: String
    /// The message BlueZ sent.
    public var message: String

    /// Classifies a D-Bus error.
    public init(_ error: DBusError) {
        name = error.name
        message = error.message
        code = Self.classify(name: error.name, message: error.message)
    }

    /// An error hrbridge itself raises (a timeout, a reply that does not fit), classified as BlueZ's are.
    init(name: String, message: String) {
        self.name = name
        self.message = message
        code = Self.classify(name: name, message: message)
    }

    /// Whether a start failed only because bluetoothd left a call unanswered (`NoReply`, `Timeout`:
    /// a busy host, a daemon still starting), so opening the adapter again may well work.
    public static func isUnanswered(_ error: SensorAdapterError) -> Bool {
        guard case .failed(let name, _) = error else { return false }
        let short = name.split(separator: ".").last.map(String.init) ?? name
        return short == "NoReply" || short == "Timeout"
    }

    /// `name: message`.
    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    static func classify(name: String, message: String) -> Code {
        let short = name.split(separator: ".").last.map(String.init) ?? name
        let lowered = message.lowercased()
        if let range = lowered.firstRange(of: "att error: 0x") ?? lowered.firstRange(of: "att error 0x") {
            let digits = lowered[range.upperBound...].prefix(2)
            if let value = UInt8(digits, radix: 16) { return .attError(value) }
        }
        switch short {
        case "InProgress": return .inProgress
        case "AlreadyConnected": return .alreadyConnected
        case "AlreadyExists": return .alreadyExists
        case "NotReady": return .notReady
        case "Busy": return .busy
        case "NotConnected": return .notConnected
        case "NotPermitted": return .notPermitted
        case "NotSupported": return .notSupported
        case "UnknownObject": return .unknownObject
        case "ServiceUnknown", "NameHasNoOwner": return .serviceUnavailable
        case "NoReply", "Timeout": return .transientConnectionFailure
        case "AuthenticationFailed", "AuthenticationCanceled", "AuthenticationRejected", "AuthenticationTimeout":
            return .authenticationFailed
        default: break
        }
        if lowered.contains("le-connection-abort-by-local") || lowered.contains("software caused connection abort") {
            return .connectionAbortedByLocal
        }
        if lowered.contains("key-missing") { return .authenticationFailed }
        if lowered.contains("concurrent-connection-limit") || lowered.contains("too many links")
            || lowered.contains("connection limit")
        {
            return .connectionLimitReached
        }
        if lowered.contains("connection-canceled") || lowered.contains("abort-by-remote")
            || lowered.contains("connection-timeout") || lowered.contains("le-connection-busy")
        {
            return .transientConnectionFailure
        }
        return .other
    }
}
