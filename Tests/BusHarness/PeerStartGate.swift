import Foundation
import Synchronization

/// Bounds how many peers start at once in this test process.
///
/// Swift Testing runs suites in parallel; without a bound, every suite that needs dbusmock,
/// BlueZoo, a virtual strap or a daemon starts its interpreter in the same second, and on 2
/// cores some of them take longer than any fixed deadline. A start holds a slot from spawn to its
/// readiness signal; what the peer does afterwards is not bounded. The number of slots is the
/// number of cores, or `HRBRIDGE_TEST_PEER_STARTS`.
public final class PeerStartGate: Sendable {
    /// The gate every harness start goes through.
    public static let shared = PeerStartGate(
        slots: ProcessInfo.processInfo.environment["HRBRIDGE_TEST_PEER_STARTS"].flatMap { Int($0) }
            ?? max(2, ProcessInfo.processInfo.activeProcessorCount))

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    /// A gate with `slots` starts at once (at least one).
    public init(slots: Int) { state = Mutex(State(free: max(1, slots))) }

    /// Runs `start` while holding a slot.
    public func withSlot<T>(_ start: () async throws -> T) async throws -> T {
        await acquire()
        defer { release() }
        return try await start()
    }

    private func acquire() async {
        let granted = state.withLock { state in
            guard state.free > 0 else { return false }
            state.free -= 1
            return true
        }
        if granted { return }
        await withCheckedContinuation { continuation in
            let grantedNow = state.withLock { state in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if grantedNow { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
