import Testing

@testable import GATT

/// Manufacturer data from Polar's BLE SDK (polarofficial/polar-ble-sdk unless named otherwise),
/// with the heart rate the SDK reports for it and what our decoder makes of it.
struct PolarSDKVector: CustomTestStringConvertible, Sendable {
    /// What our strict decoder must give.
    enum Outcome: Sendable {
        case decoded(PolarHeartRateBroadcast)
        case refused(AdvertisementDecodingError.Reason)
    }

    /// Where the bytes are in Polar's SDK: the file, and the test or the place in the code.
    let source: String
    /// The company identifier in front of the data.
    var company: UInt16 = 0x006B
    /// The manufacturer data after the company identifier.
    let hex: String
    /// The heart rate the SDK shows for it (`hrForDisplay`, `hrValueForDisplay`); `nil` when the
    /// SDK finds no heart-rate data in it.
    let sdkHeartRate: UInt8?
    let outcome: Outcome

    var testDescription: String { source }
}

let polarSDKVectors: [PolarSDKVector] = [
    // Decoded.
    .init(
        source:
            "iOS BleAdvertisementContent.swift, processManufacturerData: the OH1 example (GPB block, then heart rate)",
        hex: "72 06 7F 44 37 00 00 00 33 00 3C", sdkHeartRate: 60,
        outcome: .decoded(.init(heartRate: 60, skinContact: true, frameCounter: 4))),
    .init(
        source: "BleAdvertisementContentTest (Android: 'test parse hr from manufacturer data SAGRFC31 format';"
            + " iOS: testParseHrFromManufacturerDataSAGRFC31format)",
        hex: "2B 0B B6 AC", sdkHeartRate: 172,
        outcome: .decoded(.init(heartRate: 172, fastAverageHeartRate: 182, skinContact: true, frameCounter: 2))),
    // Refused: the SDK shows 0, or finds no heart rate.
    .init(
        source: "BleAdvertisementContentTest (Android: 'test parse hr from manufacturer data SAGRFC23 format';"
            + " iOS: testParseHrFromManufacturerDataSAGRFC23format): two GPB blocks, then a heart rate of 0",
        hex: "72 08 97 C9 C3 00 00 00 00 00  7A 01 03  33 00 00", sdkHeartRate: 0, outcome: .refused(.noReading)),
    .init(
        source: "BleAdvertisementContentTest (Android: 'test parse hr from manufacturer data without hr';"
            + " iOS: testParseHrFromManufacturerDataWithoutHr): one GPB block only",
        hex: "72 08 97 C9 C3 00 00 00 00 00", sdkHeartRate: nil, outcome: .refused(.noHeartRateBlock)),
    .init(
        source: "BleAdvertisementContentTest (Android: 'test parse hr from manufacturer data not Polar adv';"
            + " iOS: testParseHrFromManufacturerDataNotPolarAdv): company 0x016B",
        company: 0x016B, hex: "72 08 97 C9 C3 00 00 00 00 00 7A 01 03 33 00 00", sdkHeartRate: nil,
        outcome: .refused(.otherCompany(0x016B))),
    // The fork po4yka/polar-ble-sdk, testdata/golden-vectors/protocol/advertisement/*.json.
    .init(
        source: "po4yka/polar-ble-sdk golden vector manufacturer-polar-id-only.json: the company identifier alone",
        hex: "", sdkHeartRate: nil, outcome: .refused(.unknownLength(0, known: [3, 4]))),
    .init(
        source: "po4yka/polar-ble-sdk golden vector manufacturer-polar-truncated-hr-candidate.json: one byte",
        hex: "00", sdkHeartRate: nil, outcome: .refused(.unknownLength(1, known: [3, 4]))),
    .init(
        source: "po4yka/polar-ble-sdk golden vector manufacturer-polar-unknown-gpb-segment.json: an empty GPB block",
        hex: "C0 00", sdkHeartRate: nil, outcome: .refused(.noHeartRateBlock)),
    .init(
        source: "po4yka/polar-ble-sdk golden vector manufacturer-polar-gpb-missing-length-platform-policy.json:"
            + " a GPB block without its length byte (Polar's iOS walk reads past the end)",
        hex: "40", sdkHeartRate: nil, outcome: .refused(.truncatedBlock(offset: 0, needed: 2, available: 1))),
    .init(
        source: "po4yka/polar-ble-sdk golden vector manufacturer-unknown-company.json: company 0xFFFF",
        company: 0xFFFF, hex: "01 02 03 04", sdkHeartRate: nil, outcome: .refused(.otherCompany(0xFFFF))),
    .init(
        source: "po4yka/polar-ble-sdk golden vector manufacturer-hr-sagrfc23.json (the SAGRFC23 bytes again)",
        hex: "72 08 97 C9 C3 00 00 00 00 00 7A 01 03 33 00 00", sdkHeartRate: 0, outcome: .refused(.noReading)),
    .init(
        source: "po4yka/polar-ble-sdk golden vector manufacturer-no-hr.json (the 'without hr' bytes again)",
        hex: "72 08 97 C9 C3 00 00 00 00 00", sdkHeartRate: nil, outcome: .refused(.noHeartRateBlock)),
]

/// A vector of Polar's `BlePolarHrAdvertisementTest`, which feeds one heart-rate block straight to
/// the field reader, below the SDK's block walk. All set the data-type bit (0x40).
struct PolarFieldVector: CustomTestStringConvertible, Sendable {
    let source: String
    let hex: String
    /// The SDK's slow average (the value shown) and fast average.
    let slow: UInt8
    let fast: UInt8
    let frameCounter: UInt8
    let skinContact: Bool

    var testDescription: String { "\(source): \(hex)" }
}

let polarFieldVectors: [PolarFieldVector] = [
    .init(source: "test battery status", hex: "FE FE FE FE", slow: 254, fast: 254, frameCounter: 7, skinContact: true),
    .init(source: "test battery status", hex: "FF FE FE FE", slow: 254, fast: 254, frameCounter: 7, skinContact: true),
    .init(source: "test frame counter", hex: "E3 FE FE FE", slow: 254, fast: 254, frameCounter: 0, skinContact: true),
    .init(source: "test frame counter", hex: "E7 FE FE FE", slow: 254, fast: 254, frameCounter: 1, skinContact: true),
    .init(source: "test frame counter", hex: "FF FE FE FE", slow: 254, fast: 254, frameCounter: 7, skinContact: true),
    .init(source: "test status flag", hex: "7F FE FE FE", slow: 254, fast: 254, frameCounter: 7, skinContact: true),
    .init(
        source: "test kHz code (Android)", hex: "FF 00 FF FF", slow: 255, fast: 255, frameCounter: 7, skinContact: true),
    .init(
        source: "test kHz code (Android)", hex: "FF FF FF FF", slow: 255, fast: 255, frameCounter: 7, skinContact: true),
    .init(source: "testKhzCode (iOS)", hex: "FF 00 FE FE", slow: 254, fast: 254, frameCounter: 7, skinContact: true),
    .init(source: "testKhzCode (iOS)", hex: "FF FF FE FE", slow: 254, fast: 254, frameCounter: 7, skinContact: true),
    .init(
        source: "test fast and slow avg hr", hex: "FF FF 00 00", slow: 0, fast: 0, frameCounter: 7, skinContact: true),
    .init(
        source: "test fast and slow avg hr", hex: "FF FF FF FF", slow: 255, fast: 255, frameCounter: 7,
        skinContact: true),
    .init(source: "test fast and slow avg hr", hex: "FF FF 00", slow: 0, fast: 0, frameCounter: 7, skinContact: true),
    .init(
        source: "test fast and slow avg hr", hex: "FF FF FF", slow: 255, fast: 255, frameCounter: 7, skinContact: true),
]

@Suite("Polar's SDK examples and vectors, decoded or refused by name")
struct PolarAdvertisementVectorTests {
    private func decode(_ company: UInt16, _ bytes: [UInt8]) -> PolarSDKVector.Outcome {
        do {
            return .decoded(try PolarHeartRateBroadcast(company: company, bytes: bytes))
        } catch {
            #expect(error.bytes == bytes && error.company == company)
            #expect(!error.description.isEmpty)
            return .refused(error.reason)
        }
    }

    @Test("each example reads as Polar's SDK reads it: its heart rate, or a named refusal", arguments: polarSDKVectors)
    func sdkVector(_ vector: PolarSDKVector) {
        let outcome = decode(vector.company, hex(vector.hex))
        switch (outcome, vector.outcome) {
        case (.decoded(let broadcast), .decoded(let expected)):
            #expect(broadcast == expected)
            #expect(broadcast.heartRate == vector.sdkHeartRate, "the heart rate Polar's SDK shows")
        case (.refused(let reason), .refused(let expected)):
            #expect(reason == expected)
            // Refused only where the SDK shows nothing, or 0 (no reading).
            #expect(vector.sdkHeartRate == nil || (vector.sdkHeartRate == 0 && reason == .noReading))
        default:
            Issue.record("\(vector.source): \(outcome), expected \(vector.outcome)")
        }
    }

    @Test(
        "BlePolarHrAdvertisementTest's blocks set the data-type bit: refused whole; with it clear, the SDK's fields",
        arguments: polarFieldVectors)
    func fieldVector(_ vector: PolarFieldVector) {
        var bytes = hex(vector.hex)
        // Polar's Android walk reads these as GPB blocks too; only its field reader, fed directly, sees heart rate.
        guard case .refused(.notHeartRate) = decode(0x006B, bytes) else {
            Issue.record("\(vector.hex) with the data-type bit set must be refused as not heart rate")
            return
        }
        bytes[0] &= ~PolarHeartRateBroadcast.dataTypeBit
        switch decode(0x006B, bytes) {
        case .decoded(let broadcast):
            #expect(broadcast.heartRate == vector.slow)
            #expect(broadcast.fastAverageHeartRate == (bytes.count == 4 ? vector.fast : nil))
            #expect(broadcast.frameCounter == vector.frameCounter)
            #expect(broadcast.skinContact == vector.skinContact)
        case .refused(let reason):
            #expect(reason == .noReading && vector.slow == 0, "\(vector.hex): \(reason)")
        }
    }

    @Test("100,000 random and mutated manufacturer data: decoded within the data, or refused with a bounded reason")
    func properties() async {
        var generator = SplitMix64(seed: 0x006B)
        let seeds = polarSDKVectors.map { hex($0.hex) } + polarFieldVectors.map { hex($0.hex) }
        for index in 0..<100_000 {
            // Shares CI's two pool threads with the tests that wait (see WaitBudget).
            if index % 1_000 == 0 { await Task.yield() }
            var bytes = seeds.randomElement(using: &generator)!
            switch Int.random(in: 0..<4, using: &generator) {
            case 0 where !bytes.isEmpty:
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^=
                    1 << UInt8.random(in: 0...7, using: &generator)
            case 1 where !bytes.isEmpty:
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
            case 2:
                bytes += (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            default:
                bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            }
            switch decode(0x006B, bytes) {
            case .decoded(let broadcast):
                // The heart-rate block runs to the end: the shown value is the last byte.
                let ok =
                    broadcast.heartRate == bytes.last && broadcast.heartRate > 0
                    && (broadcast.fastAverageHeartRate == nil
                        || broadcast.fastAverageHeartRate == bytes[bytes.count - 2])
                    && (try? PolarHeartRateBroadcast(company: 0x006B, bytes: broadcast.encoded()))?.heartRate
                        == broadcast.heartRate
                if !ok {
                    Issue.record("\(bytes) → \(broadcast)")
                    return
                }
            case .refused(.unknownLength(let length, _)) where length <= bytes.count && ![3, 4].contains(length):
                break
            case .refused(.truncatedBlock(let offset, let needed, let available))
            where offset < bytes.count && available == bytes.count - offset && needed > available:
                break
            case .refused(.notHeartRate) where [3, 4].contains(bytes.count):
                break
            case .refused(.noHeartRateBlock), .refused(.noReading):
                break
            case .refused(let reason):
                Issue.record("\(bytes): a reason that does not fit the data: \(reason)")
                return
            }
        }
    }
}
