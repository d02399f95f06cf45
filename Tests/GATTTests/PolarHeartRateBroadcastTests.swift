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
        // 0xFF opens a GPB block of 255 bytes: 64 are there.
        #expect(
            refusal([UInt8](repeating: 0xFF, count: 64)) == .truncatedBlock(offset: 0, needed: 257, available: 64))
        #expect(refusal([0x73, 0x00, 0x00, 0x38]) == .notHeartRate)
        #expect(refusal([0x33, 0x00, 0x40, 0x00]) == .noReading)
        #expect(refusal([0x33, 0x00, 0x00]) == .noReading)
    }

    @Test("GPB blocks before the heart-rate block are skipped by their length (the OH1 example)")
    func blocksBeforeHeartRate() throws {
        // The OH1 example of Polar's iOS SDK (BleAdvertisementContent.swift): 60 bpm after an 8-byte GPB block.
        let oh1 = try PolarHeartRateBroadcast(
            company: 0x006B, bytes: [0x72, 0x06, 0x7F, 0x44, 0x37, 0x00, 0x00, 0x00, 0x33, 0x00, 0x3C])
        #expect(oh1 == PolarHeartRateBroadcast(heartRate: 60, skinContact: true, frameCounter: 4))
        // A 4-byte heart-rate block after a GPB block: the slow average, as on its own.
        let fourByte = try PolarHeartRateBroadcast(
            company: 0x006B, bytes: [0x72, 0x02, 0xAA, 0xBB, 0x2B, 0x0B, 0xB6, 0xAC])
        #expect(
            fourByte
                == PolarHeartRateBroadcast(
                    heartRate: 172, fastAverageHeartRate: 182, skinContact: true, frameCounter: 2))
        // Two GPB blocks, one of them empty, then the heart rate.
        let two = try PolarHeartRateBroadcast(company: 0x006B, bytes: [0x40, 0x00, 0x7A, 0x01, 0x03, 0x37, 0x00, 0x48])
        #expect(two.heartRate == 72 && two.frameCounter == 5 && two.fastAverageHeartRate == nil)
    }

    @Test("a block layout that contradicts itself is refused with the block's offset")
    func contradictoryBlocks() {
        let gpb: [UInt8] = [0x72, 0x06, 0x7F, 0x44, 0x37, 0x00, 0x00, 0x00]
        // The heart-rate block runs to the end of the data: 2 or 5 bytes is no known layout.
        #expect(refusal(gpb + [0x33, 0x3C]) == .unknownLength(2, known: [3, 4]))
        #expect(refusal(gpb + [0x33, 0x00, 0x00, 0x3C, 0x01]) == .unknownLength(5, known: [3, 4]))
        // A block after the heart-rate block: the heart-rate block would be 5 bytes.
        #expect(refusal([0x33, 0x00, 0x3C, 0x72, 0x00]) == .unknownLength(5, known: [3, 4]))
        // A GPB length that runs past the end, and a GPB block cut before its length byte.
        #expect(
            refusal([0x72, 0x0A] + gpb.dropFirst(2) + [0x33, 0x00, 0x3C])
                == .truncatedBlock(offset: 0, needed: 12, available: 11))
        #expect(refusal([0x72, 0x02, 0xAA, 0xBB, 0x40]) == .truncatedBlock(offset: 4, needed: 2, available: 1))
        // Only GPB blocks.
        #expect(refusal(gpb + [0x40, 0x00]) == .noHeartRateBlock)
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

    @Test("every flags byte of a heart-rate block after a GPB block: decoded, or refused by the walk; none traps")
    func exhaustiveFlagsAfterGPB() {
        let gpb: [UInt8] = [0x72, 0x06, 0x7F, 0x44, 0x37, 0x00, 0x00, 0x00]
        for flags in UInt8.min...UInt8.max {
            for rate in [UInt8(0), 1, 0x3F, 0x40, 200, 255] {
                let bytes = gpb + [flags, 0, rate]
                let reason = refusal(bytes)
                if flags & 0x40 == 0 {
                    #expect(reason == (rate == 0 ? .noReading : nil))
                    if rate > 0 {
                        #expect((try? PolarHeartRateBroadcast(company: 0x006B, bytes: bytes))?.heartRate == rate)
                    }
                } else if rate & 0x40 == 0 {
                    // An empty GPB block, then the rate byte read as a 1-byte heart-rate block.
                    #expect(reason == .unknownLength(1, known: [3, 4]))
                } else {
                    // An empty GPB block, then the rate byte read as a GPB block without its length byte.
                    #expect(reason == .truncatedBlock(offset: 10, needed: 2, available: 1))
                }
            }
        }
    }

    @Test("every first byte and every GPB length: the walk goes exactly as far as the length byte says")
    func exhaustiveGPBLengths() {
        // Two bytes of a first block, six zero bytes, then the heart-rate block 33 00 3C: 11 bytes.
        for first in UInt8.min...UInt8.max {
            for length in UInt8.min...UInt8.max {
                let bytes = [first, length, 0, 0, 0, 0, 0, 0, 0x33, 0x00, 0x3C]
                let reason = refusal(bytes)
                guard first & 0x40 != 0 else {
                    // A heart-rate block from the first byte to the end: 11 bytes.
                    #expect(reason == .unknownLength(11, known: [3, 4]))
                    continue
                }
                // The next block starts at 2 + length, on a zero byte (a heart-rate header) or in 33 00 3C.
                switch Int(length) {
                case 0...4: #expect(reason == .unknownLength(9 - Int(length), known: [3, 4]))
                case 5, 6: #expect(reason == nil, "00 33 00 3C, then 33 00 3C: both read 60 bpm")
                case 7, 8: #expect(reason == .unknownLength(9 - Int(length), known: [3, 4]))
                case 9: #expect(reason == .noHeartRateBlock)
                default: #expect(reason == .truncatedBlock(offset: 0, needed: 2 + Int(length), available: 11))
                }
            }
        }
    }

    @Test("the error names the company, the reason, and the block's length and offset")
    func errorDescription() {
        func text(_ bytes: [UInt8], _ reason: AdvertisementDecodingError.Reason) -> String {
            AdvertisementDecodingError(company: 0x006B, bytes: bytes, reason: reason).description
        }
        #expect(
            text([1, 2], .unknownLength(2, known: [3, 4]))
                == "manufacturer data 0x006B: 2 bytes, a layout of 3 or 4 bytes expected")
        #expect(
            text([0x72, 0x00, 0x33, 0x3C], .unknownLength(2, known: [3, 4]))
                == "manufacturer data 0x006B: a heart-rate block of 2 bytes at offset 2, a layout of 3 or 4 bytes expected"
        )
        #expect(
            text([0xC0, 0x00], .noHeartRateBlock)
                == "manufacturer data 0x006B: no heart-rate block: every block announces other content (GPB)")
        #expect(
            text([0x40], .truncatedBlock(offset: 0, needed: 2, available: 1))
                == "manufacturer data 0x006B: the GPB block at offset 0 has no length byte (2 bytes needed, 1 left)")
        #expect(
            text([0x72, 0x08, 0x00], .truncatedBlock(offset: 0, needed: 10, available: 3))
                == "manufacturer data 0x006B: the GPB block at offset 0 announces 10 bytes, only 3 left")
    }
}
