import Foundation
public import JSONSupport
public import WorkoutStore

/// What a streamer holds unstored: `{"error","lost","spilled","waiting"}`.
public struct StoreHealthJSON: Codable, Sendable, Equatable {
    public var waiting: Int
    public var spilled: Int
    public var lost: Int
    /// Why the store refuses, while it does.
    @Nullable public var error: String?

    /// The health's JSON.
    public init(_ health: SampleStreamer.Health) {
        waiting = health.waiting
        spilled = health.spilled
        lost = health.lost
        error = health.lastError.map { "\($0)" }
    }

    /// The short problem a health line names: `disk full`, `store unwritable`, `samples lost`.
    public static func problem(_ health: SampleStreamer.Health) -> String? {
        switch health.lastError {
        case .diskFull: "disk full"
        case .unreachable: "store unreachable"
        case .some: "store unwritable"
        case nil: health.lost > 0 ? "samples lost" : nil
        }
    }
}
