/// The heart rate a Polar strap broadcasts in its advertisements (manufacturer data, company
/// 0x006B), read without a connection.
///
/// Layouts after the company identifier (as Polar's BLE SDK reads them): 3 bytes on the H6/H7
/// (flags, kHz code, heart rate) or 4 bytes on later straps (flags, kHz code, fast average, slow
/// average; the slow average is the value Polar's own apps show). Flags: bit 1 skin contact,
/// bits 2–4 a frame counter that advances with each new reading, bit 6 the data type (0: heart
/// rate). No RR intervals are broadcast.
public struct PolarHeartRateBroadcast: Hashable, Sendable {
    /// Polar's Bluetooth SIG company identifier.
    public static let companyID: UInt16 = 0x006B
    /// The lengths of the layouts this decoder reads.
    public static let knownLengths = [3, 4]

    /// The heart rate to show (the slow average; the only value on a 3-byte layout), bpm.
    public var heartRate: UInt8
    /// The fast average on the 4-byte layout (`nil` on the 3-byte one), bpm; 0 when not yet known.
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
        guard Self.knownLengths.contains(bytes.count) else {
            throw AdvertisementDecodingError(
                company: company, bytes: bytes, reason: .unknownLength(bytes.count, known: Self.knownLengths))
        }
        let flags = bytes[0]
        guard flags & 0x40 == 0 else {
            throw AdvertisementDecodingError(company: company, bytes: bytes, reason: .notHeartRate)
        }
        let shown = bytes.count == 4 ? bytes[3] : bytes[2]
        guard shown > 0 else {
            throw AdvertisementDecodingError(company: company, bytes: bytes, reason: .noReading)
        }
        self.init(
            heartRate: shown, fastAverageHeartRate: bytes.count == 4 ? bytes[2] : nil, skinContact: flags & 0x02 != 0,
            frameCounter: (flags >> 2) & 0b111)
    }

    /// Encodes the 4-byte layout (the broadcast bit set, kHz code 0), as a strap would send it.
    public func encoded() -> [UInt8] {
        let flags: UInt8 = 0x20 | (frameCounter & 0b111) << 2 | (skinContact ? 0x02 : 0)
        return [flags, 0, fastAverageHeartRate ?? heartRate, heartRate]
    }
}
