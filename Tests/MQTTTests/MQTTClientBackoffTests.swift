import BusHarness
import Logging
import Testing

@testable import MQTT

/// The retries of a first connect that failed, on a clock the test moves: no broker, no real waits.
@Suite struct MQTTClientBackoffTests {
    /// A broker the first connect cannot reach at all: Linux refuses a TCP connect to the broadcast
    /// address at once (`ENETUNREACH`), so every attempt fails before the client waits again.
    func unreachable(_ delays: ClosedRange<UInt32>) -> MQTTClient.Options {
        var options = MQTTClient.Options(
            broker: MQTTBrokerURL(host: "255.255.255.255", port: 1883, usesTLS: false), clientID: "backoff-test")
        options.reconnectDelay = delays
        return options
    }

    @Test func retriesFollowTheBackoffOnTheInjectedClockAndStopEndsThem() async throws {
        let clock = ManualClock()
        let client = try MQTTClient(options: unreachable(1...4), logger: Logger(label: "mqtt-test"), clock: clock)
        try await client.start()
        for step in [1, 2, 4, 4, 4] {
            await clock.waitUntilSleeping()
            #expect(clock.requestedSleeps.last == .seconds(step))
            // Just short of the deadline, the retry still waits.
            clock.advance(by: .seconds(step) - .milliseconds(1))
            #expect(clock.sleeperCount == 1)
            clock.advance(by: .milliseconds(1))
        }
        await clock.waitUntilSleeping()
        #expect(clock.requestedSleeps == [1, 2, 4, 4, 4, 4].map { .seconds($0) })
        #expect(await client.isConnected == false)

        // stop() cancels the sleeping retry and returns only once it has ended.
        await client.stop()
        #expect(clock.sleeperCount == 0)
        clock.advance(by: .seconds(60))
        #expect(clock.requestedSleeps.count == 6, "no retry after stop")
    }
}
