import Foundation

/// The TOML subset hrbridge's configuration uses, parsed with the line of every value so that
/// each problem can name its line (no mirrored TOML package builds here: LebJe/TOMLKit needs a
/// package that is not mirrored).
///
/// Supported: comments, `[table]` and `[[array.of.tables]]` headers (dotted names), `key = value`
/// with basic and literal strings (multi-line ones too), integers (with `_`, `0x`, `0o`, `0b`),
/// floats, booleans, arrays of those (over several lines too) and inline tables. Dates and times
/// (no key takes one) and anything else are a syntax error naming its line.
public struct TOMLDocument: Sendable {
    /// A parsed value and the line it starts on (1-based).
    public struct Value: Sendable {
        /// What the value is.
        public enum Kind: Sendable {
            case string(String)
            case integer(Int)
            case float(Double)
            case boolean(Bool)
            case array([Value])
            case table(Table)
            case tables([Table])
        }

        /// What it is.
        public var kind: Kind
        /// The 1-based line.
        public var line: Int

        /// The value as a number, integer or float.
        public var number: Double? {
            switch kind {
            case .integer(let value): Double(value)
            case .float(let value): value
            default: nil
            }
        }

        /// A short name of the type, for messages: "a string".
        public var typeName: String {
            switch kind {
            case .string: "a string"
            case .integer: "an integer"
            case .float: "a float"
            case .boolean: "a boolean"
            case .array: "an array"
            case .table: "a table"
            case .tables: "an array of tables"
            }
        }
    }

    /// A table: keys in the order written, with their values.
    public struct Table: Sendable {
        /// The values by key.
        public var entries: [String: Value] = [:]
        /// The keys in the order written.
        public var keys: [String] = []
        /// The line of the table's header (0 for the root table).
        public var line: Int
        /// Written inline (`{ … }`): complete as written, never extended by a header or a dotted key.
        public internal(set) var isInline = false

        /// The value of a key.
        public subscript(key: String) -> Value? { entries[key] }

        mutating func set(_ key: String, _ value: Value) {
            if entries[key] == nil { keys.append(key) }
            entries[key] = value
        }
    }

    /// A syntax error: the line and what is wrong.
    public struct SyntaxError: Error, Sendable, CustomStringConvertible {
        /// The 1-based line.
        public var line: Int
        /// What is wrong, in words.
        public var message: String
        /// A one-line description for messages and logs.
        public var description: String { "line \(line): \(message)" }
    }

    /// The root table.
    public var root: Table

    /// How deeply arrays may nest (the configuration needs 2 levels); deeper is refused, not
    /// recursed into.
    public static let maximumNesting = 8

    /// How many parts a dotted key may have (the configuration needs 2): tables are made and
    /// walked a level per part, so a longer key is refused before any of that.
    public static let maximumKeyParts = 8

    /// Parses `text`.
    public init(parsing text: String) throws(SyntaxError) {
        var parser = Parser(text: text)
        root = try parser.parse()
    }
}

private struct Parser {
    let characters: [Character]
    var index = 0
    var line = 1
    /// Arrays open around the value being read.
    var nesting = 0

    init(text: String) { characters = Array(text.replacingOccurrences(of: "\r\n", with: "\n")) }

    /// What ends a bare value (separate characters: "\r\n" would be one grapheme).
    static let wordEnds: Set<Character> = [" ", "\t", "\r", "\n", ",", "]", "#"]

    var current: Character? { index < characters.count ? characters[index] : nil }

    /// The character `offset` places ahead.
    func peek(_ offset: Int) -> Character? { index + offset < characters.count ? characters[index + offset] : nil }

    mutating func advance() {
        if current == "\n" { line += 1 }
        index += 1
    }

    func error(_ message: String) -> TOMLDocument.SyntaxError { TOMLDocument.SyntaxError(line: line, message: message) }

    mutating func skipSpaces() {
        while let character = current, character == " " || character == "\t" { advance() }
    }

    /// Skips spaces, comments and newlines (inside arrays).
    mutating func skipBlank() {
        while let character = current {
            if character == " " || character == "\t" || character == "\n" || character == "\r" {
                advance()
            } else if character == "#" {
                while let next = current, next != "\n" { advance() }
            } else {
                break
            }
        }
    }

    /// Expects the end of a line (spaces and a comment allowed).
    mutating func endOfLine() throws(TOMLDocument.SyntaxError) {
        skipSpaces()
        if current == "#" { while let next = current, next != "\n" { advance() } }
        if current == "\r" { advance() }
        guard current == nil || current == "\n" else {
            throw error("unexpected '\(current!)' after the value; one key = value per line")
        }
        if current == "\n" { advance() }
    }

    mutating func parse() throws(TOMLDocument.SyntaxError) -> TOMLDocument.Table {
        var root = TOMLDocument.Table(line: 0)
        // The path of the table keys go into, and whether it is the last element of an array of tables.
        var target: [String] = []
        var definedTables: Set<[String]> = []
        while current != nil {
            skipBlank()
            guard let character = current else { break }
            if character == "[" {
                let headerLine = line
                advance()
                let isArray = current == "["
                if isArray { advance() }
                skipSpaces()
                let path = try keyPath(until: "]")
                guard current == "]" else { throw error("a table header ends with ]") }
                advance()
                if isArray {
                    guard current == "]" else { throw error("an array-of-tables header ends with ]]") }
                    advance()
                }
                try endOfLine()
                if isArray {
                    try appendTable(at: path, in: &root, line: headerLine)
                } else {
                    guard definedTables.insert(path).inserted else {
                        throw TOMLDocument.SyntaxError(
                            line: headerLine, message: "table [\(path.joined(separator: "."))] is defined twice")
                    }
                    try createTable(at: path, in: &root, line: headerLine)
                }
                target = path
            } else {
                let keyLine = line
                let path = try keyPath(until: "=")
                guard current == "=" else { throw error("expected = after the key '\(path.joined(separator: "."))'") }
                advance()
                skipSpaces()
                let value = try parseValue(of: path.joined(separator: "."))
                try endOfLine()
                try insert(value, at: target, key: path, in: &root, line: keyLine)
            }
        }
        return root
    }

    /// Reads a dotted key (bare or quoted parts) up to `terminator`.
    mutating func keyPath(until terminator: Character) throws(TOMLDocument.SyntaxError) -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            if current == "\"" || current == "'" {
                guard case .string(let text) = try parseString().kind else { break }
                parts.append(text)
            } else {
                var bare = ""
                while let character = current,
                    character.isLetter || character.isNumber || character == "_" || character == "-"
                {
                    bare.append(character)
                    advance()
                }
                guard !bare.isEmpty else {
                    throw error(current.map { "unexpected '\($0)' in a key" } ?? "a key is missing")
                }
                parts.append(bare)
            }
            skipSpaces()
            if current == "." {
                guard parts.count < TOMLDocument.maximumKeyParts else {
                    throw error("a dotted key has more than \(TOMLDocument.maximumKeyParts) parts")
                }
                advance()
                continue
            }
            break
        }
        guard current == terminator else {
            let found = current.map { $0 == "\n" ? "the end of the line" : "'\($0)'" } ?? "the end of the file"
            throw error("expected '\(terminator)' after the key, found \(found)")
        }
        return parts
    }

    /// Reads the value of `key` (named in messages).
    mutating func parseValue(of key: String) throws(TOMLDocument.SyntaxError) -> TOMLDocument.Value {
        let valueLine = line
        guard let character = current else { throw error("a value is missing") }
        switch character {
        case "\"", "'":
            if peek(1) == character && peek(2) == character { return try parseMultilineString() }
            return try parseString()
        case "[":
            guard nesting < TOMLDocument.maximumNesting else {
                throw error("arrays nest deeper than \(TOMLDocument.maximumNesting) levels")
            }
            nesting += 1
            defer { nesting -= 1 }
            advance()
            var elements: [TOMLDocument.Value] = []
            while true {
                skipBlank()
                if current == "]" {
                    advance()
                    break
                }
                elements.append(try parseValue(of: key))
                skipBlank()
                if current == "," {
                    advance()
                } else if current == "]" {
                    advance()
                    break
                } else {
                    throw error("expected , or ] in the array")
                }
            }
            return TOMLDocument.Value(kind: .array(elements), line: valueLine)
        case "{":
            return try parseInlineTable(of: key)
        default:
            var word = ""
            while let next = current, !Self.wordEnds.contains(next) {
                word.append(next)
                advance()
            }
            if word == "true" { return TOMLDocument.Value(kind: .boolean(true), line: valueLine) }
            if word == "false" { return TOMLDocument.Value(kind: .boolean(false), line: valueLine) }
            guard !word.isEmpty else { throw error("a value is missing") }
            // A word is shown only once it reads as a number: an unquoted token or password would
            // otherwise go to the journal.
            let digits = word.replacingOccurrences(of: "_", with: "")
            if word.wholeMatch(of: Self.decimalInteger) != nil {
                guard let value = Int(digits) else {
                    throw error(
                        "'\(key)' = \(word.prefix(40)) is out of range for an integer (\(Int.min) to \(Int.max))")
                }
                return TOMLDocument.Value(kind: .integer(value), line: valueLine)
            }
            for (pattern, radix) in [(Self.hexInteger, 16), (Self.octalInteger, 8), (Self.binaryInteger, 2)]
            where word.wholeMatch(of: pattern) != nil {
                guard let value = Int(digits.dropFirst(2), radix: radix) else {
                    throw error(
                        "'\(key)' = \(word.prefix(40)) is out of range for an integer (\(Int.min) to \(Int.max))")
                }
                return TOMLDocument.Value(kind: .integer(value), line: valueLine)
            }
            if word.wholeMatch(of: Self.float) != nil, let value = Double(digits), value.isFinite {
                return TOMLDocument.Value(kind: .float(value), line: valueLine)
            }
            if word.wholeMatch(of: Self.infinityOrNaN) != nil {
                throw error("'\(key)': inf and nan are not values any key here takes")
            }
            let numberCharacters = Set("0123456789abcdefABCDEFxo_+-.")
            if word.contains(where: \.isNumber), word.allSatisfy(numberCharacters.contains) {
                throw error(
                    "'\(key)' is not a TOML number (no leading zeros or signs on 0x/0o/0b, an underscore only "
                        + "between digits, digits on both sides of a decimal point)")
            }
            throw error("the value of '\(key)' is not a TOML value (strings need quotes)")
        }
    }

    /// TOML 1.0's number syntax; an underscore only between two digits.
    nonisolated(unsafe) static let decimalInteger = #/[+-]?(?:0|[1-9](?:_?[0-9])*)/#
    nonisolated(unsafe) static let hexInteger = #/0x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*/#
    nonisolated(unsafe) static let octalInteger = #/0o[0-7](?:_?[0-7])*/#
    nonisolated(unsafe) static let binaryInteger = #/0b[01](?:_?[01])*/#
    nonisolated(unsafe) static let float =
        #/[+-]?(?:0|[1-9](?:_?[0-9])*)(?:\.[0-9](?:_?[0-9])*(?:[eE][+-]?[0-9](?:_?[0-9])*)?|[eE][+-]?[0-9](?:_?[0-9])*)/#
    nonisolated(unsafe) static let infinityOrNaN = #/[+-]?(?:inf|nan)/#

    static func isControl(_ character: Character) -> Bool {
        character.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// A character as a message may show it: printable as itself, a control character as U+ and its hex.
    static func shown(_ character: Character) -> String {
        guard isControl(character) else { return String(character) }
        return character.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }.joined()
    }

    mutating func parseString() throws(TOMLDocument.SyntaxError) -> TOMLDocument.Value {
        let valueLine = line
        let quote = current!
        advance()
        var text = ""
        while true {
            guard let character = current, character != "\n" else { throw error("unterminated string") }
            advance()
            if character == quote { break }
            if character == "\\" && quote == "\"" {
                guard let escaped = current else { throw error("unterminated string") }
                advance()
                try appendEscape(escaped, to: &text)
            } else if character != "\t", Self.isControl(character) {
                // TOML: control characters other than tab are written as escapes.
                throw error("a control character in a string (\(Self.shown(character))): write it as an escape")
            } else {
                text.append(character)
            }
        }
        return TOMLDocument.Value(kind: .string(text), line: valueLine)
    }

    /// The character a basic string's escape `\escaped` stands for (its `u` or `U` digits read on).
    mutating func appendEscape(_ escaped: Character, to text: inout String) throws(TOMLDocument.SyntaxError) {
        switch escaped {
        case "n": text.append("\n")
        case "t": text.append("\t")
        case "r": text.append("\r")
        case "\"": text.append("\"")
        case "\\": text.append("\\")
        case "b": text.append("\u{08}")
        case "f": text.append("\u{0C}")
        case "u", "U":
            var hex = ""
            for _ in 0..<(escaped == "u" ? 4 : 8) {
                guard let digit = current, digit.isASCII, digit.isHexDigit else { break }
                hex.append(digit)
                advance()
            }
            guard hex.count == (escaped == "u" ? 4 : 8),
                let scalar = UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init)
            else {
                throw error("bad unicode escape \\\(escaped)\(hex)")
            }
            // Every path, name and token here ends at a NUL in C: never one in a value.
            guard scalar.value != 0 else { throw error("\\u0000 (NUL) has no place in a value") }
            text.unicodeScalars.append(scalar)
        default: throw error("unknown escape \\\(Self.shown(escaped))")
        }
    }

    /// A `"""basic"""` or `'''literal'''` string over any number of lines: a newline right after
    /// the opening quotes is not part of it; in a basic one, a backslash ending a line joins it to
    /// the next non-blank character; up to two quotes may stand before the closing three.
    mutating func parseMultilineString() throws(TOMLDocument.SyntaxError) -> TOMLDocument.Value {
        let valueLine = line
        let quote = current!
        for _ in 0..<3 { advance() }
        // Named by the line it opens on: its end is the end of the file.
        let unterminated = TOMLDocument.SyntaxError(
            line: valueLine, message: "unterminated multi-line string: no closing \(String(repeating: quote, count: 3))"
        )
        if current == "\n" { advance() }
        var text = ""
        while true {
            guard let character = current else { throw unterminated }
            if character == quote, peek(1) == quote, peek(2) == quote {
                var quotes = 3
                while quotes < 5, peek(quotes) == quote { quotes += 1 }
                text.append(String(repeating: quote, count: quotes - 3))
                for _ in 0..<quotes { advance() }
                break
            }
            advance()
            if character == "\\" && quote == "\"" {
                guard let escaped = current else { throw unterminated }
                if escaped == " " || escaped == "\t" || escaped == "\n" {
                    while let next = current, next == " " || next == "\t" { advance() }
                    guard current == "\n" else {
                        throw error("a backslash before a space joins lines only at the end of a line")
                    }
                    while let next = current, next == " " || next == "\t" || next == "\n" { advance() }
                    continue
                }
                advance()
                try appendEscape(escaped, to: &text)
            } else if character != "\t", character != "\n", Self.isControl(character) {
                throw error("a control character in a string (\(Self.shown(character))): write it as an escape")
            } else {
                text.append(character)
            }
        }
        return TOMLDocument.Value(kind: .string(text), line: valueLine)
    }

    /// `{ key = value, … }` on one line, as TOML has it (no newline, no trailing comma).
    mutating func parseInlineTable(of key: String) throws(TOMLDocument.SyntaxError) -> TOMLDocument.Value {
        let valueLine = line
        guard nesting < TOMLDocument.maximumNesting else {
            throw error("arrays and inline tables nest deeper than \(TOMLDocument.maximumNesting) levels")
        }
        nesting += 1
        defer { nesting -= 1 }
        advance()
        var table = TOMLDocument.Table(line: valueLine)
        skipSpaces()
        if current == "}" {
            advance()
        } else {
            while true {
                skipSpaces()
                guard current != "}" else { throw error("no comma after the last entry of an inline table") }
                guard let next = current, next != "\n" else {
                    throw error(
                        "the inline table of '\(key)' is not closed on its line (an inline table stays on one line)")
                }
                let entryLine = line
                let path = try keyPath(until: "=")
                advance()
                skipSpaces()
                let value = try parseValue(of: key + "." + path.joined(separator: "."))
                try insert(value, at: [], key: path, in: &table, line: entryLine)
                skipSpaces()
                if current == "," {
                    advance()
                } else if current == "}" {
                    advance()
                    break
                } else {
                    let found =
                        current.map { $0 == "\n" ? "the end of the line" : "'\(Self.shown($0))'" }
                        ?? "the end of the file"
                    throw error(
                        "expected , or } in the inline table of '\(key)', found \(found) (an inline table stays on one line)"
                    )
                }
            }
        }
        table.isInline = true
        return TOMLDocument.Value(kind: .table(table), line: valueLine)
    }

    // MARK: Building the tree

    func createTable(at path: [String], in root: inout TOMLDocument.Table, line: Int) throws(TOMLDocument.SyntaxError) {
        try modify(&root, path: path.dropLast(), line: line) {
            (table: inout TOMLDocument.Table) throws(TOMLDocument.SyntaxError) in
            let name = path.last!
            if let existing = table[name] {
                guard case .table(let defined) = existing.kind else {
                    throw TOMLDocument.SyntaxError(line: line, message: "'\(name)' is already \(existing.typeName)")
                }
                guard !defined.isInline else {
                    throw TOMLDocument.SyntaxError(
                        line: line, message: "'\(name)' is an inline table, complete as written; it cannot be extended")
                }
                return
            }
            table.set(name, TOMLDocument.Value(kind: .table(TOMLDocument.Table(line: line)), line: line))
        }
    }

    func appendTable(at path: [String], in root: inout TOMLDocument.Table, line: Int) throws(TOMLDocument.SyntaxError) {
        try modify(&root, path: path.dropLast(), line: line) {
            (table: inout TOMLDocument.Table) throws(TOMLDocument.SyntaxError) in
            let name = path.last!
            var tables: [TOMLDocument.Table] = []
            if let existing = table[name] {
                guard case .tables(let current) = existing.kind else {
                    throw TOMLDocument.SyntaxError(line: line, message: "'\(name)' is already \(existing.typeName)")
                }
                tables = current
            }
            tables.append(TOMLDocument.Table(line: line))
            table.set(name, TOMLDocument.Value(kind: .tables(tables), line: table[name]?.line ?? line))
        }
    }

    func insert(
        _ value: TOMLDocument.Value, at target: [String], key: [String], in root: inout TOMLDocument.Table, line: Int
    ) throws(TOMLDocument.SyntaxError) {
        for depth in 1..<key.count {
            let prefix = target + key.prefix(depth)
            var exists = false
            try modify(&root, path: prefix.dropLast(), line: line) { table throws(TOMLDocument.SyntaxError) in
                exists = table[prefix.last!] != nil
            }
            if !exists { try createTable(at: Array(prefix), in: &root, line: line) }
        }
        try modify(&root, path: target + key.dropLast(), line: line) { table throws(TOMLDocument.SyntaxError) in
            let name = key.last!
            guard table[name] == nil else {
                throw TOMLDocument.SyntaxError(line: line, message: "'\(key.joined(separator: "."))' is set twice")
            }
            table.set(name, value)
        }
    }

    /// Runs `body` on the table at `path` (the last element of an array of tables along the way).
    func modify(
        _ table: inout TOMLDocument.Table, path: some Collection<String>, line: Int,
        _ body: (inout TOMLDocument.Table) throws(TOMLDocument.SyntaxError) -> Void
    ) throws(TOMLDocument.SyntaxError) {
        guard let first = path.first else {
            try body(&table)
            return
        }
        guard var value = table[first] else {
            var child = TOMLDocument.Table(line: line)
            try modify(&child, path: path.dropFirst(), line: line, body)
            table.set(first, TOMLDocument.Value(kind: .table(child), line: line))
            return
        }
        switch value.kind {
        case .table(var child):
            guard !child.isInline else {
                throw TOMLDocument.SyntaxError(
                    line: line, message: "'\(first)' is an inline table, complete as written; it cannot be extended")
            }
            try modify(&child, path: path.dropFirst(), line: line, body)
            value.kind = .table(child)
        case .tables(var children) where !children.isEmpty:
            try modify(&children[children.count - 1], path: path.dropFirst(), line: line, body)
            value.kind = .tables(children)
        default:
            throw TOMLDocument.SyntaxError(line: line, message: "'\(first)' is \(value.typeName), not a table")
        }
        table.entries[first] = value
    }
}
