import Foundation
import GATT
import Sensors
import Testing

@testable import Samples

private let source = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "strap")
private let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)

private func frame(_ characteristic: GATTCharacteristic, _ hexText: String) throws -> GATTValue {
    let digits = hexText.filter { !$0.isWhitespace }
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return try GATTValue(characteristic: characteristic, bytes: bytes)
}

@Suite("Decoded frames → quantity samples")
struct MeasurementSamplerTests {
    @Test("heart rate with RR: RR back-dated so the last ends at receipt, contiguous, raw kept")
    func rrBackDating() throws {
        var sampler = MeasurementSampler(source: source)
        let samples = sampler.samples(
            from: try frame(.heartRateMeasurement, "16 42 18 04 70 01"), receivedAt: t0)
        #expect(samples.map(\.type) == [.heartRate, .heartbeatSeries, .heartbeatSeries])
        let heartRate = samples[0]
        #expect(heartRate.quantity == Quantity(unit: .countPerMinute, value: 66))
        #expect(heartRate.start == t0 && heartRate.end == t0)
        #expect(heartRate.metadata.sensorContact == .detected)
        let (first, last) = (samples[1], samples[2])
        #expect(last.end == t0)
        #expect(last.quantity.value == 0.359375)
        #expect(last.start == t0.addingTimeInterval(-0.359375))
        #expect(first.end == last.start)
        #expect(first.start == t0.addingTimeInterval(-0.359375 - 1.0234375))
        #expect(first.metadata.rawRRInterval == 1048)
        #expect(samples.allSatisfy { $0.source == source })
    }

    @Test("HR 0 gives no heart-rate sample; RR still counts")
    func noReading() throws {
        var sampler = MeasurementSampler(source: source)
        #expect(sampler.samples(from: try frame(.heartRateMeasurement, "06 00"), receivedAt: t0).isEmpty)
        let withRR = sampler.samples(from: try frame(.heartRateMeasurement, "16 00 00 04"), receivedAt: t0)
        #expect(withRR.map(\.type) == [.heartbeatSeries])
    }

    @Test(
        "a heart rate outside 20–300 bpm (65535: uint16 noise) is no sample, but counted; HR 0 is no reading; RR stay",
        arguments: [
            (0, false, false), (19, false, true), (20, true, false), (180, true, false), (300, true, false),
            (301, false, true), (65535, false, true),
        ] as [(UInt16, Bool, Bool)])
    func plausibleHeartRates(_ bpm: UInt16, _ sampled: Bool, _ counted: Bool) {
        var sampler = MeasurementSampler(source: source)
        let measurement = HeartRateMeasurement(heartRate: bpm, rrIntervals: [RRInterval(raw: 820)])
        #expect(measurement.isReading == (bpm != 0))
        let samples = sampler.samples(from: .heartRateMeasurement(measurement), receivedAt: t0)
        #expect(samples.filter { $0.type == .heartRate }.map(\.quantity.value) == (sampled ? [Double(bpm)] : []))
        #expect(samples.filter { $0.type == .heartbeatSeries }.count == 1)
        let last: Int? = counted ? Int(bpm) : nil
        #expect(sampler.implausibleHeartRates == (counted ? 1 : 0))
        #expect(sampler.lastImplausibleHeartRate == last)
    }

    @Test("the count of implausible heart rates is exactly the readings refused, and survives a reset")
    func implausibleHeartRateCount() {
        var sampler = MeasurementSampler(source: source)
        let readings: [UInt16] = [19, 20, 300, 301, 65535, 0, 72, 65535]
        var sampled: [Double] = []
        for bpm in readings {
            let measurement = HeartRateMeasurement(heartRate: bpm)
            sampled += sampler.samples(from: .heartRateMeasurement(measurement), receivedAt: t0)
                .filter { $0.type == .heartRate }.map(\.quantity.value)
        }
        #expect(sampled == [20, 300, 72])
        let refused = readings.filter { $0 != 0 && !MeasurementSampler.plausibleHeartRates.contains(Double($0)) }
        #expect(refused == [19, 301, 65535, 65535])
        #expect(sampler.implausibleHeartRates == refused.count)
        #expect(sampler.lastImplausibleHeartRate == 65535)
        sampler.reset()
        #expect(sampler.implausibleHeartRates == 4, "a reconnect forgets baselines, not what was refused")
        // Dropped for no contact by request: refused by policy, not as implausible.
        var dropping = MeasurementSampler(source: source, options: .init(dropsReadingsWithoutContact: true))
        let noContact = HeartRateMeasurement(heartRate: 65535, sensorContact: .notDetected)
        #expect(dropping.samples(from: .heartRateMeasurement(noContact), receivedAt: t0).isEmpty)
        #expect(dropping.implausibleHeartRates == 0)
    }

    @Test(
        "a fitness machine's heart rate under 20 bpm is no sample either, and counted",
        arguments: [(19, false), (20, true)] as [(UInt8, Bool)])
    func plausibleMachineHeartRates(_ bpm: UInt8, _ sampled: Bool) throws {
        var sampler = MeasurementSampler(source: source)
        let bike = sampler.samples(from: .indoorBikeData(IndoorBikeData(heartRate: bpm)), receivedAt: t0)
        #expect(bike.filter { $0.type == .heartRate }.count == (sampled ? 1 : 0))
        // Flags 0x0100: instantaneous speed (12.5 km/h) and heart rate.
        let treadmillData = try TreadmillData(bytes: [0x00, 0x01, 0xE2, 0x04, bpm])
        let treadmill = sampler.samples(from: .treadmillData(treadmillData), receivedAt: t0)
        #expect(treadmill.filter { $0.type == .heartRate }.count == (sampled ? 1 : 0))
        #expect(sampler.implausibleHeartRates == (sampled ? 0 : 2))
    }

    @Test("no-contact readings are kept tagged by default, dropped when asked")
    func contactPolicy() throws {
        var keeping = MeasurementSampler(source: source)
        let kept = keeping.samples(from: try frame(.heartRateMeasurement, "14 AA 8D 00"), receivedAt: t0)
        #expect(kept.map(\.type) == [.heartRate, .heartbeatSeries])
        #expect(kept[0].metadata.sensorContact == .notDetected)
        var dropping = MeasurementSampler(source: source, options: .init(dropsReadingsWithoutContact: true))
        #expect(dropping.samples(from: try frame(.heartRateMeasurement, "14 AA 8D 00"), receivedAt: t0).isEmpty)
    }

    @Test("Energy Expended becomes increments spanning the readings; saturation adds nothing; reset counts")
    func energyIncrements() throws {
        var sampler = MeasurementSampler(source: source)
        func energy(_ hexText: String, at seconds: Double) throws -> [QuantitySample] {
            sampler.samples(from: try frame(.heartRateMeasurement, hexText), receivedAt: t0.addingTimeInterval(seconds))
                .filter { $0.type == .activeEnergyBurned }
        }
        #expect(try energy("08 46 0A 00", at: 0).isEmpty)
        let increment = try energy("08 46 0E 00", at: 10)
        #expect(increment.map(\.quantity) == [Quantity(unit: .kilojoule, value: 4)])
        #expect(increment.first?.start == t0 && increment.first?.end == t0.addingTimeInterval(10))
        #expect(try energy("08 46 FF FF", at: 20).isEmpty)
        let afterReset = try energy("08 46 02 00", at: 30)
        #expect(afterReset.map(\.quantity.value) == [2])
        #expect(afterReset.first?.metadata.counterReset == true)
    }

    @Test("battery, cycling power with crank cadence and wheel speed, FTMS kcal as kJ")
    func otherCharacteristics() throws {
        var sampler = MeasurementSampler(source: source, options: .init(wheelCircumference: 2.0))
        let battery = sampler.samples(from: try frame(.batteryLevel, "0F"), receivedAt: t0)
        #expect(battery.map(\.quantity) == [Quantity(unit: .percent, value: 15)])

        _ = sampler.samples(
            from: try frame(.cyclingPowerMeasurement, "30 00 C8 00 64 00 00 00 00 00 0A 00 00 00"), receivedAt: t0)
        let power = sampler.samples(
            from: try frame(.cyclingPowerMeasurement, "30 00 D2 00 66 00 00 00 00 08 0B 00 00 04"),
            receivedAt: t0.addingTimeInterval(1))
        #expect(power.map(\.type) == [.cyclingPower, .cyclingCadence, .cyclingSpeed])
        #expect(power[0].quantity.value == 210)
        #expect(power[1].quantity.value == 60)
        #expect(power[2].quantity.value == 4.0, "2 wheel revs in 2048/2048 s on a 2 m wheel")

        var bike = MeasurementSampler(source: source)
        _ = bike.samples(from: try frame(.indoorBikeData, "10 01 00 00 64 00 00 0A 00 00 00 00"), receivedAt: t0)
        let later = bike.samples(
            from: try frame(.indoorBikeData, "10 01 00 00 6E 00 00 0C 00 00 00 00"),
            receivedAt: t0.addingTimeInterval(5))
        #expect(later.filter { $0.type == .distance }.map(\.quantity.value) == [10])
        let energy = later.filter { $0.type == .activeEnergyBurned }
        #expect(energy.count == 1)
        #expect(abs(energy[0].quantity.value - 2 * 4.184) < 1e-9)
        #expect(energy[0].quantity.unit == .kilojoule)
    }

    @Test("RSC: speed, step cadence with a per-device scale, distance increments in metres")
    func running() throws {
        var sampler = MeasurementSampler(source: source, options: .init(runningCadenceScale: 0.5))
        let first = sampler.samples(from: try frame(.rscMeasurement, "02 00 03 AA 64 00 00 00"), receivedAt: t0)
        #expect(first.map(\.type) == [.runningSpeed, .stepCadence])
        #expect(first[1].quantity.value == 85)
        let second = sampler.samples(
            from: try frame(.rscMeasurement, "02 00 03 AA 82 00 00 00"), receivedAt: t0.addingTimeInterval(1))
        #expect(second.last?.type == .distance)
        #expect(second.last?.quantity.value == 3.0)
    }

    @Test("reset after reconnect forgets counter baselines")
    func resetForgetsBaselines() throws {
        var sampler = MeasurementSampler(source: source)
        _ = sampler.samples(from: try frame(.heartRateMeasurement, "08 46 0A 00"), receivedAt: t0)
        sampler.reset()
        let afterReconnect = sampler.samples(from: try frame(.heartRateMeasurement, "08 46 0E 00"), receivedAt: t0)
        #expect(afterReconnect.filter { $0.type == .activeEnergyBurned }.isEmpty)
    }
}
