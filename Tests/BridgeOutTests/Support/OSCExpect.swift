import BridgeOut

/// Comparisons for OSC values in tests.
enum OSCExpect {
    /// Same type and value; floats within `tolerance` (they are computed in Float).
    static func same(_ actual: OSCArgument?, _ expected: OSCArgument?, tolerance: Float = 1e-6) -> Bool {
        switch (actual, expected) {
        case (.float32(let a), .float32(let b)): abs(a - b) <= tolerance
        default: actual == expected
        }
    }

    /// Same addresses in the same order, each with the same single argument (within tolerance).
    static func same(_ actual: [OSCMessage], _ expected: [(String, OSCArgument)]) -> Bool {
        actual.count == expected.count
            && zip(actual, expected).allSatisfy { message, pair in
                message.address == pair.0 && message.arguments.count == 1 && same(message.arguments[0], pair.1)
            }
    }

    /// `2f 61 00 00`.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: " ")
    }
}
