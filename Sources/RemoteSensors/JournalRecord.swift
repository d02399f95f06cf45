/// One record of a ``MeasurementJournal`` on disk: a magic, the strap's address, the envelope as
/// published, and a CRC-32C over everything between the magic and the checksum.
///
/// Layout: `A5 4A`, address length (1 byte, at most 17), address, envelope length (2 bytes,
/// little-endian, at most ``RemoteMeasurement`` header + value), envelope, CRC-32C (4 bytes,
/// little-endian). The magic lets a reader find the next record after damage; the checksum tells
/// damage from a record.
enum JournalRecord {
    static let magic: [UInt8] = [0xA5, 0x4A]
    static let maximumAddressBytes = 17
    static let maximumEnvelopeBytes = RemoteMeasurement.headerBytes + RemoteMeasurement.maximumValueBytes
    /// The longest record: what a reader keeps in its buffer at least.
    static let maximumBytes = 2 + 1 + maximumAddressBytes + 2 + maximumEnvelopeBytes + 4

    /// The bytes of one record.
    static func encode(address: [UInt8], envelope: [UInt8]) -> [UInt8] {
        var record = magic
        record.reserveCapacity(address.count + envelope.count + 9)
        record.append(UInt8(address.count))
        record += address
        record += [UInt8(envelope.count & 0xFF), UInt8(envelope.count >> 8)]
        record += envelope
        let crc = CRC32C.checksum(record[2...])
        withUnsafeBytes(of: crc.littleEndian) { record.append(contentsOf: $0) }
        return record
    }

    /// What lies at an offset of a buffer.
    enum Reading: Equatable {
        /// A whole record of this many bytes, its checksum right.
        case record(address: String, envelope: ArraySlice<UInt8>, length: Int)
        /// The buffer ends inside what may be a record.
        case incomplete
        /// No record starts here.
        case damaged
    }

    /// Reads the record at `index` of `bytes`.
    static func read(_ bytes: [UInt8], at index: Int) -> Reading {
        let available = bytes.count - index
        guard available >= 3 else {
            return bytes[index...].elementsEqual(magic.prefix(available)) ? .incomplete : .damaged
        }
        guard bytes[index] == magic[0], bytes[index + 1] == magic[1] else { return .damaged }
        let addressLength = Int(bytes[index + 2])
        guard addressLength <= maximumAddressBytes else { return .damaged }
        let lengthAt = index + 3 + addressLength
        guard lengthAt + 2 <= bytes.count else { return .incomplete }
        let envelopeLength = Int(bytes[lengthAt]) | Int(bytes[lengthAt + 1]) << 8
        guard envelopeLength <= maximumEnvelopeBytes else { return .damaged }
        let crcAt = lengthAt + 2 + envelopeLength
        guard crcAt + 4 <= bytes.count else { return .incomplete }
        let stored = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[crcAt + $1]) << (8 * $1) }
        guard CRC32C.checksum(bytes[(index + 2)..<crcAt]) == stored else { return .damaged }
        let address = bytes[(index + 3)..<lengthAt]
        guard isAddress(address) else { return .damaged }
        return .record(
            address: String(decoding: address, as: UTF8.self), envelope: bytes[(lengthAt + 2)..<crcAt],
            length: crcAt + 4 - index)
    }

    /// `C0:FF:EE:00:00:01`: six hexadecimal pairs, since the address read back becomes a topic.
    static func isAddress(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == 17 else { return false }
        for (offset, byte) in bytes.enumerated() {
            if offset % 3 == 2 {
                guard byte == UInt8(ascii: ":") else { return false }
            } else {
                let hex =
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                guard hex else { return false }
            }
        }
        return true
    }
}
