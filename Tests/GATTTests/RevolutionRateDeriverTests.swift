import Testing

@testable import GATT

/// Feeds CSC frames (hex) into crank and wheel derivers, one second apart, and returns each update.
private func feedCSC(
    _ frames: [String], wheel: inout RevolutionRateDeriver, crank: inout RevolutionRateDeriver
) throws -> (wheel: [RevolutionRateDeriver.Update], crank: [RevolutionRateDeriver.Update]) {
    var wheelUpdates: [RevolutionRateDeriver.Update] = []
    var crankUpdates: [RevolutionRateDeriver.Update] = []
    for (index, frame) in frames.enumerated() {
        let measurement = try CSCMeasurement(bytes: hex(frame))
        if let data = measurement.wheel { wheelUpdates.append(wheel.update(data, receivedAt: Double(index))) }
        if let data = measurement.crank { crankUpdates.append(crank.update(data, receivedAt: Double(index))) }
    }
    return (wheelUpdates, crankUpdates)
}

private func isClose(_ value: Double?, _ expected: Double, within tolerance: Double = 0.005) -> Bool {
    guard let value else { return false }
    return abs(value - expected) <= tolerance
}

@Suite("Revolution counters → cadence and speed")
struct RevolutionRateDeriverTests {
    var wheel = RevolutionRateDeriver(configuration: .cscWheel)
    var crank = RevolutionRateDeriver(configuration: .crank)

    @Test("CSC-13: wheel 3.01 m/s on 2.118 m, crank 65.71 rpm")
    mutating func csc13() throws {
        let updates = try feedCSC(
            ["03 D9 00 00 00 77 0C 01 00 00 98", "01 DB 00 00 00 18 12", "03 DC 00 00 00 91 14 03 00 4E 9F"],
            wheel: &wheel, crank: &crank)
        #expect(updates.wheel[0] == .baseline)
        #expect(isClose(updates.wheel[1].revolutionsPerMinute.map { $0 / 60 * 2.118 }, 3.0098, within: 0.001))
        #expect(updates.crank[0] == .baseline)
        #expect(isClose(updates.crank[1].revolutionsPerMinute, 65.71))
    }

    @Test("CSC-14: 1 rev in 539 ticks is 113.99 rpm")
    mutating func csc14() throws {
        let updates = try feedCSC(["02 F7 00 50 C1", "02 F8 00 6B C3"], wheel: &wheel, crank: &crank)
        #expect(isClose(updates.crank[1].revolutionsPerMinute, 113.99))
    }

    @Test("CSC-15: event time wraps: 2 revs over the wrap are 120 rpm")
    mutating func csc15() throws {
        let updates = try feedCSC(["01 F4 01 00 00 00 FE", "01 F6 01 00 00 00 02"], wheel: &wheel, crank: &crank)
        #expect(updates.wheel[1] == .rate(revolutionsPerMinute: 120))
    }

    @Test("CSC-16: 16-bit crank count and time both wrap: 60 rpm")
    mutating func csc16() throws {
        let updates = try feedCSC(["02 FF FF 00 FC", "02 00 00 00 00"], wheel: &wheel, crank: &crank)
        #expect(updates.crank[1] == .rate(revolutionsPerMinute: 60))
    }

    @Test("CSC-17: 6060 rpm is rejected and re-bases")
    mutating func csc17() throws {
        let updates = try feedCSC(
            ["02 FF FF 00 04", "02 64 00 00 08", "02 65 00 00 0C"], wheel: &wheel, crank: &crank)
        #expect(updates.crank[1] == .rejected(.implausibleRate(revolutionsPerMinute: 6060)))
        #expect(updates.crank[1].revolutionsPerMinute == nil)
        #expect(updates.crank[2] == .rate(revolutionsPerMinute: 60), "the rejected frame became the baseline")
    }

    @Test("CSC-18: a wheel rolled backwards reports reverse, speed 0, never 4294967295 revs")
    mutating func csc18() throws {
        let updates = try feedCSC(
            ["01 64 00 00 00 00 04", "01 63 00 00 00 00 08", "01 64 00 00 00 00 0C"], wheel: &wheel, crank: &crank)
        #expect(updates.wheel[1] == .reverse)
        #expect(updates.wheel[1].revolutionsPerMinute == 0)
        #expect(updates.wheel[2] == .rate(revolutionsPerMinute: 60))
    }

    @Test("CSC-19: 10 revs in 1 s on 2.34 m is 23.4 m/s")
    mutating func csc19() throws {
        let updates = try feedCSC(["01 0A 00 00 00 00 00", "01 14 00 00 00 00 04"], wheel: &wheel, crank: &crank)
        #expect(isClose(updates.wheel[1].revolutionsPerMinute.map { $0 / 60 * 2.34 }, 23.4, within: 1e-9))
    }

    @Test("CSC-20: 33.54 rpm; the same times on a 2.15 m wheel are 1.2017 m/s")
    mutating func csc20() throws {
        let updates = try feedCSC(["02 01 00 28 18", "02 02 00 50 1F"], wheel: &wheel, crank: &crank)
        #expect(isClose(updates.crank[1].revolutionsPerMinute, 33.537))
        var wheel = RevolutionRateDeriver(configuration: .cscWheel)
        _ = wheel.update(RevolutionData(revolutions: 1, lastEventTime: 6184), receivedAt: 0)
        let speed = wheel.update(RevolutionData(revolutions: 2, lastEventTime: 8016), receivedAt: 1)
        #expect(isClose(speed.revolutionsPerMinute.map { $0 / 60 * 2.15 }, 1.2017, within: 0.0001))
    }

    @Test("CPS-20: crank count and time wrap together: 31.093 rpm")
    func cps20() throws {
        var crank = RevolutionRateDeriver(configuration: .crank)
        let first = try CyclingPowerMeasurement(bytes: hex("20 00 00 00 FF FF FF FF"))
        let second = try CyclingPowerMeasurement(bytes: hex("20 00 2D 00 00 00 B7 07"))
        #expect(crank.update(first.crank!, receivedAt: 0) == .baseline)
        #expect(isClose(crank.update(second.crank!, receivedAt: 1).revolutionsPerMinute, 31.093))
    }

    @Test("Cycling Power wheel time runs at 1/2048 s")
    func cyclingPowerWheelTimeBase() {
        var wheel = RevolutionRateDeriver(configuration: .cyclingPowerWheel)
        _ = wheel.update(RevolutionData(revolutions: 100, lastEventTime: 0), receivedAt: 0)
        #expect(
            wheel.update(RevolutionData(revolutions: 102, lastEventTime: 2048), receivedAt: 1)
                == .rate(revolutionsPerMinute: 120))
    }

    @Test("32-bit wheel counter rolls over forwards")
    mutating func wheelRollover() {
        _ = wheel.update(RevolutionData(revolutions: 0xFFFF_FFFF, lastEventTime: 0), receivedAt: 0)
        #expect(
            wheel.update(RevolutionData(revolutions: 1, lastEventTime: 1024), receivedAt: 1)
                == .rate(revolutionsPerMinute: 120))
    }

    @Test("repeated frames hold the rate, then decay to zero, then recover")
    mutating func staleFrames() {
        _ = crank.update(RevolutionData(revolutions: 10, lastEventTime: 0), receivedAt: 0)
        #expect(
            crank.update(RevolutionData(revolutions: 11, lastEventTime: 1024), receivedAt: 1)
                == .rate(revolutionsPerMinute: 60))
        let stale = RevolutionData(revolutions: 11, lastEventTime: 1024)
        #expect(crank.update(stale, receivedAt: 2) == .held(revolutionsPerMinute: 60))
        #expect(crank.update(stale, receivedAt: 3) == .held(revolutionsPerMinute: 60))
        #expect(crank.update(stale, receivedAt: 4) == .stopped)
        #expect(crank.update(stale, receivedAt: 5) == .stopped)
        #expect(crank.update(stale, receivedAt: 5).revolutionsPerMinute == 0)
        #expect(
            crank.update(RevolutionData(revolutions: 12, lastEventTime: 2048), receivedAt: 6)
                == .rate(revolutionsPerMinute: 60))
    }

    @Test("interleaved counters from two pedals are rejected, never 12,000 rpm")
    mutating func interleavedCounters() {
        var results: [RevolutionRateDeriver.Update] = []
        for step in 0..<10 {
            let fromFirst = step % 2 == 0
            let revolutions = UInt32(fromFirst ? 0x6ED2 : 0x6943) + UInt32(step / 2)
            let time = UInt16(truncatingIfNeeded: 1000 + step * 512)
            results.append(
                crank.update(
                    RevolutionData(revolutions: revolutions, lastEventTime: time), receivedAt: Double(step) * 0.5))
        }
        #expect(results.first == .baseline)
        for update in results.dropFirst() {
            guard case .rejected(.implausibleRate) = update else {
                Issue.record("expected a rejection, got \(update)")
                continue
            }
        }
        #expect(results.compactMap(\.revolutionsPerMinute).isEmpty)
    }

    @Test("a host gap longer than the wrap period is ambiguous and re-bases")
    mutating func longGap() {
        _ = crank.update(RevolutionData(revolutions: 10, lastEventTime: 0), receivedAt: 0)
        #expect(
            crank.update(RevolutionData(revolutions: 11, lastEventTime: 1024), receivedAt: 70)
                == .rejected(.gapLongerThanWrap(seconds: 70)))
        #expect(
            crank.update(RevolutionData(revolutions: 12, lastEventTime: 2048), receivedAt: 71)
                == .rate(revolutionsPerMinute: 60))
    }

    @Test("revolutions without a new event time are rejected")
    mutating func revolutionsWithoutTime() {
        _ = crank.update(RevolutionData(revolutions: 10, lastEventTime: 100), receivedAt: 0)
        #expect(
            crank.update(RevolutionData(revolutions: 12, lastEventTime: 100), receivedAt: 1)
                == .rejected(.revolutionsWithoutTime))
    }

    @Test("reset after reconnect: a sensor that zeroed its counters gives a baseline, not negative speed")
    mutating func resetAfterReconnect() {
        _ = wheel.update(RevolutionData(revolutions: 5000, lastEventTime: 30000), receivedAt: 0)
        _ = wheel.update(RevolutionData(revolutions: 5002, lastEventTime: 31024), receivedAt: 1)
        wheel.reset()
        #expect(wheel.update(RevolutionData(revolutions: 0, lastEventTime: 0), receivedAt: 2) == .baseline)
        #expect(
            wheel.update(RevolutionData(revolutions: 2, lastEventTime: 1024), receivedAt: 3)
                == .rate(revolutionsPerMinute: 120))
    }
}

@Suite("Cumulative counters → increments")
struct CumulativeCounterDeriverTests {
    @Test("Energy Expended: baseline, increments, saturation, reset")
    func energyExpended() {
        var deriver = CumulativeCounterDeriver.energyExpended
        #expect(deriver.update(100) == .baseline)
        #expect(deriver.update(104) == .increment(4))
        #expect(deriver.update(104) == .increment(0))
        #expect(deriver.update(0xFFFF) == .saturated)
        #expect(deriver.update(0xFFFF) == .saturated)
        #expect(deriver.update(3) == .reset(increment: 3))
        #expect(deriver.update(5) == .increment(2))
        #expect(deriver.update(1) == .reset(increment: 1))
    }

    @Test("a saturated first reading is not a baseline to count from")
    func saturatedFirst() {
        var deriver = CumulativeCounterDeriver.energyExpended
        #expect(deriver.update(0xFFFF) == .saturated)
        #expect(deriver.update(2) == .reset(increment: 2))
    }

    @Test("wrapping 24-bit distance adds across the wrap; a big drop is a reset")
    func wrapping() {
        var deriver = CumulativeCounterDeriver(bits: 24, overflow: .wraps)
        #expect(deriver.update(0xFF_FFF0) == .baseline)
        #expect(deriver.update(0x00_0010) == .increment(0x20))
        #expect(deriver.update(0x00_0020) == .increment(0x10))
        deriver.reset()
        #expect(deriver.update(500_000) == .baseline)
        #expect(deriver.update(10) == .reset(increment: 10))
    }
}
