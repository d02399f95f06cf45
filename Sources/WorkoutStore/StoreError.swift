public import Foundation

/// Why the store refused.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file cannot be opened or created.
    case cannotOpen(path: String, reason: String)
    /// SQLite reported an error.
    case database(String)
    /// No workout with this identifier.
    case unknownWorkout(UUID)
    /// A stored value could not be read back.
    case corrupt(String)
    /// A guest's session is never written (HealthKit's `errorNotPermissibleForGuestUserMode`).
    case notPermissibleForGuestUser
    /// The schedule already holds its maximum of upcoming entries.
    case scheduleFull(Int)
    /// The file system holding the store has no space left (SQLite's `SQLITE_FULL`): nothing was
    /// written, and the same write succeeds once space is freed.
    case diskFull(path: String)
    /// A database server cannot be reached or dropped the connection (it restarts, the network is
    /// partitioned): nothing was written, and the same write succeeds once it is back.
    case unreachable(String)

    /// Whether retrying the same write later can succeed without changing it.
    public var isTransient: Bool {
        switch self {
        case .diskFull, .database, .unreachable: true
        default: false
        }
    }

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open the store at \(path): \(reason)"
        case .database(let message): "store: \(message)"
        case .unknownWorkout(let id): "no workout \(id.uuidString)"
        case .corrupt(let what): "store: unreadable \(what)"
        case .notPermissibleForGuestUser: "a guest's workout is not saved"
        case .scheduleFull(let limit): "the schedule already holds \(limit) upcoming plans"
        case .diskFull(let path): "the disk holding the store \(path) is full"
        case .unreachable(let reason): "store unreachable: \(reason)"
        }
    }
}
