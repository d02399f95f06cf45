import DBus

/// A `NoInputNoOutput` pairing agent (org.bluez.Agent1) for a headless bridge: straps have no
/// keypad, so it confirms Just Works pairing and refuses anything that needs a PIN or passkey.
enum PairingAgent {
    static let path = "/org/hrbridge/agent"

    static func handle(_ call: DBusMethodCall) -> DBusMethodReply {
        switch call.member {
        case "Release", "Cancel", "DisplayPinCode", "DisplayPasskey", "RequestConfirmation", "RequestAuthorization",
            "AuthorizeService":
            return .success([])
        case "RequestPinCode", "RequestPasskey":
            return .failure(DBusError(name: "org.bluez.Error.Rejected", message: "no input on a headless bridge"))
        default:
            return .failure(DBusError(name: DBusError.unknownMethodName, message: "no method \(call.member)"))
        }
    }
}
