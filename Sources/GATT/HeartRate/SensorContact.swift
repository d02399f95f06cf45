/// The sensor-contact state carried in bits 1–2 of a Heart Rate Measurement's flags.
public enum SensorContact: String, Hashable, Sendable, CaseIterable {
    /// The strap does not report contact (bit 2 clear, whatever bit 1 says).
    case notSupported
    /// The strap reports contact and has none: the reading is likely noise.
    case notDetected
    /// The strap reports good skin contact.
    case detected

    /// Reads the 2-bit field `(flags >> 1) & 3`: 0 and 1 mean not supported.
    init(flags: UInt8) {
        switch (flags >> 1) & 0b11 {
        case 0b11: self = .detected
        case 0b10: self = .notDetected
        default: self = .notSupported
        }
    }

    /// The flag bits that encode this state.
    var flagBits: UInt8 {
        switch self {
        case .notSupported: 0
        case .notDetected: 0b100
        case .detected: 0b110
        }
    }
}
