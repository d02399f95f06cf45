import Testing

@testable import BlueZ

private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private func delay(_ action: SensorConnection.Backoff.Step) -> Double? {
    guard case .connect(let after) = action else { return nil }
    return after.seconds
}

@Suite("Reconnect backoff (pure)")
struct BackoffTests {
    @Test("backoff doubles from 0.5 s to the 30 s bound, within the jitter, and resets on success")
    func backoff() throws {
        var policy = SensorConnection.Backoff()
        var random = SplitMix(state: 7)
        var delays: [Double] = []
        for _ in 0..<10 { delays.append(try #require(delay(policy.next(after: .failed(.other), using: &random)))) }
        let nominal = [0.5, 1, 2, 4, 8, 16, 30, 30, 30, 30]
        for (actual, expected) in zip(delays, nominal) {
            #expect(actual >= expected * 0.8 && actual <= min(expected * 1.2, 30), "\(delays)")
        }
        #expect(delays.allSatisfy { $0 <= 30 })
        #expect(policy.next(after: .connected, using: &random) == .none)
        #expect(policy.failures == 0)
        let first = try #require(delay(policy.next(after: .failed(.transientConnectionFailure), using: &random)))
        #expect(first >= 0.4 && first <= 0.6)
    }

    @Test("jitter spreads straps that failed together")
    func jitterSpreads() throws {
        var random = SplitMix(state: 1)
        var delays: Set<Double> = []
        for _ in 0..<20 {
            var policy = SensorConnection.Backoff()
            for _ in 0..<3 { _ = policy.next(after: .failed(.other), using: &random) }
            delays.insert(try #require(delay(policy.next(after: .failed(.other), using: &random))))
        }
        #expect(delays.count > 15)
        var exact = SensorConnection.Backoff.Configuration()
        exact.jitter = 0
        var policy = SensorConnection.Backoff(configuration: exact)
        #expect(delay(policy.next(after: .failed(.other), using: &random)) == 0.5)
        #expect(delay(policy.next(after: .failed(.other), using: &random)) == 1)
    }

    @Test("abort-by-local is retried at once, then backs off; advertising again connects at once")
    func abortAndAdvertise() {
        var random = SplitMix(state: 3)
        var policy = SensorConnection.Backoff()
        #expect(policy.next(after: .failed(.connectionAbortedByLocal), using: &random) == .connect(after: .zero))
        #expect((delay(policy.next(after: .failed(.connectionAbortedByLocal), using: &random)) ?? 0) > 0)
        #expect(policy.next(after: .advertised, using: &random) == .connect(after: .zero))
        #expect(policy.failures == 2)
        _ = policy.next(after: .connected, using: &random)
        #expect(policy.next(after: .failed(.connectionAbortedByLocal), using: &random) == .connect(after: .zero))
    }

    @Test("an expired device object is rediscovered; a missing key re-pairs only when opted in")
    func rediscoverAndRepair() {
        var random = SplitMix(state: 5)
        var policy = SensorConnection.Backoff()
        #expect(policy.next(after: .deviceObjectMissing, using: &random) == .rediscover)
        #expect(policy.next(after: .failed(.unknownObject), using: &random) == .rediscover)
        // By default the bond is not replaced: the failure backs off like any other.
        #expect(delay(policy.next(after: .failed(.authenticationFailed), using: &random)) != nil)
        var optIn = SensorConnection.Backoff.Configuration()
        optIn.repairsOnAuthenticationFailure = true
        var repairing = SensorConnection.Backoff(configuration: optIn)
        #expect(repairing.next(after: .failed(.authenticationFailed), using: &random) == .removeAndRepair)
    }
}
