public import Foundation

/// Writes one JSON object by hand, for the few lines printed per Bluetooth frame (`monitor --json`,
/// the daemon's `sample` and `measurement` messages), where `JSONEncoder` costs several times the
/// rest of the path (Benchmarks/README.md).
///
/// It writes the same bytes `JSONText.line` writes for the matching `Codable` type, provided the
/// caller adds the keys in bytewise order; each hand-written line has a test holding it to that.
public struct JSONObjectWriter: Sendable {
    private var bytes: [UInt8]
    private var first = true

    /// Starts an object (`{`).
    public init(capacity: Int = 192) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ key: StaticString) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// A key known only at run time (a dictionary's), escaped.
    private mutating func key(named key: String) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        Self.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// `"key":"text"`, escaped as JSON requires.
    public mutating func add(_ name: StaticString, _ text: String) {
        key(name)
        Self.appendString(text, to: &bytes)
    }

    /// `"key":"text"` or `"key":null`.
    public mutating func add(_ name: StaticString, _ text: String?) {
        guard let text else { return addNull(name) }
        add(name, text)
    }

    /// `"key":"0f1e…"`: the UUID in lowercase, as the stream writes session ids; by hand, as
    /// `uuidString` formats with `sprintf` and this runs once per frame of a recorded strap (and
    /// for every strap's and session's line each second).
    public mutating func add(_ name: StaticString, _ uuid: UUID) {
        key(name)
        bytes.append(UInt8(ascii: "\""))
        let hex: StaticString = "0123456789abcdef"
        withUnsafeBytes(of: uuid.uuid) { raw in
            hex.withUTF8Buffer { digits in
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                    bytes.append(digits[Int(byte >> 4)])
                    bytes.append(digits[Int(byte & 0x0f)])
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `"key":"0f1e…"` or `"key":null`.
    public mutating func add(_ name: StaticString, _ uuid: UUID?) {
        guard let uuid else { return addNull(name) }
        add(name, uuid)
    }

    /// `"key":42`.
    public mutating func add(_ name: StaticString, _ number: Int) {
        key(name)
        bytes.append(contentsOf: String(number).utf8)
    }

    /// `"key":42` or `"key":null`.
    public mutating func add(_ name: StaticString, _ number: Int?) {
        guard let number else { return addNull(name) }
        add(name, number)
    }

    /// `"key":0.833`; a number JSON cannot hold (NaN, infinity) is written as `null`.
    public mutating func add(_ name: StaticString, _ number: Double) {
        key(name)
        Self.appendNumber(number, to: &bytes)
    }

    /// `"key":0.833` or `"key":null`.
    public mutating func add(_ name: StaticString, _ number: Double?) {
        guard let number else { return addNull(name) }
        add(name, number)
    }

    /// `"key":["a","b"]`.
    public mutating func add(_ name: StaticString, _ texts: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, text) in texts.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendString(text, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":[0.833,0.8]`.
    public mutating func add(_ name: StaticString, _ numbers: [Double]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, number) in numbers.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendNumber(number, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":[512,-3]`: integers, compactly.
    public mutating func add(_ name: StaticString, integers: some Sequence<Int32>) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        var first = true
        for value in integers {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes.append(contentsOf: String(value).utf8)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":true`.
    public mutating func add(_ name: StaticString, _ flag: Bool) {
        key(name)
        bytes.append(contentsOf: (flag ? "true" : "false").utf8)
    }

    /// `"key":null`.
    public mutating func addNull(_ name: StaticString) {
        key(name)
        bytes.append(contentsOf: "null".utf8)
    }

    /// `"name":42` under a key known only at run time; the caller adds such keys in bytewise order too.
    public mutating func add(named name: String, _ number: Int) {
        key(named: name)
        bytes.append(contentsOf: String(number).utf8)
    }

    /// `"key":{…}`: an object written by `body`.
    public mutating func addObject(_ name: StaticString, _ body: (inout JSONObjectWriter) -> Void) {
        key(name)
        var inner = JSONObjectWriter(capacity: 64)
        body(&inner)
        bytes.append(contentsOf: inner.finish())
    }

    /// `"name":{…}` under a key known only at run time; the caller adds such keys in bytewise order too.
    public mutating func addObject(named name: String, _ body: (inout JSONObjectWriter) -> Void) {
        key(named: name)
        var inner = JSONObjectWriter(capacity: 64)
        body(&inner)
        bytes.append(contentsOf: inner.finish())
    }

    /// `"key":[{…},{…}]`: an object per element, written by `body`.
    public mutating func addObjects<Elements: Sequence>(
        _ name: StaticString, _ elements: Elements, _ body: (inout JSONObjectWriter, Elements.Element) -> Void
    ) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        var index = 0
        for element in elements {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            index += 1
            var inner = JSONObjectWriter(capacity: 64)
            body(&inner, element)
            bytes.append(contentsOf: inner.finish())
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"key":[…,…]`: values the caller wrote as JSON already (whole lines of other messages), as they are.
    public mutating func add(_ name: StaticString, encoded values: [String]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: value.utf8)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Closes the object and returns its bytes.
    public func finish() -> [UInt8] {
        var out = bytes
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Closes the object and returns it as text.
    public func text() -> String { String(decoding: finish(), as: UTF8.self) }

    /// JSON's string escapes, as `JSONEncoder` writes them.
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Swift's shortest round-trip digits, without a trailing `.0`, as `JSONEncoder` writes them.
    static func appendNumber(_ number: Double, to bytes: inout [UInt8]) {
        guard number.isFinite else {
            bytes.append(contentsOf: "null".utf8)
            return
        }
        let text = number.description
        if text.hasSuffix(".0") {
            bytes.append(contentsOf: text.utf8.dropLast(2))
        } else {
            bytes.append(contentsOf: text.utf8)
        }
    }
}
