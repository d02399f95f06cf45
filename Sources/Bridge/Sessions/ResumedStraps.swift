import Foundation
import Samples
import Sensors
import Synchronization

/// The straps of a session recovered after the daemon stopped without warning, whose frames
/// from while it was down an adapter can fetch again (a hub's gateways keep them): the session's
/// first live frame of each tells the adapter where recording resumed.
final class ResumedStraps: Sendable {
    /// A strap's last stored frame: the adapter it came through, and its date.
    struct Stored: Sendable {
        var adapter: String
        var until: Date
    }

    private let waiting: Mutex<[String: Stored]>
    private let source: any BackfillSource

    /// Watches the straps in `waiting` (by address) for `source`.
    init(waiting: [String: Stored], source: any BackfillSource) {
        self.waiting = Mutex(waiting)
        self.source = source
    }

    /// Notes one frame's samples as the session recorded them live: the first heart-rate frame
    /// of a waiting strap dated after its stored ones resumes it. A frame's date is its samples'
    /// latest end (a heart rate's time, the last RR interval's end).
    func note(_ samples: [QuantitySample]) {
        guard let first = samples.first else { return }
        let address = first.source.address
        let date = samples.lazy.filter { $0.type == .heartRate || $0.type == .heartbeatSeries }.map(\.end).max()
        guard let date else { return }
        let resumed = waiting.withLock { waiting -> Stored? in
            guard let stored = waiting[address], date > stored.until else { return nil }
            waiting[address] = nil
            return stored
        }
        guard let resumed else { return }
        let source = source
        Task {
            await source.resumeRecording(address, adapter: resumed.adapter, storedUntil: resumed.until, firstLive: date)
        }
    }

    /// Whether every strap has resumed.
    var isDone: Bool { waiting.withLock { $0.isEmpty } }
}
