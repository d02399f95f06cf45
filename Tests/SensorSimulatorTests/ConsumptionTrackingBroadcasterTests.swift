import Sensors
import Synchronization
import Testing

/// What each consumer has handled, shared with the consumers' tasks.
private final class HandledValues: Sendable {
    let perConsumer = Mutex<[[Int]]>([[], []])
}

/// The lockstep a stepped simulation relies on: the producer waits until its consumers are done.
@Suite("ConsumptionTrackingBroadcaster: a producer that waits for its consumers")
struct ConsumptionTrackingBroadcasterTests {
    @Test("after waitUntilConsumed, every subscriber has handled every value, in order")
    func lockstep() async {
        let broadcaster = ConsumptionTrackingBroadcaster<Int>()
        let handled = HandledValues()
        var consumers: [Task<Void, Never>] = []
        for index in 0..<2 {
            let values = broadcaster.subscribe()
            consumers.append(
                Task {
                    for await value in values {
                        // A handler that suspends: the producer must still wait for it.
                        await Task.yield()
                        handled.perConsumer.withLock { $0[index].append(value) }
                    }
                })
        }
        for batch in 0..<200 {
            for value in 0..<3 { broadcaster.yield(batch * 3 + value) }
            await broadcaster.waitUntilConsumed()
            let expected = Array(0..<(batch * 3 + 3))
            #expect(handled.perConsumer.withLock { $0 } == [expected, expected])
        }
        broadcaster.finish()
        for consumer in consumers { await consumer.value }
        #expect(broadcaster.subscriberCount == 0)
    }

    @Test("a subscription nobody reads any more is not waited for")
    func releasedOrCancelled() async {
        let broadcaster = ConsumptionTrackingBroadcaster<Int>()
        do {
            // Subscribed, then released unread.
            _ = broadcaster.subscribe()
        }
        let values = broadcaster.subscribe()
        let consumer = Task { for await _ in values {} }
        broadcaster.yield(1)
        await broadcaster.waitUntilConsumed()
        // The consumer now waits for a value: cancelling it ends its stream and its subscription.
        consumer.cancel()
        await consumer.value
        #expect(broadcaster.subscriberCount == 0)
        broadcaster.yield(2)
        await broadcaster.waitUntilConsumed()
    }

    @Test("finish ends each subscription after the values already yielded; later subscribers get an ended stream")
    func finish() async {
        let broadcaster = ConsumptionTrackingBroadcaster<Int>()
        let values = broadcaster.subscribe()
        broadcaster.yield(1)
        broadcaster.yield(2)
        broadcaster.finish()
        broadcaster.yield(3)
        var received: [Int] = []
        for await value in values { received.append(value) }
        #expect(received == [1, 2])
        var late = 0
        for await _ in broadcaster.subscribe() { late += 1 }
        #expect(late == 0)
        await broadcaster.waitUntilConsumed()
    }
}
