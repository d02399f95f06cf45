/// Bytes from hex text such as `1E 55 32 00`; traps on bad hex, which only a broken test gives.
func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd hex digit count in test vector")
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

/// `count` copies of a hex group, joined: `repeated("00 04", 9)`.
func repeated(_ group: String, _ count: Int) -> String {
    Array(repeating: group, count: count).joined(separator: " ")
}
