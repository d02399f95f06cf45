import Foundation
import Logging
import Samples
import Sensors
import Testing
import WorkoutStore

@testable import Bridge

@Suite("The daemon's simulator starts its clock after what the store holds")
struct SimulatorAdapterFactoryTests {
    private static let logger = Logger(label: "simulator-factory") { _ in SwiftLogNoOpLogHandler() }

    /// The clock's reading just after the factory made the adapter on a store holding `samples`.
    private static func clockReading(storing samples: [QuantitySample]) async throws -> Date {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("factory-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try WorkoutStore(path: directory.appendingPathComponent("store.sqlite").path)
        if !samples.isEmpty { _ = try await store.append(samples, workout: nil) }
        let assembly = try await SimulatorAdapterFactory(scenario: nil, seed: 1, speed: 1).make(
            BridgeConfiguration(), store: store, logger: logger)
        let reading = assembly.clock.now()
        await assembly.stop()
        return reading
    }

    private static func heartRate(at date: Date) throws -> QuantitySample {
        try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: 120), start: date, end: date,
            source: SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "A"))
    }

    @Test("a restart after a run faster than real time goes on after that run's last sample")
    func afterSamplesAhead() async throws {
        // An hour ahead: a `speed = 60` daemon stopped after a minute leaves this.
        let ahead = Date().addingTimeInterval(3_600)
        let reading = try await Self.clockReading(storing: [try Self.heartRate(at: ahead)])
        #expect(reading >= ahead)
        // Only the real time the factory took has passed since (speed 1).
        #expect(reading < ahead.addingTimeInterval(600))
    }

    @Test("with nothing ahead the clock reads the wall clock")
    func wallClockWhenNothingIsAhead() async throws {
        let before = Date()
        let reading = try await Self.clockReading(storing: [try Self.heartRate(at: before.addingTimeInterval(-60))])
        #expect(reading >= before)
        #expect(reading <= Date())
    }
}
