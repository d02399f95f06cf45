import Foundation

/// Where the daemon's API socket is when nothing says otherwise: in systemd's runtime directory
/// for the unit (`RUNTIME_DIRECTORY`), else `/run/hrbridge/api.sock`. The daemon listens there and
/// `hrbridge session` connects there.
public enum DaemonSocket {
    public static var defaultPath: String {
        if let runtime = ProcessInfo.processInfo.environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first {
            return "\(runtime)/api.sock"
        }
        return "/run/hrbridge/api.sock"
    }
}
