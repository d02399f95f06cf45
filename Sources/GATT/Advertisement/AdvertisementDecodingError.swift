/// Manufacturer data in an advertisement that a strict decoder refused.
///
/// Advertisements are broadcast by anyone in range: a layout the decoder does not know is refused,
/// never guessed at.
public struct AdvertisementDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the data was refused.
    public enum Reason: Hashable, Sendable {
        /// The data belongs to another company than the decoder reads.
        case otherCompany(UInt16)
        /// The heart-rate block (from its first byte to the end of the data) is not one of the
        /// lengths the decoder knows: the whole data's length when it is the only block, 0 when the
        /// data is empty.
        case unknownLength(Int, known: [Int])
        /// A 3- or 4-byte layout, read as one heart-rate block, whose data-type bit is set: it
        /// announces content other than heart rate.
        case notHeartRate
        /// Every block announces other content (GPB blocks, each skipped by its length): there is
        /// no heart-rate block.
        case noHeartRateBlock
        /// The GPB block at `offset` needs `needed` bytes (its first byte, its length byte and the
        /// content that byte announces) where only `available` remain: it contradicts the data's length.
        case truncatedBlock(offset: Int, needed: Int, available: Int)
        /// The strap broadcasts without a reading (heart rate 0).
        case noReading
        /// A reading broadcast under the address of a strap linked at that moment: its link's
        /// notifications are the strap's, so this one is refused whoever sent it.
        case heardWhileLinked
        /// Broadcast by a device whose address type (`seen`: `public`, `random`) is not the one
        /// configured for the strap at that address: another radio repeating the address.
        case addressTypeMismatch(seen: String)
    }

    /// The company identifier whose layout was being read (0x006B: Polar).
    public var company: UInt16
    /// The manufacturer data after the company identifier.
    public var bytes: [UInt8]
    /// Why it was refused.
    public var reason: Reason

    /// Creates an error for `bytes` under `company`.
    public init(company: UInt16, bytes: [UInt8], reason: Reason) {
        self.company = company
        self.bytes = bytes
        self.reason = reason
    }

    /// One line naming the company, the reason, and the offending block's length and offset.
    public var description: String {
        let what: String
        switch reason {
        case .otherCompany(let other):
            what = "manufacturer data of company 0x\(Self.hex(other)), not of this layout's"
        case .unknownLength(let length, let known):
            let expected = "a layout of \(known.map(String.init).joined(separator: " or ")) bytes expected"
            // The heart-rate block runs to the end: when other blocks come first, it starts after them.
            let offset = bytes.count - length
            what =
                offset > 0
                ? "a heart-rate block of \(length) bytes at offset \(offset), \(expected)"
                : "\(length) bytes, \(expected)"
        case .notHeartRate:
            what = "the data-type bit announces content other than heart rate"
        case .noHeartRateBlock:
            what = "no heart-rate block: every block announces other content (GPB)"
        case .truncatedBlock(let offset, let needed, let available) where available < 2:
            what = "the GPB block at offset \(offset) has no length byte (\(needed) bytes needed, \(available) left)"
        case .truncatedBlock(let offset, let needed, let available):
            what = "the GPB block at offset \(offset) announces \(needed) bytes, only \(available) left"
        case .noReading:
            what = "heart rate 0: the strap broadcasts without a reading"
        case .heardWhileLinked:
            what = "a reading broadcast while the strap is linked: the link's frames are its readings"
        case .addressTypeMismatch(let seen):
            what = "broadcast from a \(seen) address: the strap's configured address type is another"
        }
        return "manufacturer data 0x\(Self.hex(company)): \(what)"
    }

    private static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
