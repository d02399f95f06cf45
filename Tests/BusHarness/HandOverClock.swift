public import Foundation
public import Sensors
import Synchronization

/// The system clock until ``handOver()``, then a ``ManualWallClock`` that starts where real time
/// was: setup (connecting, resolving services, a retry after a failed attempt on a loaded machine)
/// runs on real time and ends by itself, and only what the test is about waits on the clock it moves.
/// A sleep begun before the hand-over stays on real time.
public final class HandOverClock: WallClock {
    private let manual = Mutex<ManualWallClock?>(nil)

    public init() {}

    /// From now on the clock moves only when the returned clock is advanced.
    public func handOver() -> ManualWallClock {
        manual.withLock { current in
            if let current { return current }
            let clock = ManualWallClock(now: Date())
            current = clock
            return clock
        }
    }

    public func now() -> Date { manual.withLock { $0 }?.now() ?? Date() }

    public func sleep(until date: Date) async throws {
        if let clock = manual.withLock({ $0 }) {
            try await clock.sleep(until: date)
        } else {
            try await SystemWallClock().sleep(until: date)
        }
    }
}
