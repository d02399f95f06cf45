import Testing

@testable import GATT

/// A Heart Rate Measurement test vector that decodes.
struct HeartRateVector: CustomTestStringConvertible, Sendable {
    let id: String
    let hex: String
    let heartRate: UInt16
    var format: HeartRateMeasurement.ValueFormat = .uint8
    var contact: SensorContact = .notSupported
    var energy: UInt16? = nil
    var rr: [UInt16] = []

    var testDescription: String { id }
}

/// A vector the strict decoder refuses, with the field, offset and reason it must name.
struct HeartRateErrorVector: CustomTestStringConvertible, Sendable {
    let id: String
    let hex: String
    let field: String
    let offset: Int
    let reason: GATTDecodingError.Reason

    var testDescription: String { id }
}

let heartRateVectors: [HeartRateVector] = [
    .init(id: "HR-01", hex: "00 55", heartRate: 85),
    .init(id: "HR-02", hex: "04 FF", heartRate: 255, contact: .notDetected),
    .init(id: "HR-03", hex: "1E 55 32 00 21 00", heartRate: 85, contact: .detected, energy: 50, rr: [33]),
    .init(
        id: "HR-04", hex: "1F 01 01 32 01 01 00 02 01 FF FF", heartRate: 257, format: .uint16, contact: .detected,
        energy: 306, rr: [1, 258, 65535]),
    .init(id: "HR-06", hex: "01 2C 01", heartRate: 300, format: .uint16),
    .init(id: "HR-07", hex: "09 2C 01 D0 07", heartRate: 300, format: .uint16, energy: 2000),
    .init(id: "HR-08", hex: "10 43 72 03", heartRate: 67, rr: [882]),
    .init(id: "HR-09", hex: "10 67 72 03 8A 03 95 04", heartRate: 103, rr: [882, 906, 1173]),
    .init(id: "HR-10", hex: "18 43 D0 07 72 03", heartRate: 67, energy: 2000, rr: [882]),
    .init(id: "HR-11", hex: "06 43", heartRate: 67, contact: .detected),
    .init(id: "HR-12", hex: "02 50", heartRate: 80, contact: .notSupported),
    .init(id: "HR-13", hex: "0E 4B 80 00", heartRate: 75, contact: .detected, energy: 128),
    .init(id: "HR-14", hex: "10 5A 00 08 00 10", heartRate: 90, rr: [2048, 4096]),
    .init(id: "HR-15", hex: "14 AA 8D 00", heartRate: 170, contact: .notDetected, rr: [141]),
    .init(id: "HR-16", hex: "1C AA 8D 00 8D 00", heartRate: 170, contact: .notDetected, energy: 141, rr: [141]),
    .init(id: "HR-24", hex: "16 42 18 04 70 01", heartRate: 66, contact: .detected, rr: [1048, 368]),
    .init(id: "HR-25", hex: "10 46 " + repeated("00 04", 9), heartRate: 70, rr: Array(repeating: 1024, count: 9)),
    .init(
        id: "HR-26", hex: "19 2C 01 0A 00 " + repeated("00 04", 7), heartRate: 300, format: .uint16, energy: 10,
        rr: Array(repeating: 1024, count: 7)),
    .init(id: "HR-31", hex: "E0 46", heartRate: 70),
    .init(id: "HR-32", hex: "06 00", heartRate: 0, contact: .detected),
    .init(id: "HR-33", hex: "08 46 FF FF", heartRate: 70, energy: 65535),
    .init(id: "HR-34", hex: "10 C3 3C 01 3C 01 3C 01", heartRate: 195, rr: [316, 316, 316]),
]

let heartRateErrorVectors: [HeartRateErrorVector] = [
    .init(id: "HR-05", hex: "17 01 01", field: "rrIntervals", offset: 3, reason: .missingRRIntervals),
    .init(id: "HR-27", hex: "10 48 2C 03 01", field: "rrIntervals", offset: 4, reason: .trailingBytes(count: 1)),
    .init(id: "HR-28", hex: "01 2C", field: "heartRate", offset: 1, reason: .truncated(needed: 2, available: 1)),
    .init(
        id: "HR-29", hex: "08 46 D0", field: "energyExpended", offset: 2, reason: .truncated(needed: 2, available: 1)),
    .init(id: "HR-30", hex: "00", field: "flags", offset: 0, reason: .tooShort(minimum: 2)),
    .init(id: "empty", hex: "", field: "flags", offset: 0, reason: .tooShort(minimum: 2)),
    .init(id: "uint16 HR, 0 bytes", hex: "11", field: "flags", offset: 0, reason: .tooShort(minimum: 2)),
    .init(
        id: "no RR flag, extra byte", hex: "00 55 12", field: "heartRate", offset: 2, reason: .trailingBytes(count: 1)),
    .init(
        id: "EE then extra bytes", hex: "08 46 01 00 AA BB", field: "energyExpended", offset: 4,
        reason: .trailingBytes(count: 2)),
    .init(
        id: "EE and RR, no RR bytes", hex: "18 43 D0 07", field: "rrIntervals", offset: 4, reason: .missingRRIntervals),
    .init(
        id: "uint16 HR, EE, odd RR", hex: "19 2C 01 0A 00 00 04 01", field: "rrIntervals", offset: 7,
        reason: .trailingBytes(count: 1)),
    .init(
        id: "RR flag, EE cut", hex: "18 43 D0", field: "energyExpended", offset: 2,
        reason: .truncated(needed: 2, available: 1)),
]

@Suite("Heart Rate Measurement 0x2A37")
struct HeartRateMeasurementTests {
    @Test("decodes the test vectors", arguments: heartRateVectors)
    func decodesVector(_ vector: HeartRateVector) throws {
        let measurement = try HeartRateMeasurement(bytes: hex(vector.hex))
        #expect(measurement.heartRate == vector.heartRate)
        #expect(measurement.valueFormat == vector.format)
        #expect(measurement.sensorContact == vector.contact)
        #expect(measurement.energyExpended == vector.energy)
        #expect(measurement.rrIntervals.map(\.raw) == vector.rr)
        #expect(measurement.rrIntervals.map(\.seconds) == vector.rr.map { Double($0) / 1024 })
    }

    @Test("refuses malformed frames naming field and offset", arguments: heartRateErrorVectors)
    func refusesVector(_ vector: HeartRateErrorVector) {
        #expect {
            _ = try HeartRateMeasurement(bytes: hex(vector.hex))
        } throws: { error in
            guard let error = error as? GATTDecodingError else { return false }
            return error.field == vector.field && error.offset == vector.offset && error.reason == vector.reason
                && error.characteristic == .heartRateMeasurement
        }
    }

    @Test("RR values convert exactly: raw / 1024")
    func rrSecondsAreExact() throws {
        let measurement = try HeartRateMeasurement(bytes: hex("1F 01 01 32 01 01 00 02 01 FF FF"))
        #expect(measurement.rrIntervals.map(\.seconds) == [0.0009765625, 0.251953125, 63.9990234375])
        #expect(try HeartRateMeasurement(bytes: hex("1E 55 32 00 21 00")).rrIntervals[0].seconds == 0.0322265625)
    }

    @Test("HR 0 decodes but is no reading; 0xFFFF energy is saturated")
    func noReadingAndSaturation() throws {
        let zero = try HeartRateMeasurement(bytes: hex("06 00"))
        #expect(zero.isReading == false)
        #expect(try HeartRateMeasurement(bytes: hex("06 43")).isReading)
        #expect(try HeartRateMeasurement(bytes: hex("08 46 FF FF")).isEnergySaturated)
        #expect(try HeartRateMeasurement(bytes: hex("08 46 FE FF")).isEnergySaturated == false)
    }

    @Test("reserved bits 5–7 are ignored")
    func reservedBitsIgnored() throws {
        for reserved: UInt8 in [0x20, 0x40, 0x80, 0xE0] {
            let plain = try HeartRateMeasurement(bytes: hex("1E 55 32 00 21 00"))
            let withReserved = try HeartRateMeasurement(bytes: [0x1E | reserved] + hex("55 32 00 21 00"))
            #expect(plain == withReserved)
        }
    }

    @Test("contact field: 0 and 1 not supported, 2 not detected, 3 detected")
    func contactStates() throws {
        let expected: [UInt8: SensorContact] = [
            0x00: .notSupported, 0x02: .notSupported, 0x04: .notDetected, 0x06: .detected,
        ]
        for (flags, contact) in expected {
            #expect(try HeartRateMeasurement(bytes: [flags, 60]).sensorContact == contact)
        }
    }

    @Test("every flag combination round-trips through encode and decode", arguments: 0..<32)
    func flagCombination(_ flags: Int) throws {
        let measurement = HeartRateMeasurement(
            heartRate: flags & 0x01 != 0 ? 300 : 72,
            valueFormat: flags & 0x01 != 0 ? .uint16 : .uint8,
            sensorContact: SensorContact(flags: UInt8(flags)),
            energyExpended: flags & 0x08 != 0 ? 1234 : nil,
            rrIntervals: flags & 0x10 != 0 ? [RRInterval(raw: 800), RRInterval(raw: 1000)] : []
        )
        let bytes = measurement.encoded()
        let decoded = try HeartRateMeasurement(bytes: bytes)
        #expect(decoded == measurement)
        // Bit 1 alone means "not supported", which encodes back as 0: compare the meaningful bits.
        let meaningful = UInt8(flags) & (flags & 0x06 == 0x02 ? 0x19 : 0x1F)
        #expect(bytes[0] == meaningful)
    }

    @Test("the error message names characteristic, field and offset")
    func errorMessage() {
        do {
            _ = try HeartRateMeasurement(bytes: hex("08 46 D0"))
            Issue.record("expected a throw")
        } catch {
            #expect(
                error.description
                    == "Heart Rate Measurement (0x2a37): energyExpended truncated at byte offset 2: needs 2 bytes, 1 left"
            )
        }
    }
}
