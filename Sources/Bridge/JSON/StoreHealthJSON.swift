import Foundation
public import WorkoutStore

/// The JSON shape of what a streamer holds unstored: `{"waiting","spilled","lost","error"}`.
public enum StoreHealthJSON {
    /// The JSON object of a streamer's health.
    public static func object(_ health: SampleStreamer.Health) -> [String: Any] {
        [
            "waiting": health.waiting, "spilled": health.spilled, "lost": health.lost,
            "error": health.lastError.map { "\($0)" as Any } ?? NSNull(),
        ]
    }

    /// The short problem a health line names: `disk full`, `store unwritable`, `samples lost`.
    public static func problem(_ health: SampleStreamer.Health) -> String? {
        switch health.lastError {
        case .diskFull: "disk full"
        case .some: "store unwritable"
        case nil: health.lost > 0 ? "samples lost" : nil
        }
    }
}
