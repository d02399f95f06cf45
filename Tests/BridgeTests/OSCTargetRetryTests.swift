import BridgeOut
import BusHarness
import Foundation
import Logging
import Sensors
import ServiceLifecycle
import Synchronization
import Testing

@testable import Bridge

/// `[osc]` with a target that does not resolve yet (DNS not up at boot, a headset's name): the
/// daemon goes on, and the output starts once the name resolves, retried with backoff on the
/// injected clock.
@Suite("[osc]: a target that does not resolve yet", .serialized, .timeLimit(.minutes(2)))
struct OSCTargetRetryTests {
    static let logger = Logger(label: "test")

    @Test("tried again after 1 s, 2 s, 4 s …; once it resolves the strap's heart rate goes out")
    func retriedWithBackoff() async throws {
        try await InProcessBridge.with { bridge in
            let receiver = try UDPReceiver()
            let attempts = Mutex(0)
            var settings = OSCSettings()
            settings.source = .strap(address: DaemonUnderTest.straps[0])
            let target = OSCTarget(host: "127.0.0.1", port: receiver.port)
            let clock = ManualWallClock()
            let service = try OSCService(
                settings: settings, core: bridge.core, clock: clock, simulatorStrap: nil, logger: Self.logger
            ) {
                let attempt = attempts.withLock {
                    $0 += 1
                    return $0
                }
                guard attempt > 3 else { return .failure(.unresolved(host: "quest.lan", reason: "not yet")) }
                return OSCSender.resolving(target, logger: Self.logger)
            }
            try await bridge.running(service) {
                for (attempt, delay) in [(1, 1.0), (2, 2.0), (3, 4.0)] {
                    await clock.waitUntilSleeping(1)
                    #expect(attempts.withLock { $0 } == attempt)
                    // Not a moment before its time.
                    clock.advance(by: delay - 0.01)
                    #expect(clock.sleeperCount == 1, "attempt \(attempt + 1) came early")
                    #expect(attempts.withLock { $0 } == attempt)
                    clock.advance(by: 0.01)
                }
                // Resolved: the strap (streaming before) is said connected and its heart rate sent.
                let datagram = await receiver.receive()
                #expect(datagram != nil, "nothing reached the target once it resolved")
                #expect(attempts.withLock { $0 } == 4)
            }
        }
    }

    @Test("shut down while the target does not resolve: the service ends at once")
    func shutdownWhileWaiting() async throws {
        try await InProcessBridge.with { bridge in
            let clock = ManualWallClock()
            let service = try OSCService(
                settings: OSCSettings(), core: bridge.core, clock: clock, simulatorStrap: nil, logger: Self.logger
            ) { .failure(.unresolved(host: "quest.lan", reason: "never")) }
            try await bridge.running(service) {
                await clock.waitUntilSleeping(1)
            }
        }
    }
}
