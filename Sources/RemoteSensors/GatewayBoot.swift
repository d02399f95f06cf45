public import Foundation
import Wire

/// A gateway's boot: a number that grows at every start of a gateway with a key, carried in its
/// signed frames and statuses. A gateway's sequence numbers start over when it restarts, so a
/// frame captured just before a restart is later in sequence than the new boot's first ones; its
/// older boot tells a hub it is no longer live.
///
/// It is the start's time in milliseconds since 1970 on the gateway's clock, raised past the last
/// one kept in the state directory: it grows when the clock was set back between two starts (a
/// Raspberry Pi without a clock battery) and when the file was lost (the clock moved on).
public enum GatewayBoot {
    /// How far ahead of a set clock a kept boot is still followed, ms: a clock set back a little
    /// (a Raspberry Pi starts at its last saved time until NTP answers) keeps boots growing.
    static let maximumLead: UInt64 = 3_600_000
    /// A clock before this (2025-01-01, ms) was never set: a kept boot ahead of it is followed.
    static let earliestSetClock: UInt64 = 1_735_689_600_000

    /// The most bytes a boot file holds (13 digits and a newline are written).
    static let maximumFileBytes = 32

    /// The boot of a start at `now`: later than the one kept at `path` (when there is one in
    /// range), and kept there for the next start (the directory made if need be, mode 0700);
    /// with the error that kept it from being written, if one did.
    public static func next(keptAt path: String, now: Date) -> (boot: UInt64, notKept: (any Error)?) {
        let clock = max(1, GatewayStatus.milliseconds(now))
        // A kept boot well ahead of a clock that has been set came from a clock ahead at an
        // earlier start; hubs refuse a boot dated ahead of them, so following it would lock this
        // gateway out. A clock never set (1970 on a board without a clock battery) is behind.
        let last =
            kept(at: path).flatMap { clock >= earliestSetClock && $0 > clock &+ maximumLead ? nil : $0 } ?? 0
        // `last` is below the maximum, and the milliseconds at most the maximum: no overflow.
        let boot = max(clock, last + 1)
        do {
            let file = URL(fileURLWithPath: path)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            try Data("\(boot)\n".utf8).write(to: file, options: .atomic)
            return (boot, nil)
        } catch {
            return (boot, error)
        }
    }

    /// The boot kept at `path`: nil when there is none, it cannot be read, or it is not a number
    /// below ``RemoteMeasurement/maximumBoot`` (no later boot would fit).
    static func kept(at path: String) -> UInt64? {
        guard let data = try? BoundedFile.read(path, limit: maximumFileBytes, regularOnly: true) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = GatewayStatus.decimal(Array(text.utf8)[...]), value < RemoteMeasurement.maximumBoot else {
            return nil
        }
        return value
    }
}
