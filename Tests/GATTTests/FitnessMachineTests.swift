import Testing

@testable import GATT

@Suite("Fitness Machine: Indoor Bike Data 0x2AD2 and Treadmill Data 0x2ACD")
struct FitnessMachineTests {
    @Test("IBD-05..13, IBD-15 decode; bit 0 is inverted; bit 2 is cadence")
    func indoorBikeVectors() throws {
        let ibd05 = try IndoorBikeData(bytes: hex("44 02 9C 09 5C 00 4F 00 50"))
        #expect(ibd05.instantaneousSpeed == 2460)
        #expect(abs(ibd05.instantaneousSpeedMetersPerSecond! - 6.8333) < 0.0001)
        #expect(ibd05.instantaneousCadenceRPM == 46)
        #expect(ibd05.instantaneousPower == 79)
        #expect(ibd05.heartRate == 80)
        #expect(ibd05.moreData == false)

        let ibd06 = try IndoorBikeData(bytes: hex("64 02 00 00 00 00 14 00 00 00 00"))
        #expect(ibd06.instantaneousSpeed == 0)
        #expect(ibd06.instantaneousCadence == 0)
        #expect(ibd06.resistanceLevel == 20)
        #expect(ibd06.instantaneousPower == 0)
        #expect(ibd06.heartRate == nil, "HR 0 is no reading")

        let ibd07 = try IndoorBikeData(bytes: hex("64 02 C1 08 00 00 14 00 1C 00 00"))
        #expect(ibd07.instantaneousSpeed == 2241)
        #expect(ibd07.instantaneousPower == 28)

        let ibd08 = try IndoorBikeData(bytes: hex("FE 1F " + repeated("00", 11) + " 01 00 " + repeated("00", 15)))
        #expect(ibd08.resistanceLevel == 1)
        #expect(ibd08.instantaneousSpeed == 0)
        #expect(ibd08.averageSpeed == 0)
        #expect(ibd08.averageCadence == 0)
        #expect(ibd08.totalDistance == 0)
        #expect(ibd08.energy == FitnessMachineEnergy(total: 0, perHour: 0, perMinute: 0))
        #expect(ibd08.metabolicEquivalent == 0)
        #expect(ibd08.remainingTime == 0)

        let ibd09 = try IndoorBikeData(bytes: hex("54 08 E2 06 7E 00 BB 00 00 4D 00 00 00"))
        #expect(ibd09.instantaneousSpeed == 1762)
        #expect(ibd09.instantaneousCadenceRPM == 63)
        #expect(ibd09.totalDistance == 187)
        #expect(ibd09.instantaneousPower == 77)
        #expect(ibd09.elapsedTime == 0)

        let ibd10 = try IndoorBikeData(bytes: hex("54 02 CA 0C A0 00 D3 A4 00 2C 01 8F"))
        #expect(abs(ibd10.instantaneousSpeedMetersPerSecond! - 9.0944) < 0.0001)
        #expect(ibd10.instantaneousCadenceRPM == 80)
        #expect(ibd10.totalDistance == 42195)
        #expect(ibd10.instantaneousPower == 300)
        #expect(ibd10.heartRate == 143)

        let ibd11 = try IndoorBikeData(bytes: hex("44 02 F2 08 B0 00 40 00 00"))
        #expect(ibd11.instantaneousSpeed == 2290)
        #expect(ibd11.instantaneousCadenceRPM == 88)
        #expect(ibd11.heartRate == nil)

        let ibd12 = try IndoorBikeData(bytes: hex("45 00 B0 00 40 00"))
        #expect(ibd12.moreData)
        #expect(ibd12.instantaneousSpeed == nil)
        #expect(ibd12.instantaneousCadenceRPM == 88)
        #expect(ibd12.instantaneousPower == 64)

        #expect(try IndoorBikeData(bytes: hex("01 00")) == IndoorBikeData(moreData: true))
        #expect(try IndoorBikeData(bytes: hex("40 00 00 00 F6 FF")).instantaneousPower == -10)
    }

    @Test("IBD-14 and short frames are refused")
    func indoorBikeErrors() {
        expectDecodingError(field: "instantaneousPower", offset: 6, reason: .truncated(needed: 2, available: 1)) {
            _ = try IndoorBikeData(bytes: hex("44 00 17 09 9A 00 73"))
        }
        expectDecodingError(field: "flags", offset: 0, reason: .tooShort(minimum: 2)) {
            _ = try IndoorBikeData(bytes: hex("02"))
        }
        expectDecodingError(field: "instantaneousSpeed", offset: 2, reason: .truncated(needed: 2, available: 0)) {
            _ = try IndoorBikeData(bytes: hex("00 00"))
        }
    }

    @Test("TMD-02, TMD-03 and a flags word with bit 7 in its low byte")
    func treadmillVectors() throws {
        let tmd02 = try TreadmillData(bytes: hex("02 01 E2 04 B0 04 9B"))
        #expect(tmd02.instantaneousSpeed == 1250)
        #expect(abs(tmd02.instantaneousSpeedMetersPerSecond! - 3.4722) < 0.0001)
        #expect(tmd02.averageSpeed == 1200)
        #expect(tmd02.heartRate == 155)
        let tmd03 = try TreadmillData(bytes: hex("01 00"))
        #expect(tmd03.moreData)
        #expect(tmd03.instantaneousSpeed == nil)
        // 0x0484, which a sign-extending parser reads as 0xFF84.
        let signExtension = try TreadmillData(bytes: hex("84 04 E8 03 10 27 00 64 00 58 02 0A 3C 00"))
        #expect(signExtension.instantaneousSpeed == 1000)
        #expect(signExtension.totalDistance == 10000)
        #expect(signExtension.energy == FitnessMachineEnergy(total: 100, perHour: 600, perMinute: 10))
        #expect(signExtension.elapsedTime == 60)
        #expect(signExtension.inclination == nil)
    }

    @Test("pace width follows the frame length; neither width throws")
    func treadmillPaceWidth() throws {
        #expect(try TreadmillData(bytes: hex("20 00 E2 04 0A")).instantaneousPace == .init(raw: 10, width: 1))
        #expect(try TreadmillData(bytes: hex("20 00 E2 04 0A 01")).instantaneousPace == .init(raw: 0x010A, width: 2))
        let both1 = try TreadmillData(bytes: hex("60 00 E2 04 0A 0B"))
        #expect(both1.instantaneousPace == .init(raw: 10, width: 1))
        #expect(both1.averagePace == .init(raw: 11, width: 1))
        let both2 = try TreadmillData(bytes: hex("60 01 E2 04 0A 00 0B 00 96"))
        #expect(both2.averagePace == .init(raw: 11, width: 2))
        #expect(both2.heartRate == 150)
        expectDecodingError(field: "instantaneousPace", offset: 4, reason: .inconsistentLength) {
            _ = try TreadmillData(bytes: hex("20 00 E2 04 0A 00 00"))
        }
        expectDecodingError(field: "instantaneousPace", offset: 4, reason: .inconsistentLength) {
            _ = try TreadmillData(bytes: hex("60 00 E2 04 0A 0B 0C"))
        }
        expectDecodingError(field: "instantaneousPace", offset: 4, reason: .truncated(needed: 1, available: 0)) {
            _ = try TreadmillData(bytes: hex("20 00 E2 04"))
        }
    }

    @Test("split frames merge into last-known state; an absent field is not zero")
    func splitFrames() throws {
        var record = FitnessMachineRecord()
        record.merge(try IndoorBikeData(bytes: hex("45 00 B0 00 40 00")))
        #expect(record.isComplete == false)
        #expect(record.instantaneousPower == 64)
        record.merge(try IndoorBikeData(bytes: hex("00 00 F2 08")))
        #expect(record.isComplete)
        #expect(record.instantaneousSpeed == 2290)
        #expect(record.instantaneousCadence == 176)
        #expect(record.instantaneousPower == 64, "a fragment without power keeps the last power")
        record.merge(try IndoorBikeData(bytes: hex("40 00 00 00 13 00")))
        #expect(record.instantaneousPower == 19)
        record.reset()
        #expect(record == FitnessMachineRecord())

        var treadmill = FitnessMachineRecord()
        treadmill.merge(try TreadmillData(bytes: hex("09 00 0A 00 05 00")))
        #expect(treadmill.inclination == 10)
        #expect(treadmill.isComplete == false)
        treadmill.merge(try TreadmillData(bytes: hex("00 01 E2 04 96")))
        #expect(treadmill.inclination == 10)
        #expect(treadmill.heartRate == 150)
        #expect(treadmill.instantaneousSpeed == 1250)
    }
}
