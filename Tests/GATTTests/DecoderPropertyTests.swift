import Testing

@testable import GATT

/// Seeds of valid frames per characteristic, mutated by the property test.
private let seedFrames: [GATTCharacteristic: [String]] = [
    .heartRateMeasurement: heartRateVectors.map(\.hex),
    .cyclingPowerMeasurement: [
        "30 00 D2 04 FF FF FF FF 03 3F FF 07 E7 0F", "31 08 94 01 6E 39 30 00 00 00 10 90 01 00 08 15 00",
        "00 01 64 00 B4 A0 05", "FF 1F 10 00 " + repeated("11", 30),
    ],
    .cscMeasurement: ["03 39 30 00 00 E8 03 59 01 D0 07", "02 59 01 D0 07", "00"],
    .rscMeasurement: ["07 00 03 12 56 00 01 00 00 F0", "00 80 02 B4"],
    .indoorBikeData: ["54 02 CA 0C A0 00 D3 A4 00 2C 01 8F", "FE 1F " + repeated("00", 28), "45 00 B0 00 40 00"],
    .treadmillData: [
        "02 01 E2 04 B0 04 9B", "60 01 E2 04 0A 00 0B 00 96", "84 04 E8 03 10 27 00 64 00 58 02 0A 3C 00",
    ],
    .batteryLevel: ["64"],
    .bodySensorLocation: ["01"],
    .manufacturerName: ["50 6F 6C 61 72 00 00"],
    .heartRateControlPoint: ["01"],
]

/// A random frame (0–24 bytes) or a mutation of a seed: bit flips, truncation, extension, byte swaps.
private func frame(for characteristic: GATTCharacteristic, using generator: inout SplitMix64) -> [UInt8] {
    let seeds = seedFrames[characteristic] ?? []
    if seeds.isEmpty || Bool.random(using: &generator) {
        return (0..<Int.random(in: 0...24, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
    var bytes = hex(seeds.randomElement(using: &generator)!)
    switch Int.random(in: 0..<4, using: &generator) {
    case 0 where !bytes.isEmpty:
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= 1 << UInt8.random(in: 0...7, using: &generator)
        }
    case 1 where !bytes.isEmpty:
        bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
    case 2:
        bytes += (0..<Int.random(in: 1...4, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator)
        }
    default:
        if bytes.count >= 2 { bytes.swapAt(0, Int.random(in: 1..<bytes.count, using: &generator)) }
    }
    return bytes
}

@Suite("Decoder properties over random and mutated frames")
struct DecoderPropertyTests {
    static let framesPerDecoder = 100_000
    static let decoders: [GATTCharacteristic] = [
        .heartRateMeasurement, .bodySensorLocation, .batteryLevel, .manufacturerName, .cyclingPowerMeasurement,
        .cscMeasurement, .rscMeasurement, .indoorBikeData, .treadmillData, .heartRateControlPoint,
    ]

    @Test(
        "100,000 frames per decoder: decode or a typed error inside the frame; decode∘encode is the identity",
        arguments: decoders)
    func neverCrashes(_ characteristic: GATTCharacteristic) async {
        var generator = SplitMix64(seed: UInt64(characteristic.rawValue))
        var decoded = 0
        var refused = 0
        for index in 0..<Self.framesPerDecoder {
            // Shares CI's two pool threads with the tests that wait (see WaitBudget).
            if index % 1_000 == 0 { await Task.yield() }
            let bytes = frame(for: characteristic, using: &generator)
            do {
                let value = try GATTValue(characteristic: characteristic, bytes: bytes)
                decoded += 1
                if let reencoded = value.encoded {
                    let again = try GATTValue(characteristic: characteristic, bytes: reencoded)
                    if again != value {
                        Issue.record("\(characteristic.name): \(bytes) → \(value) → \(reencoded) → \(again)")
                        return
                    }
                    if reencoded.count > bytes.count {
                        Issue.record("\(characteristic.name): encoding grew \(bytes) to \(reencoded)")
                        return
                    }
                }
            } catch {
                refused += 1
                if error.characteristic != characteristic || error.offset < 0 || error.offset > bytes.count
                    || error.frameLength != bytes.count || error.description.isEmpty
                {
                    Issue.record("\(characteristic.name): bad error \(error) for \(bytes)")
                    return
                }
            }
        }
        #expect(decoded + refused == Self.framesPerDecoder)
        // Both paths must be exercised, or the generator is not testing anything.
        #expect(decoded > 1000)
        #expect(refused > 1000)
    }

    @Test("canonical Heart Rate frames re-encode byte for byte")
    func heartRateExactRoundTrip() async throws {
        var generator = SplitMix64(seed: 42)
        for index in 0..<Self.framesPerDecoder {
            if index % 1_000 == 0 { await Task.yield() }
            let measurement = HeartRateMeasurement(
                heartRate: UInt16.random(in: 0...400, using: &generator),
                sensorContact: SensorContact.allCases.randomElement(using: &generator)!,
                energyExpended: Bool.random(using: &generator)
                    ? UInt16.random(in: 0...UInt16.max, using: &generator) : nil,
                rrIntervals: (0..<Int.random(in: 0...9, using: &generator)).map { _ in
                    RRInterval(raw: UInt16.random(in: 0...UInt16.max, using: &generator))
                })
            let bytes = measurement.encoded()
            let decoded = try HeartRateMeasurement(bytes: bytes)
            #expect(decoded == measurement)
            #expect(decoded.encoded() == bytes)
        }
    }
}
