/// One check of `hrbridge doctor`: what was looked at, how it went, the evidence, and the fix.
public struct DoctorCheck: Hashable, Sendable, Codable {
    /// How a check went.
    public enum Status: String, Hashable, Sendable, Codable {
        /// Fine.
        case ok
        /// Works, but something deserves attention.
        case warn
        /// Broken: straps will not work until it is fixed.
        case fail
        /// Not checked, because a layer below failed or it does not apply here.
        case skip
    }

    /// The layer: `kernel`, `rfkill`, `bluetoothd`, `dbus-access`, `adapter hci0`, `strap AA:…`, `service`.
    public var name: String
    /// How it went.
    public var status: Status
    /// The evidence.
    public var detail: String
    /// The one command (or step) that fixes it, when something is wrong.
    public var fix: String?

    /// Creates a check result.
    public init(name: String, status: Status, detail: String, fix: String? = nil) {
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix
    }
}
