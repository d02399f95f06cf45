import Testing

@testable import GATT

/// Checks that `body` throws a ``GATTDecodingError`` with this field, offset and reason.
func expectDecodingError(
    field: String, offset: Int, reason: GATTDecodingError.Reason,
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    #expect(sourceLocation: sourceLocation) {
        try body()
    } throws: { error in
        guard let error = error as? GATTDecodingError else { return false }
        return error.field == field && error.offset == offset && error.reason == reason
    }
}

@Suite("Body Sensor Location, Battery Level, Control Point, Device Information")
struct HeartRateServiceTests {
    @Test("BS-01..03: known locations and unknown kept raw")
    func bodySensorLocation() throws {
        #expect(try BodySensorLocation(bytes: [0x01]) == .chest)
        #expect(try BodySensorLocation(bytes: [0x05]) == .earLobe)
        #expect(try BodySensorLocation(bytes: [0x07]) == .unknown(7))
        for raw in UInt8.min...UInt8.max {
            #expect(try BodySensorLocation(bytes: [raw]).encoded() == [raw])
        }
        expectDecodingError(field: "bodySensorLocation", offset: 0, reason: .invalidLength(expected: 1)) {
            _ = try BodySensorLocation(bytes: [1, 2])
        }
    }

    @Test("BAT-01..04: 0–100 %, one byte")
    func batteryLevel() throws {
        #expect(try BatteryLevel(bytes: [0x64]).percent == 100)
        #expect(try BatteryLevel(bytes: [0x0F]).percent == 15)
        #expect(try BatteryLevel(bytes: [0x00]).percent == 0)
        expectDecodingError(field: "batteryLevel", offset: 0, reason: .outOfRange(value: 101, allowed: 0...100)) {
            _ = try BatteryLevel(bytes: [0x65])
        }
        expectDecodingError(field: "batteryLevel", offset: 0, reason: .invalidLength(expected: 1)) {
            _ = try BatteryLevel(bytes: [0x64, 0x00])
        }
        expectDecodingError(field: "batteryLevel", offset: 0, reason: .invalidLength(expected: 1)) {
            _ = try BatteryLevel(bytes: [])
        }
    }

    @Test("CP-01: reset energy expended encodes as 01; ATT error 0x80 maps to notSupported")
    func controlPoint() throws {
        #expect(HeartRateControlPoint.resetEnergyExpended.encoded() == [0x01])
        #expect(HeartRateControlPoint.error(forATTError: ATTErrorCode(rawValue: 0x80)) == .notSupported)
        #expect(
            HeartRateControlPoint.error(forATTError: .insufficientAuthentication)
                == .attError(.insufficientAuthentication))
        #expect(
            try GATTValue(characteristic: .heartRateControlPoint, bytes: [0x01])
                == .heartRateControlPoint(.resetEnergyExpended))
        expectDecodingError(field: "opCode", offset: 0, reason: .outOfRange(value: 2, allowed: 1...1)) {
            _ = try GATTValue(characteristic: .heartRateControlPoint, bytes: [0x02])
        }
    }

    @Test("Device Information strings: NUL padding cut, white space trimmed, bad UTF-8 refused")
    func deviceInformation() throws {
        #expect(try DeviceInformationString.decode(Array("Polar".utf8), characteristic: .manufacturerName) == "Polar")
        #expect(
            try DeviceInformationString.decode(Array("H10 ".utf8) + [0, 0, 0x41], characteristic: .modelNumber) == "H10"
        )
        #expect(
            try DeviceInformationString.decode(Array(" 3.1.1\n".utf8), characteristic: .firmwareRevision) == "3.1.1")
        #expect(try DeviceInformationString.decode([], characteristic: .serialNumber) == "")
        #expect(try DeviceInformationString.decode(Array("Müller".utf8), characteristic: .manufacturerName) == "Müller")
        expectDecodingError(field: "hardwareRevision", offset: 0, reason: .invalidUTF8) {
            _ = try DeviceInformationString.decode([0x41, 0xFF, 0xFE], characteristic: .hardwareRevision)
        }
        for characteristic in DeviceInformationString.characteristics {
            #expect(
                try GATTValue(characteristic: characteristic, bytes: Array("x".utf8))
                    == .deviceInformation(characteristic, "x"))
        }
    }
}

@Suite("Cycling Power Measurement 0x2A63")
struct CyclingPowerMeasurementTests {
    @Test("CPS-01..09 decode")
    func vectors() throws {
        #expect(try CyclingPowerMeasurement(bytes: hex("00 00 D2 04")).instantaneousPower == 1234)
        let cps02 = try CyclingPowerMeasurement(bytes: hex("30 00 D2 04 FF FF FF FF 03 3F FF 07 E7 0F"))
        #expect(cps02.instantaneousPower == 1234)
        #expect(cps02.wheel == RevolutionData(revolutions: 4_294_967_295, lastEventTime: 16131))
        #expect(Double(cps02.wheel!.lastEventTime) / CyclingPowerMeasurement.wheelTicksPerSecond == 7.87646484375)
        #expect(cps02.crank == RevolutionData(revolutions: 2047, lastEventTime: 4071))
        let cps03 = try CyclingPowerMeasurement(bytes: hex("01 00 2C 01 64"))
        #expect(cps03.instantaneousPower == 300)
        #expect(cps03.pedalPowerBalancePercent == 50.0)
        #expect(cps03.pedalPowerBalanceReferenceIsLeft == false)
        #expect(try CyclingPowerMeasurement(bytes: hex("00 08 40 01 0A 00")).accumulatedEnergy == 10)
        let cps05 = try CyclingPowerMeasurement(bytes: hex("10 00 4B 01 39 30 00 00 00 08"))
        #expect(cps05.instantaneousPower == 331)
        #expect(cps05.wheel == RevolutionData(revolutions: 12345, lastEventTime: 2048))
        let cps06 = try CyclingPowerMeasurement(bytes: hex("20 00 70 01 90 01 00 04"))
        #expect(cps06.crank == RevolutionData(revolutions: 400, lastEventTime: 1024))
        let cps07 = try CyclingPowerMeasurement(bytes: hex("31 08 94 01 6E 39 30 00 00 00 10 90 01 00 08 15 00"))
        #expect(cps07.instantaneousPower == 404)
        #expect(cps07.pedalPowerBalancePercent == 55.0)
        #expect(cps07.wheel == RevolutionData(revolutions: 12345, lastEventTime: 4096))
        #expect(cps07.crank == RevolutionData(revolutions: 400, lastEventTime: 2048))
        #expect(cps07.accumulatedEnergy == 21)
        #expect(try CyclingPowerMeasurement(bytes: hex("00 00 FB FF")).instantaneousPower == -5)
        let cps09 = try CyclingPowerMeasurement(bytes: hex("00 01 64 00 B4 A0 05"))
        #expect(cps09.extremeAngles == ExtremeValues(maximum: 180, minimum: 90))
    }

    @Test("CPS-10, CPS-11 and cut fields are refused")
    func errors() {
        expectDecodingError(field: "crankEventTime", offset: 6, reason: .truncated(needed: 2, available: 1)) {
            _ = try CyclingPowerMeasurement(bytes: hex("20 00 2D 00 02 00 B8"))
        }
        expectDecodingError(field: "instantaneousPower", offset: 2, reason: .truncated(needed: 2, available: 1)) {
            _ = try CyclingPowerMeasurement(bytes: hex("00 00 D2"))
        }
        expectDecodingError(field: "flags", offset: 0, reason: .tooShort(minimum: 2)) {
            _ = try CyclingPowerMeasurement(bytes: hex("00"))
        }
        expectDecodingError(field: "extremeAngles", offset: 4, reason: .truncated(needed: 3, available: 2)) {
            _ = try CyclingPowerMeasurement(bytes: hex("00 01 64 00 B4 A0"))
        }
    }

    @Test("every optional field round-trips", arguments: 0..<13)
    func fieldRoundTrip(_ bit: Int) throws {
        var measurement = CyclingPowerMeasurement(instantaneousPower: -42)
        switch bit {
        case 0: measurement.pedalPowerBalance = 101
        case 1: measurement.pedalPowerBalanceReferenceIsLeft = true
        case 2: measurement.accumulatedTorque = 777
        case 3: measurement.accumulatedTorqueSourceIsCrank = true
        case 4: measurement.wheel = RevolutionData(revolutions: 0xDEAD_BEEF, lastEventTime: 65535)
        case 5: measurement.crank = RevolutionData(revolutions: 65535, lastEventTime: 1)
        case 6: measurement.extremeForce = ExtremeValues(maximum: 300, minimum: -20)
        case 7: measurement.extremeTorque = ExtremeValues(maximum: 100, minimum: -100)
        case 8: measurement.extremeAngles = ExtremeValues(maximum: 0xABC, minimum: 0x123)
        case 9: measurement.topDeadSpotAngle = 10
        case 10: measurement.bottomDeadSpotAngle = 190
        case 11: measurement.accumulatedEnergy = 65535
        default: measurement.offsetCompensationIndicator = true
        }
        let bytes = measurement.encoded()
        #expect(UInt16(bytes[0]) | UInt16(bytes[1]) << 8 == 1 << bit)
        #expect(try CyclingPowerMeasurement(bytes: bytes) == measurement)
        if bit == 8 { #expect(Array(bytes.suffix(3)) == [0xBC, 0x3A, 0x12]) }
    }
}

@Suite("CSC Measurement 0x2A5B")
struct CSCMeasurementTests {
    @Test("CSC-01..08 decode")
    func vectors() throws {
        #expect(
            try CSCMeasurement(bytes: hex("01 39 30 00 00 E8 03"))
                == CSCMeasurement(wheel: RevolutionData(revolutions: 12345, lastEventTime: 1000)))
        #expect(
            try CSCMeasurement(bytes: hex("02 59 01 D0 07"))
                == CSCMeasurement(crank: RevolutionData(revolutions: 345, lastEventTime: 2000)))
        #expect(
            try CSCMeasurement(bytes: hex("03 39 30 00 00 E8 03 59 01 D0 07"))
                == CSCMeasurement(
                    wheel: RevolutionData(revolutions: 12345, lastEventTime: 1000),
                    crank: RevolutionData(revolutions: 345, lastEventTime: 2000)))
        #expect(
            try CSCMeasurement(bytes: hex("03 FF FF FF FF 03 3F FF 07 E7 0F"))
                == CSCMeasurement(
                    wheel: RevolutionData(revolutions: 4_294_967_295, lastEventTime: 16131),
                    crank: RevolutionData(revolutions: 2047, lastEventTime: 4071)))
        #expect(try CSCMeasurement(bytes: hex("00")) == CSCMeasurement())
        #expect(
            try CSCMeasurement(bytes: hex("02 C8 00 00 00 06 99"))
                == CSCMeasurement(crank: RevolutionData(revolutions: 200, lastEventTime: 0)))
        #expect(
            try CSCMeasurement(bytes: hex("01 FF FF 00 01 45 99"))
                == CSCMeasurement(wheel: RevolutionData(revolutions: 0x0100_FFFF, lastEventTime: 39237)))
    }

    @Test("CSC-05 and empty frames are refused")
    func errors() {
        expectDecodingError(field: "crankEventTime", offset: 9, reason: .truncated(needed: 2, available: 0)) {
            _ = try CSCMeasurement(bytes: hex("03 14 00 00 00 00 00 0A 00"))
        }
        expectDecodingError(field: "flags", offset: 0, reason: .tooShort(minimum: 1)) {
            _ = try CSCMeasurement(bytes: [])
        }
    }

    @Test("every flag combination round-trips", arguments: 0..<4)
    func roundTrip(_ flags: Int) throws {
        let measurement = CSCMeasurement(
            wheel: flags & 1 != 0 ? RevolutionData(revolutions: 99_999, lastEventTime: 500) : nil,
            crank: flags & 2 != 0 ? RevolutionData(revolutions: 321, lastEventTime: 60000) : nil)
        #expect(try CSCMeasurement(bytes: measurement.encoded()) == measurement)
        #expect(measurement.encoded()[0] == UInt8(flags))
    }
}

@Suite("RSC Measurement 0x2A53")
struct RSCMeasurementTests {
    @Test("RSC-01..09 decode")
    func vectors() throws {
        let rsc01 = try RSCMeasurement(bytes: hex("07 00 03 12 56 00 01 00 00 F0"))
        #expect(rsc01.speedMetersPerSecond == 3.0)
        #expect(rsc01.cadence == 18)
        #expect(rsc01.strideLengthMeters == 0.86)
        #expect(rsc01.totalDistance == 0xF000_0001)
        #expect(rsc01.totalDistanceMeters == 402_653_184.1)
        #expect(rsc01.isRunning)
        let rsc03 = try RSCMeasurement(bytes: hex("1F D8 02 A6 4F 00 01 00 00 00"))
        #expect(rsc03.speedMetersPerSecond == 2.84375)
        #expect(rsc03.cadence == 166)
        #expect(rsc03.strideLengthMeters == 0.79)
        #expect(rsc03.totalDistanceMeters == 0.1)
        let rsc04 = try RSCMeasurement(bytes: hex("07 80 02 50 20 03 00 10 00 00"))
        #expect(rsc04.speedMetersPerSecond == 2.5)
        #expect(rsc04.cadence == 80)
        #expect(rsc04.strideLengthMeters == 8.0)
        #expect(rsc04.totalDistanceMeters == 409.6)
        let rsc06 = try RSCMeasurement(bytes: hex("00 80 02 B4"))
        #expect(rsc06.cadence == 180)
        #expect(rsc06.isRunning == false)
        #expect(rsc06.strideLength == nil)
        let rsc07 = try RSCMeasurement(bytes: hex("03 80 02 B4 55 00 10 27 00 00"))
        #expect(rsc07.strideLengthMeters == 0.85)
        #expect(rsc07.totalDistanceMeters == 1000.0)
        let rsc08 = try RSCMeasurement(bytes: hex("02 00 05 50 FF FF 00 01"))
        #expect(rsc08.speedMetersPerSecond == 5.0)
        #expect(rsc08.totalDistanceMeters == 1_684_275.1)
        let rsc09 = try RSCMeasurement(bytes: hex("01 9A 01 78 50 00"))
        #expect(rsc09.speedMetersPerSecond == 1.6015625)
        #expect(rsc09.cadence == 120)
        #expect(rsc09.strideLengthMeters == 0.80)
    }

    @Test("RSC-02 and RSC-05 are refused")
    func errors() {
        expectDecodingError(field: "totalDistance", offset: 6, reason: .truncated(needed: 4, available: 3)) {
            _ = try RSCMeasurement(bytes: hex("07 00 03 12 56 00 00 00 00"))
        }
        expectDecodingError(field: "cadence", offset: 3, reason: .truncated(needed: 1, available: 0)) {
            _ = try RSCMeasurement(bytes: hex("00 80 02"))
        }
    }

    @Test("every flag combination round-trips", arguments: 0..<8)
    func roundTrip(_ flags: Int) throws {
        let measurement = RSCMeasurement(
            speed: 700, cadence: 170, strideLength: flags & 1 != 0 ? 120 : nil,
            totalDistance: flags & 2 != 0 ? 123_456 : nil, isRunning: flags & 4 != 0)
        #expect(try RSCMeasurement(bytes: measurement.encoded()) == measurement)
        #expect(measurement.encoded()[0] == UInt8(flags))
    }
}
