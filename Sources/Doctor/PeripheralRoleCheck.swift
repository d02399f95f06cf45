import DBus
import Foundation

/// Whether an adapter can serve apps as a heart-rate sensor (`hrbridge relay`, the daemon's
/// `[peripheral]`) and whether it can do that while it also holds straps.
///
/// Facts behind the verdict: BlueZ lists `central-peripheral` in `Adapter1.Roles` only when the
/// kernel reports simultaneous LE roles for the controller (before Linux 6.11 only drivers that
/// vouch for their LE states do); without it the kernel refuses to connect a strap while an app is
/// connected to us. Advertising also pauses while a strap connection is made on the same adapter.
enum PeripheralRoleCheck {
    /// The facts one adapter offers, as read from BlueZ's objects.
    struct Facts: Hashable {
        var adapter: String
        /// `Adapter1.Roles`; `nil` when BlueZ does not publish it (before 5.62).
        var roles: [String]?
        /// Whether BlueZ offers `LEAdvertisingManager1` on the adapter.
        var canAdvertise: Bool
        var supportedInstances: Int?
        var activeInstances: Int?
        /// How many adapters BlueZ has in all.
        var adapterCount: Int
        /// The running kernel's release, e.g. `6.1.0-27-amd64`.
        var kernel: String
    }

    static func facts(path: String, interfaces: [String: DBusValue], adapterCount: Int, kernel: String) -> Facts {
        let adapter = interfaces["org.bluez.Adapter1"]?.stringDictionary ?? [:]
        let advertising = interfaces["org.bluez.LEAdvertisingManager1"]?.stringDictionary
        return Facts(
            adapter: path.split(separator: "/").last.map(String.init) ?? path,
            roles: adapter["Roles"]?.arrayElements?.compactMap(\.string), canAdvertise: advertising != nil,
            supportedInstances: advertising?["SupportedInstances"]?.integer,
            activeInstances: advertising?["ActiveInstances"]?.integer, adapterCount: adapterCount, kernel: kernel)
    }

    static func check(_ facts: Facts) -> DoctorCheck {
        let name = "peripheral \(facts.adapter)"
        var evidence = ["kernel \(facts.kernel)"]
        if let roles = facts.roles { evidence.append("roles \(roles.isEmpty ? "none" : roles.joined(separator: ","))") }
        if let supported = facts.supportedInstances {
            evidence.append("advertising instances \(facts.activeInstances ?? 0) of \(supported) in use")
        }
        let said = evidence.joined(separator: ", ")
        guard facts.canAdvertise else {
            return DoctorCheck(
                name: name, status: .warn, detail: "\(said): BlueZ offers no advertising on this adapter",
                fix: "use an adapter with Bluetooth LE advertising for the peripheral (--peripheral-adapter)")
        }
        if let roles = facts.roles, !roles.contains("peripheral") {
            return DoctorCheck(
                name: name, status: .warn, detail: "\(said): this adapter cannot act as a peripheral",
                fix: "use another adapter for the peripheral (--peripheral-adapter)")
        }
        if let supported = facts.supportedInstances, (facts.activeInstances ?? 0) >= supported {
            return DoctorCheck(
                name: name, status: .warn, detail: "\(said): no advertising instance left",
                fix: "stop another advertiser on this adapter, or use another adapter for the peripheral")
        }
        let simultaneous = facts.roles?.contains("central-peripheral") ?? false
        if simultaneous {
            return DoctorCheck(
                name: name, status: .ok,
                detail:
                    "\(said): can serve apps while holding straps; advertising pauses while a strap connects on this adapter"
            )
        }
        if facts.adapterCount > 1 {
            return DoctorCheck(
                name: name, status: .ok,
                detail:
                    "\(said): not central and peripheral at once; with \(facts.adapterCount) adapters, hold straps on one and serve apps from another (automatic)"
            )
        }
        let kernelAdvice =
            Self.kernelBefore611(facts.kernel)
            ? "this kernel (before 6.11) may not trust this controller's LE states, so "
            : "the controller does not report simultaneous LE roles, so "
        return DoctorCheck(
            name: name, status: .warn,
            detail:
                "\(said): \(kernelAdvice)a strap may not be connected again while an app is connected to this adapter "
                + "(hrbridge then disconnects the app until the strap is back)",
            fix: "add a second Bluetooth adapter (any USB dongle) for the peripheral, or run Linux 6.11 or later; "
                + "BlueZ lists central-peripheral only with KernelExperimental = \(Self.simultaneousRolesFeature) "
                + "in /etc/bluetooth/main.conf [General], so add it to let BlueZ say when the controller can")
    }

    /// The kernel's experimental feature for LE simultaneous roles (MGMT): BlueZ 5.66 lists
    /// `central-peripheral` only when `KernelExperimental` names it.
    static let simultaneousRolesFeature = "671b10b5-42c0-4696-9227-eb28d1b049d6"

    /// `6.1.0-27-amd64` → true; `6.11.2` → false; unreadable → true (the cautious answer).
    static func kernelBefore611(_ release: String) -> Bool {
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return true }
        return (numbers[0], numbers[1]) < (6, 11)
    }

    /// The running kernel's release (`uname -r`).
    static func kernelRelease() -> String {
        var names = utsname()
        guard uname(&names) == 0 else { return "unknown" }
        return withUnsafeBytes(of: &names.release) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
