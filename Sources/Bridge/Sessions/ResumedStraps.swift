import Foundation
import Samples
import Sensors
import Synchronization

/// The straps of a session recovered after the daemon stopped without warning, whose frames
/// from while it was down an adapter can fetch again (a hub's gateways keep them): the session's
/// first live frame of each tells the adapter where recording resumed.
final class ResumedStraps: Sendable {
    /// Where the store's part of a strap ends: its last frame's date, and the adapter it came
    /// through (nil: nothing of it is stored; the adapter of its first live frame).
    struct Stored: Sendable {
        var adapter: String?
        var until: Date
    }

    private let waiting = Mutex<[String: Stored]>([:])
    private let source: any BackfillSource

    /// Watches nothing yet, for `source`.
    init(source: any BackfillSource) {
        self.source = source
    }

    /// Watches the straps in `waiting` (by address). Before frames flow: the store's end is read
    /// once the recovery has stored what the last run spilled.
    func watch(_ waiting: [String: Stored]) {
        self.waiting.withLock { $0 = waiting }
    }

    /// Notes one frame's samples as the session recorded them live: the first frame of a waiting
    /// strap dated after its stored ones resumes it. A frame's date is its samples' latest end (a
    /// heart rate's time, the last RR interval's end, an energy increment's end); a battery
    /// level is no frame's.
    func note(_ samples: [QuantitySample]) {
        guard let first = samples.first else { return }
        let address = first.source.address
        let date = samples.lazy.filter { $0.type != .batteryLevel }.map(\.end).max()
        guard let date else { return }
        let resumed = waiting.withLock { waiting -> Stored? in
            guard let stored = waiting[address], date > stored.until else { return nil }
            waiting[address] = nil
            return stored
        }
        guard let resumed else { return }
        let source = source
        let adapter = resumed.adapter ?? first.source.adapter
        Task {
            await source.resumeRecording(address, adapter: adapter, storedUntil: resumed.until, firstLive: date)
        }
    }

    /// Whether no strap waits.
    var isDone: Bool { waiting.withLock { $0.isEmpty } }
}
