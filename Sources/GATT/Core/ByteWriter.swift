/// Appends little-endian fields to a frame being encoded.
struct ByteWriter {
    private(set) var bytes: [UInt8]

    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func uint8(_ value: UInt8) { bytes.append(value) }

    mutating func uint16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func int16(_ value: Int16) { uint16(UInt16(bitPattern: value)) }

    mutating func uint24(_ value: UInt32) {
        uint16(UInt16(truncatingIfNeeded: value))
        uint8(UInt8(truncatingIfNeeded: value >> 16))
    }

    mutating func uint32(_ value: UInt32) {
        uint16(UInt16(truncatingIfNeeded: value))
        uint16(UInt16(truncatingIfNeeded: value >> 16))
    }
}
