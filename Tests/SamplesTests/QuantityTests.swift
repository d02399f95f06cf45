import Foundation
import GATT
import Sensors
import Testing

@testable import Samples

@Suite("Quantities and units")
struct QuantityTests {
    @Test("units of one dimension convert; across dimensions they throw")
    func conversion() throws {
        #expect(try Quantity(unit: .kilocalorie, value: 1).doubleValue(for: .kilojoule) == 4.184)
        #expect(try Quantity(unit: .kilojoule, value: 4.184).doubleValue(for: .kilocalorie) == 1)
        #expect(abs(try Quantity(unit: .kilometersPerHour, value: 36).doubleValue(for: .metersPerSecond) - 10) < 1e-12)
        #expect(try Quantity(unit: .millisecond, value: 850).doubleValue(for: .second) == 0.85)
        #expect(try Quantity(unit: .kilometer, value: 1.5).doubleValue(for: .meter) == 1500)
        #expect(try Quantity(unit: .percent, value: 50).doubleValue(for: .percent) == 50)
        #expect(try Quantity(unit: .countPerMinute, value: 90).doubleValue(for: .revolutionsPerMinute) == 90)
        #expect(throws: QuantityError.incompatibleUnits(.watt, .kilojoule)) {
            _ = try Quantity(unit: .watt, value: 1).doubleValue(for: .kilojoule)
        }
    }

    @Test("every type has a canonical unit and an aggregation style")
    func types() {
        #expect(QuantityType.heartRate.canonicalUnit == .countPerMinute)
        #expect(QuantityType.heartbeatSeries.canonicalUnit == .second)
        #expect(QuantityType.activeEnergyBurned.aggregationStyle == .cumulative)
        #expect(QuantityType.distance.aggregationStyle == .cumulative)
        #expect(QuantityType.cyclingPower.aggregationStyle == .discrete)
        for type in QuantityType.allCases {
            #expect(QuantityUnit(symbol: type.canonicalUnit.symbol) == type.canonicalUnit)
        }
    }

    @Test("a type's ordinal is its place among allCases; equality and hashing go by it, one type per key")
    func ordinals() {
        for (index, type) in QuantityType.allCases.enumerated() {
            #expect(type.ordinal == index, "\(type)")
            #expect(QuantityType(rawValue: type.rawValue) == type)
        }
        var counts: [QuantityType: Int] = [:]
        for type in QuantityType.allCases + QuantityType.allCases { counts[type, default: 0] += 1 }
        #expect(counts.count == QuantityType.allCases.count)
        #expect(counts.values.allSatisfy { $0 == 2 })
        #expect(Set(QuantityType.allCases.map(\.hashValue)).count == QuantityType.allCases.count)
    }

    @Test("a sample refuses a unit of the wrong dimension and an end before its start")
    func sampleValidation() throws {
        let source = SampleSource(adapter: "mock", address: "AA:BB:CC:DD:EE:FF")
        let now = Date(timeIntervalSinceReferenceDate: 1000)
        #expect(throws: QuantityError.unitNotAllowed(.watt, for: .heartRate)) {
            _ = try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .watt, value: 1), start: now, end: now, source: source)
        }
        #expect(throws: QuantityError.endBeforeStart) {
            _ = try QuantitySample(
                type: .activeEnergyBurned, quantity: Quantity(unit: .kilojoule, value: 1), start: now,
                end: now.addingTimeInterval(-1), source: source)
        }
        let energy = try QuantitySample(
            type: .activeEnergyBurned, quantity: Quantity(unit: .kilocalorie, value: 1), start: now,
            end: now.addingTimeInterval(60), source: source)
        #expect(energy.canonicalValue == 4.184)
        #expect(energy.duration == 60)
    }

    @Test("samples round-trip through JSON; units encode as symbols")
    func codable() throws {
        let sample = try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: 72),
            start: Date(timeIntervalSinceReferenceDate: 0), end: Date(timeIntervalSinceReferenceDate: 0),
            source: SampleSource(adapter: "hci0", address: "AA:BB:CC:DD:EE:FF", name: "Polar H10"),
            metadata: SampleMetadata(sensorContact: .detected))
        let data = try JSONEncoder().encode(sample)
        #expect(String(decoding: data, as: UTF8.self).contains("\"count\\/min\""))
        #expect(try JSONDecoder().decode(QuantitySample.self, from: data) == sample)
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(QuantityUnit.self, from: Data("\"furlong\"".utf8))
        }
    }

    @Test("a source's identity is adapter + address; the name is for display")
    func sourceIdentity() {
        let named = SampleSource(adapter: "hci0", address: "AA:BB:CC:DD:EE:FF", name: "Polar H10")
        #expect(named == SampleSource(adapter: "hci0", address: "AA:BB:CC:DD:EE:FF"))
        #expect(named != SampleSource(adapter: "hci1", address: "AA:BB:CC:DD:EE:FF"))
        #expect(named.description == "Polar H10 (hci0/AA:BB:CC:DD:EE:FF)")
    }
}
