/// The heart rate a Polar strap broadcasts in its advertisements (manufacturer data, company
/// 0x006B), read without a connection.
///
/// The manufacturer data after the company identifier is a row of blocks, read the way Polar's BLE
/// SDK walks it (`BleAdvertisementContent`, Android and iOS). Bit 6 (0x40) of a block's first byte
/// says what the block holds:
/// - set: a GPB block, which carries no heart rate: that byte, a length byte `n`, then `n` bytes.
///   It is skipped by its length; one that runs past the end of the data is refused.
/// - clear: the heart-rate block, which runs to the end of the data: 3 bytes on the H6/H7 (flags,
///   kHz code, heart rate) or 4 bytes on later straps (flags, kHz code, fast average, slow average;
///   the slow average is the value Polar's own apps show).
///
/// Data of exactly 3 or 4 bytes is the heart-rate block alone (`33 00 00 38`: 56 bpm); Polar's SDK
/// gives an OH1 example with a GPB block first (`72 06 7F 44 37 00 00 00`, then `33 00 3C`: 60 bpm).
/// Flags of the
/// heart-rate block: bit 0 battery status, bit 1 skin contact, bits 2–4 a frame counter that
/// advances with each new reading, bit 5 the broadcast bit, bit 6 the data type (0: heart rate),
/// bit 7 a status flag. No RR intervals are broadcast.
public struct PolarHeartRateBroadcast: Hashable, Sendable {
    /// Polar's Bluetooth SIG company identifier.
    public static let companyID: UInt16 = 0x006B
    /// The lengths a heart-rate block can have (the whole data when it is the only block).
    public static let knownLengths = [3, 4]
    /// The bit of a block's first byte that marks content other than heart rate (a GPB block).
    static let dataTypeBit: UInt8 = 0x40

    /// The heart rate to show (the slow average; the only value on a 3-byte block), bpm.
    public var heartRate: UInt8
    /// The fast average on a 4-byte block (`nil` on a 3-byte one), bpm; 0 when not yet known.
    public var fastAverageHeartRate: UInt8?
    /// Whether the strap reports skin contact.
    public var skinContact: Bool
    /// The 3-bit counter (0–7) that advances with each new reading: a repeat of the same
    /// advertisement carries the same counter.
    public var frameCounter: UInt8

    /// Creates a broadcast value.
    public init(heartRate: UInt8, fastAverageHeartRate: UInt8? = nil, skinContact: Bool, frameCounter: UInt8) {
        self.heartRate = heartRate
        self.fastAverageHeartRate = fastAverageHeartRate
        self.skinContact = skinContact
        self.frameCounter = frameCounter & 0b111
    }

    /// Decodes the manufacturer data after the company identifier `company`.
    public init(company: UInt16, bytes: [UInt8]) throws(AdvertisementDecodingError) {
        guard company == Self.companyID else {
            throw AdvertisementDecodingError(company: company, bytes: bytes, reason: .otherCompany(company))
        }
        let block = try Self.heartRateBlock(in: bytes, company: company)
        let flags = bytes[block.lowerBound]
        // The block runs to the end of the data: its last byte is the value shown.
        let shown = bytes[block.upperBound - 1]
        guard shown > 0 else {
            throw AdvertisementDecodingError(company: company, bytes: bytes, reason: .noReading)
        }
        self.init(
            heartRate: shown, fastAverageHeartRate: block.count == 4 ? bytes[block.lowerBound + 2] : nil,
            skinContact: flags & 0x02 != 0, frameCounter: (flags >> 2) & 0b111)
    }

    /// Where the heart-rate block of `bytes` lies, after skipping the GPB blocks before it.
    private static func heartRateBlock(
        in bytes: [UInt8], company: UInt16
    ) throws(AdvertisementDecodingError) -> Range<Int> {
        func refusal(_ reason: AdvertisementDecodingError.Reason) -> AdvertisementDecodingError {
            AdvertisementDecodingError(company: company, bytes: bytes, reason: reason)
        }
        // 3 or 4 bytes: one heart-rate block, whose data-type bit must then say so.
        if knownLengths.contains(bytes.count) {
            guard bytes[0] & dataTypeBit == 0 else { throw refusal(.notHeartRate) }
            return bytes.indices
        }
        guard !bytes.isEmpty else { throw refusal(.unknownLength(0, known: knownLengths)) }
        var offset = 0
        while offset < bytes.count {
            let remaining = bytes.count - offset
            if bytes[offset] & dataTypeBit == 0 {
                guard knownLengths.contains(remaining) else {
                    throw refusal(.unknownLength(remaining, known: knownLengths))
                }
                return offset..<bytes.count
            }
            // A GPB block: its first byte, its length byte, then that many bytes.
            let needed = remaining >= 2 ? 2 + Int(bytes[offset + 1]) : 2
            guard needed <= remaining else {
                throw refusal(.truncatedBlock(offset: offset, needed: needed, available: remaining))
            }
            offset += needed
        }
        throw refusal(.noHeartRateBlock)
    }

    /// Encodes the 4-byte layout (the broadcast bit set, kHz code 0), as a strap would send it.
    public func encoded() -> [UInt8] {
        let flags: UInt8 = 0x20 | (frameCounter & 0b111) << 2 | (skinContact ? 0x02 : 0)
        return [flags, 0, fastAverageHeartRate ?? heartRate, heartRate]
    }
}
