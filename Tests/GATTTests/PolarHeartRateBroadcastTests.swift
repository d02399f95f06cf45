import Testing

@testable import GATT

@Suite("Polar heart rate in advertisements (manufacturer data 0x006B)")
struct PolarHeartRateBroadcastTests {
    private func refusal(_ bytes: [UInt8], company: UInt16 = 0x006B) -> AdvertisementDecodingError.Reason? {
        do {
            _ = try PolarHeartRateBroadcast(company: company, bytes: bytes)
            return nil
        } catch {
            #expect(error.bytes == bytes)
            #expect(error.company == company)
            return error.reason
        }
    }

    @Test("a real capture: 6b00 33000038 is 56 bpm, skin contact, frame 4")
    func realCapture() throws {
        let broadcast = try PolarHeartRateBroadcast(company: 0x006B, bytes: [0x33, 0x00, 0x00, 0x38])
        #expect(broadcast.heartRate == 56)
        #expect(broadcast.fastAverageHeartRate == 0)
        #expect(broadcast.skinContact)
        #expect(broadcast.frameCounter == 4)
    }

    @Test("the 3-byte H6/H7 layout: the third byte is the heart rate")
    func threeByteLayout() throws {
        let broadcast = try PolarHeartRateBroadcast(company: 0x006B, bytes: [0x20, 0x00, 0x48])
        #expect(broadcast.heartRate == 72)
        #expect(broadcast.fastAverageHeartRate == nil)
        #expect(!broadcast.skinContact)
        #expect(broadcast.frameCounter == 0)
    }

    @Test("the slow average is shown, not the fast one; the counter takes bits 2-4")
    func slowAverageAndCounter() throws {
        let broadcast = try PolarHeartRateBroadcast(company: 0x006B, bytes: [0b0011_1110, 0x00, 150, 142])
        #expect(broadcast.heartRate == 142)
        #expect(broadcast.fastAverageHeartRate == 150)
        #expect(broadcast.frameCounter == 7)
        #expect(broadcast.skinContact)
    }

    @Test("encoded() round-trips through the decoder for every counter and contact")
    func roundTrip() throws {
        for counter in UInt8(0)...7 {
            for contact in [false, true] {
                let broadcast = PolarHeartRateBroadcast(
                    heartRate: 60 + counter, fastAverageHeartRate: 61, skinContact: contact, frameCounter: counter)
                #expect(try PolarHeartRateBroadcast(company: 0x006B, bytes: broadcast.encoded()) == broadcast)
            }
        }
    }

    @Test("refused, never guessed: other company, unknown lengths, another data type, no reading")
    func refusals() {
        #expect(refusal([0x33, 0x00, 0x00, 0x38], company: 0x004C) == .otherCompany(0x004C))
        #expect(refusal([]) == .unknownLength(0, known: [3, 4]))
        #expect(refusal([0x33, 0x00]) == .unknownLength(2, known: [3, 4]))
        #expect(refusal([0x33, 0x00, 0x00, 0x38, 0x01]) == .unknownLength(5, known: [3, 4]))
        #expect(refusal([UInt8](repeating: 0xFF, count: 64)) == .unknownLength(64, known: [3, 4]))
        #expect(refusal([0x73, 0x00, 0x00, 0x38]) == .notHeartRate)
        #expect(refusal([0x33, 0x00, 0x40, 0x00]) == .noReading)
        #expect(refusal([0x33, 0x00, 0x00]) == .noReading)
    }

    @Test("every 3- and 4-byte input decodes or is refused with a reason; none traps")
    func exhaustiveFlagsAndRates() {
        for flags in UInt8.min...UInt8.max {
            for rate in [UInt8(0), 1, 200, 255] {
                for bytes in [[flags, 0, rate], [flags, 7, 99, rate]] {
                    switch Result(catching: { try PolarHeartRateBroadcast(company: 0x006B, bytes: bytes) }) {
                    case .success(let broadcast):
                        #expect(broadcast.heartRate == rate && flags & 0x40 == 0)
                    case .failure(let error):
                        let reason = (error as? AdvertisementDecodingError)?.reason
                        #expect(reason == (flags & 0x40 != 0 ? .notHeartRate : .noReading))
                    }
                }
            }
        }
    }

    @Test("the error names the company, the reason and the length")
    func errorDescription() {
        let error = AdvertisementDecodingError(
            company: 0x006B, bytes: [1, 2], reason: .unknownLength(2, known: [3, 4]))
        #expect(error.description == "manufacturer data 0x006B: 2 bytes, a layout of 3 or 4 bytes expected")
    }
}
