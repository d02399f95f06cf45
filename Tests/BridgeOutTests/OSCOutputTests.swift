import BridgeOut
import BusHarness
import Foundation
import GATT
import Logging
import Sensors
import Testing

/// The runner on a manual clock: it sleeps until the feed's next due time, and only the clock
/// moving wakes it.
@Suite(.timeLimit(.minutes(1))) struct OSCOutputTests {
    static let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let beat = "/avatar/parameters/isHRBeat"
    static let connected = "/avatar/parameters/isHRConnected"

    struct Running {
        let clock = ManualWallClock(now: OSCOutputTests.t0)
        let transport = RecordingTransport()
        let facts: AsyncStream<OSCFact>.Continuation
        let task: Task<Void, Never>

        init(configuration: OSCFeed.Configuration) {
            let (stream, facts) = AsyncStream.makeStream(of: OSCFact.self)
            self.facts = facts
            let output = OSCOutput(
                configuration: configuration, facts: stream, clock: clock, transport: transport,
                logger: Logger(label: "osc-output-test"))
            task = Task { await output.run() }
        }

        /// Waits until the runner sleeps on the clock: it has taken in what it was given.
        func waitForSleeper() async throws {
            try await eventually("the runner to sleep on the clock") { clock.sleeperCount == 1 }
        }
    }

    @Test func beatsWaitForTheClockAndTheEndSendsTheDrop() async throws {
        let running = Running(configuration: .init(preset: .hrtovrchat, beatDelay: .seconds(1)))
        var received = running.transport.stream.makeAsyncIterator()
        running.facts.yield(
            .reading(
                .init(heartRate: 72, rrIntervals: [RRInterval(raw: 1024)], contact: .detected, receivedAt: Self.t0)))
        let values = await received.next(7)
        #expect(values.first == OSCMessage("/avatar/parameters/HR", [.int32(72)]))
        try await running.waitForSleeper()
        #expect(!running.transport.messages.contains { $0.address == Self.beat }, "the beat is a second ahead")

        running.clock.advance(to: Self.t0 + 1)
        // The resend and the beat fall due together: the beat goes first.
        let atOne = await received.next(through: { $0.address == Self.beat })
        #expect(atOne == [OSCMessage(Self.beat, [.bool(true)])])
        let resend = await received.next(7)
        #expect(resend.first == OSCMessage("/avatar/parameters/HR", [.int32(72)]))
        try await running.waitForSleeper()
        running.clock.advance(by: 0.1)
        #expect(await received.next(1) == [OSCMessage(Self.beat, [.bool(false)])])

        running.facts.finish()
        await running.task.value
        let drop = await received.next(7)
        #expect(drop.contains(OSCMessage(Self.connected, [.bool(false)])))
        #expect(drop.contains(OSCMessage("/avatar/parameters/HR", [.int32(0)])))
        #expect(running.clock.sleeperCount == 0, "no timer left behind")
    }

    @Test func cancellingStopsItWithTheDrop() async throws {
        let running = Running(configuration: .init(preset: .custom([.heartRate: "HR", .connected: "Connected"])))
        var received = running.transport.stream.makeAsyncIterator()
        running.facts.yield(.reading(.init(heartRate: 90, contact: .detected, receivedAt: Self.t0)))
        #expect(await received.next(2).count == 2)
        try await running.waitForSleeper()
        running.task.cancel()
        await running.task.value
        #expect(
            await received.next(2) == [
                OSCMessage("/avatar/parameters/HR", [.int32(0)]),
                OSCMessage("/avatar/parameters/Connected", [.bool(false)]),
            ])
        #expect(running.clock.sleeperCount == 0)
    }

    /// Nothing due, nobody sleeping: the runner only waits for facts.
    @Test func withNothingDueItDoesNotSleepOnTheClock() async throws {
        let running = Running(configuration: .init(preset: .hrtovrchat))
        var received = running.transport.stream.makeAsyncIterator()
        running.facts.yield(.disconnected(at: Self.t0))
        #expect(await received.next(7).contains(OSCMessage(Self.connected, [.bool(false)])))
        try await running.waitForSleeper()
        running.facts.finish()
        await running.task.value
        #expect(running.clock.sleeperCount == 0)
    }
}
