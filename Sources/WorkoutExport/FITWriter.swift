/// The low-level FIT encoding: header, definition and data records, CRC.
///
/// Little-endian throughout; one local message type per global message, defined before first use.
struct FITWriter {
    /// FIT base types.
    enum BaseType: UInt8 {
        case enumeration = 0x00
        case uint8 = 0x02
        case uint16 = 0x84
        case sint16 = 0x83
        case uint32 = 0x86
        case string = 0x07
        case uint32z = 0x8C
        case byte = 0x0D
        case float32 = 0x88

        var size: Int {
            switch self {
            case .enumeration, .uint8, .string, .byte: 1
            case .uint16, .sint16: 2
            case .uint32, .uint32z, .float32: 4
            }
        }

        /// The value meaning "invalid" for the type.
        var invalid: UInt64 {
            switch self {
            case .enumeration, .uint8, .byte: 0xFF
            case .float32: 0xFFFF_FFFF
            case .uint16: 0xFFFF
            case .sint16: 0x7FFF
            case .uint32: 0xFFFF_FFFF
            case .uint32z: 0
            case .string: 0
            }
        }
    }

    /// What an integer of `type` may hold; anything else is written as the type's invalid value
    /// (a 300 bpm heart rate in a `uint8` must not wrap to 44).
    static func encoded(_ number: Int64, as type: BaseType) -> UInt64 {
        let valid: ClosedRange<Int64>? =
            switch type {
            case .enumeration, .uint8: 0...0xFE
            case .byte: 0...0xFF
            case .uint16: 0...0xFFFE
            case .sint16: -0x8000...0x7FFE
            case .uint32: 0...0xFFFF_FFFE
            case .uint32z: 1...0xFFFF_FFFF
            case .string, .float32: nil
            }
        guard let valid, !valid.contains(number) else { return UInt64(bitPattern: number) }
        return type.invalid
    }

    /// A field of a message: its number, type, and how many elements (arrays, strings).
    struct Field: Hashable {
        let number: UInt8
        let type: BaseType
        let count: Int

        init(_ number: UInt8, _ type: BaseType, count: Int = 1) {
            self.number = number
            self.type = type
            self.count = count
        }
    }

    /// A developer field of a message: its number in the field description, its type, and the
    /// developer data index it belongs to.
    struct DeveloperField: Hashable {
        let number: UInt8
        let type: BaseType
        let developerIndex: UInt8
    }

    /// A value for a field.
    enum Value {
        case integer(Int64?)
        case array([Int64])
        case text(String)
        /// A float32 (nil: invalid).
        case real(Double?)
    }

    private(set) var data: [UInt8] = []
    private var definitions: [UInt16: (local: UInt8, fields: [Field], developer: [DeveloperField])] = [:]
    private var nextLocal: UInt8 = 0

    /// 631065600: seconds from the Unix epoch to the FIT epoch (1989-12-31T00:00:00Z).
    static let epochOffset: Double = 631_065_600

    /// The `date_time` values that are dates: seconds since the FIT epoch in a uint32 (0xFFFFFFFF
    /// is invalid), and from 0x10000000 (1998-07-03T21:24:16Z) on, as smaller values are read as
    /// seconds since the device powered on.
    static let dateTimes: ClosedRange<Int64> = 0x1000_0000...0xFFFF_FFFE

    /// Writes a message, defining (or redefining) its local type when its fields differ;
    /// `developer` fields follow the standard ones (the definition then carries the developer flag).
    mutating func write(
        global: UInt16, _ fields: [(Field, Value)], developer: [(DeveloperField, Value)] = []
    ) {
        let layout = fields.map(\.0)
        let developerLayout = developer.map(\.0)
        let local: UInt8
        if let existing = definitions[global], existing.fields == layout, existing.developer == developerLayout {
            local = existing.local
        } else {
            local = definitions[global]?.local ?? nextLocal
            if definitions[global] == nil { nextLocal = (nextLocal + 1) % 16 }
            definitions[global] = (local, layout, developerLayout)
            data.append(0x40 | (developerLayout.isEmpty ? 0 : 0x20) | local)
            data.append(0)  // reserved
            data.append(0)  // little-endian architecture
            append(UInt64(global), size: 2)
            data.append(UInt8(layout.count))
            for field in layout {
                data.append(field.number)
                data.append(UInt8(field.type.size * field.count))
                data.append(field.type.rawValue)
            }
            if !developerLayout.isEmpty {
                data.append(UInt8(developerLayout.count))
                for field in developerLayout {
                    data.append(field.number)
                    data.append(UInt8(field.type.size))
                    data.append(field.developerIndex)
                }
            }
        }
        data.append(local)
        for (field, value) in fields { append(value, type: field.type, count: field.count) }
        for (field, value) in developer { append(value, type: field.type, count: 1) }
    }

    private mutating func append(_ value: Value, type: BaseType, count: Int) {
        switch value {
        case .integer(let number):
            let raw = number.map { Self.encoded($0, as: type) } ?? type.invalid
            append(raw, size: type.size)
        case .array(let numbers):
            for index in 0..<count {
                let raw = index < numbers.count ? Self.encoded(numbers[index], as: type) : type.invalid
                append(raw, size: type.size)
            }
        case .text(let text):
            var bytes = Self.utf8(text, atMost: count - 1)
            bytes += Array(repeating: 0, count: count - bytes.count)
            data.append(contentsOf: bytes)
        case .real(let number):
            append(number.map { UInt64(Float($0).bitPattern) } ?? type.invalid, size: 4)
        }
    }

    /// `text` as UTF-8 of at most `limit` bytes, cut between characters: a cut inside one would
    /// leave invalid UTF-8, which readers refuse or show as garbage.
    static func utf8(_ text: String, atMost limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for character in text {
            let encoded = Array(String(character).utf8)
            guard bytes.count + encoded.count <= limit else { break }
            bytes += encoded
        }
        return bytes
    }

    private mutating func append(_ value: UInt64, size: Int) {
        for index in 0..<size { data.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    /// The complete file: 14-byte header with its CRC, the records, the file CRC.
    func file() -> [UInt8] {
        var header: [UInt8] = [14, 0x20]
        header += [UInt8(truncatingIfNeeded: 2132), UInt8(truncatingIfNeeded: 2132 >> 8)]  // profile 21.32
        let size = UInt32(data.count)
        header += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * UInt32($0))) }
        header += Array(".FIT".utf8)
        let headerCRC = Self.crc(header)
        header += [UInt8(truncatingIfNeeded: headerCRC), UInt8(truncatingIfNeeded: headerCRC >> 8)]
        var file = header + data
        let fileCRC = Self.crc(file)
        file += [UInt8(truncatingIfNeeded: fileCRC), UInt8(truncatingIfNeeded: fileCRC >> 8)]
        return file
    }

    /// The FIT CRC-16.
    static func crc(_ bytes: [UInt8]) -> UInt16 {
        let table: [UInt16] = [
            0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401, 0xA001, 0x6C00, 0x7800, 0xB401, 0x5000,
            0x9C01, 0x8801, 0x4400,
        ]
        var crc: UInt16 = 0
        for byte in bytes {
            var temporary = table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ temporary ^ table[Int(byte & 0xF)]
            temporary = table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ temporary ^ table[Int((byte >> 4) & 0xF)]
        }
        return crc
    }
}
