import Foundation
import Sensors
import Testing

@testable import Bridge

@Suite("Session figures: refreshed together on the whole second")
struct FiguresRefresherTests {
    @Test(
        "the next refresh is the first whole second after now",
        arguments: [(1000.3, 1001.0), (1000.0, 1001.0), (999.999, 1000.0), (-0.5, 0.0)])
    func nextRefresh(now: Double, expected: Double) {
        #expect(
            FiguresRefresher.nextRefresh(after: Date(timeIntervalSinceReferenceDate: now))
                == Date(timeIntervalSinceReferenceDate: expected))
    }

    @Test("every session with samples in a second goes out at its end, together; a quiet second arms nothing")
    func together() async {
        let clock = ManualWallClock(now: Date(timeIntervalSinceReferenceDate: 1000.3))
        let refresher = FiguresRefresher(clock: clock)
        let (batches, output) = AsyncStream.makeStream(of: Set<UUID>.self)
        let running = Task { await refresher.run { output.yield($0) } }
        var received = batches.makeAsyncIterator()
        let (alice, bob) = (UUID(), UUID())
        refresher.samplesArrived(for: alice)
        await clock.waitUntilSleeping()
        clock.advance(to: Date(timeIntervalSinceReferenceDate: 1000.6))
        refresher.samplesArrived(for: bob)
        refresher.samplesArrived(for: alice)
        #expect(clock.sleeperCount == 1, "one timer for both")
        clock.advance(to: Date(timeIntervalSinceReferenceDate: 1001))
        #expect(await received.next() == [alice, bob])
        // Two quiet seconds: nothing is due, so nothing sleeps on the clock and nothing goes out.
        clock.advance(to: Date(timeIntervalSinceReferenceDate: 1003.5))
        refresher.samplesArrived(for: bob)
        await clock.waitUntilSleeping()
        clock.advance(to: Date(timeIntervalSinceReferenceDate: 1004))
        #expect(await received.next() == [bob], "only the session whose samples came, at the next whole second")
        running.cancel()
        await running.value
    }
}
