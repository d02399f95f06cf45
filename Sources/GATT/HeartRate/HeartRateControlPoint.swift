/// Commands written to the Heart Rate Control Point (0x2A39).
public enum HeartRateControlPoint: UInt8, Hashable, Sendable, CaseIterable {
    /// Resets Energy Expended to 0 (value 0x01, the only defined command).
    case resetEnergyExpended = 0x01

    /// The bytes to write.
    public func encoded() -> [UInt8] { [rawValue] }

    /// Interprets the ATT error a server returned for a control-point write.
    ///
    /// - Returns: a typed ``HeartRateControlPointError``.
    public static func error(forATTError code: ATTErrorCode) -> HeartRateControlPointError {
        code == .controlPointNotSupported ? .notSupported : .attError(code)
    }
}

/// Why a Heart Rate Control Point write failed.
public enum HeartRateControlPointError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The strap refused the value with ATT error 0x80, Control Point Not Supported.
    case notSupported
    /// The strap answered with another ATT error.
    case attError(ATTErrorCode)

    /// One line for logs.
    public var description: String {
        switch self {
        case .notSupported: "heart rate control point: value not supported (ATT error 0x80)"
        case .attError(let code): "heart rate control point: ATT error \(code)"
        }
    }
}
