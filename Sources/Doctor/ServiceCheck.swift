import CBluetooth
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Layer 7: the hrbridged unit (when systemd runs) and its API socket.
enum ServiceCheck {
    static func run(unit: String, socketPath: String, systemdDirectory: String) -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        if FileManager.default.fileExists(atPath: systemdDirectory) {
            let show = Doctor.runCommand(
                "/usr/bin/systemctl",
                ["show", unit, "--property=LoadState,ActiveState,SubState,Result,ExecMainStatus"])
            var properties: [String: String] = [:]
            for line in (show ?? "").split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { properties[String(parts[0])] = String(parts[1]) }
            }
            if properties["LoadState"] == "not-found" || properties.isEmpty {
                checks.append(
                    DoctorCheck(
                        name: "service", status: .warn, detail: "\(unit) is not installed",
                        fix: "install it: see docs/service.md, \"Installing\""))
            } else if properties["ActiveState"] == "active" {
                checks.append(
                    DoctorCheck(name: "service", status: .ok, detail: "\(unit) \(properties["SubState"] ?? "running")"))
            } else {
                checks.append(
                    DoctorCheck(
                        name: "service", status: properties["ActiveState"] == "failed" ? .fail : .warn,
                        detail: "\(unit) \(properties["ActiveState"] ?? "?"), result \(properties["Result"] ?? "?"), "
                            + "last exit status \(properties["ExecMainStatus"] ?? "?")",
                        fix: "journalctl -u \(unit) -e, then sudo systemctl restart \(unit)"))
            }
        } else {
            checks.append(DoctorCheck(name: "service", status: .skip, detail: "systemd is not running here"))
        }
        checks.append(socketCheck(socketPath, unit: unit))
        return checks
    }

    static func socketCheck(_ path: String, unit: String = "hrbridge") -> DoctorCheck {
        var status = stat()
        if stat(path, &status) != 0 {
            // /run/hrbridge is the hrbridge group's: outside it, the socket cannot even be seen.
            guard errno == EACCES else {
                return DoctorCheck(
                    name: "api-socket", status: .skip, detail: "\(path) does not exist (hrbridged not running)")
            }
            return DoctorCheck(
                name: "api-socket", status: .fail,
                detail: "\(path) cannot be reached: its directory is for the hrbridge group",
                fix: "sudo usermod -aG hrbridge $USER, then log in again")
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            path.utf8CString.withUnsafeBytes { buffer.copyBytes(from: $0.prefix(buffer.count - 1)) }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if connected == 0 {
            return DoctorCheck(name: "api-socket", status: .ok, detail: "\(path) accepts connections")
        }
        let reason = String(cString: strerror(errno))
        return DoctorCheck(
            name: "api-socket", status: .fail, detail: "\(path) refuses connections: \(reason)",
            fix: errno == EACCES
                ? "sudo usermod -aG hrbridge $USER, then log in again"
                : "sudo systemctl restart \(unit)")
    }
}
