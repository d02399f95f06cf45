import LabStreaming
import SensorSimulator
import Testing

@Suite("ClockOffsetEstimate: liblsl's clock minus the events' clock, steady under preemption")
struct ClockOffsetEstimateTests {
    /// A reading: liblsl's clock before, the events' clock, liblsl's clock after (s).
    struct Reading: Sendable, CustomTestStringConvertible {
        var before: Double
        var events: Double
        var after: Double
        var testDescription: String { "[\(before), \(events), \(after)]" }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var readings: [Reading]
        /// The offset after each reading.
        var offsets: [Double]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "the first reading is taken, at its bracket's middle",
            readings: [.init(before: 100, events: 10, after: 100.002)], offsets: [90.001]),
        Case(
            name: "a preempted reading (a wide bracket) does not move it",
            readings: [
                .init(before: 100, events: 10, after: 100.0002),
                .init(before: 101, events: 11, after: 101.080),
            ],
            offsets: [90.0001, 90.0001]),
        Case(
            name: "a tighter reading is taken",
            readings: [
                .init(before: 100, events: 10, after: 100.040),
                .init(before: 101, events: 11.001, after: 101.0002),
            ],
            offsets: [90.020, 89.9991]),
        Case(
            name: "a looser reading that agrees is not",
            readings: [
                .init(before: 100, events: 10, after: 100.0002),
                .init(before: 101, events: 10.9995, after: 101.002),
            ],
            offsets: [90.0001, 90.0001]),
        Case(
            name: "the events' clock stepped by a second: followed at once",
            readings: [
                .init(before: 100, events: 10, after: 100.0002),
                .init(before: 101, events: 12, after: 101.0002),
            ],
            offsets: [90.0001, 89.0001]),
        Case(
            name: "a slew within the tolerance is not followed; past it, it is",
            readings: [
                .init(before: 100, events: 10, after: 100.0002),
                .init(before: 101, events: 11.0015, after: 101.0002),
                .init(before: 102, events: 12.0025, after: 102.0002),
            ],
            offsets: [90.0001, 90.0001, 89.9976]),
        Case(
            name: "a bracket that runs backwards counts as none",
            readings: [.init(before: 100.001, events: 10, after: 100)], offsets: [90.001]),
    ]

    @Test("readings and the offset each leaves", arguments: cases)
    func offsets(_ testCase: Case) {
        var estimate = ClockOffsetEstimate()
        for (reading, expected) in zip(testCase.readings, testCase.offsets) {
            let offset = estimate.read(lslBefore: reading.before, events: reading.events, lslAfter: reading.after)
            #expect(abs(offset - expected) < 1e-9, "\(reading): \(offset), not \(expected)")
            #expect(estimate.offset == offset)
        }
    }

    @Test("one look in ten preempted for up to 100 ms: the offset stays within 0.1 ms")
    func preemptedReadingsKeepItSteady() {
        var estimate = ClockOffsetEstimate()
        var generator = SeededGenerator(seed: 7)
        let truth = 90.0
        var offsets: [Double] = []
        for second in 0..<10_000 {
            let events = Double(second)
            // Every tenth look is preempted for up to 100 ms between the events' clock and liblsl's.
            let delay = second % 10 == 5 ? Double(generator.next() % 100_000) / 1e6 : 0.000_05
            let before = events + truth - 0.000_01
            offsets.append(estimate.read(lslBefore: before, events: events, lslAfter: before + 0.000_01 + delay))
        }
        #expect(offsets.allSatisfy { abs($0 - truth) < 0.0001 }, "\(offsets.min()!)…\(offsets.max()!)")
    }
}
