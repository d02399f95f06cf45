/// Manufacturer data in an advertisement that a strict decoder refused.
///
/// Advertisements are broadcast by anyone in range: a layout the decoder does not know is refused,
/// never guessed at.
public struct AdvertisementDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the data was refused.
    public enum Reason: Hashable, Sendable {
        /// The data belongs to another company than the decoder reads.
        case otherCompany(UInt16)
        /// The data's length is not one of the layouts the decoder knows.
        case unknownLength(Int, known: [Int])
        /// The data announces content other than heart rate (its data-type bit is set).
        case notHeartRate
        /// The strap broadcasts without a reading (heart rate 0).
        case noReading
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

    /// One line naming the company, the reason and the length.
    public var description: String {
        let what: String
        switch reason {
        case .otherCompany(let other):
            what = "manufacturer data of company 0x\(Self.hex(other)), not of this layout's"
        case .unknownLength(let length, let known):
            what = "\(length) bytes, a layout of \(known.map(String.init).joined(separator: " or ")) bytes expected"
        case .notHeartRate:
            what = "the data-type bit announces content other than heart rate"
        case .noReading:
            what = "heart rate 0: the strap broadcasts without a reading"
        }
        return "manufacturer data 0x\(Self.hex(company)): \(what)"
    }

    private static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
