import Foundation
import Samples
import Sensors
import Testing

@testable import WorkoutStore

@Suite("Where a simulated run starts: after the samples an earlier run left ahead")
struct SimulationStartTests {
    private static let strap = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "A")
    private static let now = Date(timeIntervalSinceReferenceDate: 800_006_400.25)

    /// A sample of `type` from `start` to `end` seconds after `now`.
    private static func sample(_ type: QuantityType, _ start: Double, _ end: Double) -> QuantitySample {
        try! QuantitySample(
            type: type, quantity: Quantity(unit: type.canonicalUnit, value: 1),
            start: now.addingTimeInterval(start), end: now.addingTimeInterval(end), source: strap)
    }

    static let cases: [(label: String, samples: [QuantitySample], expected: Double?)] = [
        ("an empty store", [], nil),
        ("samples before now", [sample(.heartRate, -30, -30), sample(.activeEnergyBurned, -20, -10)], nil),
        ("a sample ending at now", [sample(.heartRate, 0, 0)], nil),
        ("one ahead, rounded up", [sample(.heartRate, -5, -5), sample(.heartRate, 3_600.5, 3_600.5)], 3_600.75),
        ("the latest end of every type", [sample(.heartRate, 60, 60), sample(.activeEnergyBurned, 50, 90.2)], 90.75),
        (
            "the latest end, whichever type comes first",
            [sample(.heartRate, 120, 120), sample(.activeEnergyBurned, 80, 90)], 120.75
        ),
        ("a day ahead", [sample(.heartRate, 86_400 * 2, 86_400 * 2)], 172_800.75),
    ]

    @Test("the end of the last sample after now, rounded up to the second", arguments: cases.indices)
    func endOfSamples(index: Int) async throws {
        let (label, samples, expected) = Self.cases[index]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("start-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try WorkoutStore(path: directory.appendingPathComponent("store.sqlite").path)
        if !samples.isEmpty { _ = try await store.append(samples, workout: nil) }
        let end = await store.endOfSamples(after: Self.now)
        #expect(end == expected.map { Self.now.addingTimeInterval($0) }, "\(label)")
    }
}
