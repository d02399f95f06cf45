import Foundation

/// Layer 2: soft and hard rfkill blocks for Bluetooth, from `/sys/class/rfkill`.
enum RfkillCheck {
    static func run(sysfsRoot: String) -> [DoctorCheck] {
        let directory = sysfsRoot + "/class/rfkill"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            return [
                DoctorCheck(
                    name: "rfkill", status: .skip,
                    detail: "\(directory) does not exist (no rfkill support in this kernel)")
            ]
        }
        func read(_ entry: String, _ file: String) -> String? {
            (try? String(contentsOfFile: "\(directory)/\(entry)/\(file)", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var checks: [DoctorCheck] = []
        for entry in entries.sorted() where read(entry, "type") == "bluetooth" {
            let name = read(entry, "name") ?? entry
            if read(entry, "hard") == "1" {
                checks.append(
                    DoctorCheck(
                        name: "rfkill \(name)", status: .fail,
                        detail: "\(entry): hard-blocked (a switch or the firmware)",
                        fix: "turn on the hardware wireless switch or enable Bluetooth in the firmware setup"))
            } else if read(entry, "soft") == "1" {
                checks.append(
                    DoctorCheck(
                        name: "rfkill \(name)", status: .fail, detail: "\(entry): soft-blocked",
                        fix: unblockFix))
            } else {
                checks.append(DoctorCheck(name: "rfkill \(name)", status: .ok, detail: "\(entry): not blocked"))
            }
        }
        if checks.isEmpty {
            checks.append(DoctorCheck(name: "rfkill", status: .ok, detail: "no Bluetooth rfkill switch"))
        }
        return checks
    }

    /// How to unblock: `rfkill` is in /usr/sbin and needs root; Debian may not have it installed.
    static var unblockFix: String {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/rfkill")
            ? "sudo rfkill unblock bluetooth" : "sudo apt-get install rfkill && sudo rfkill unblock bluetooth"
    }
}
