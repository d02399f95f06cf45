import BusHarness
import Foundation
import Testing
import Workouts

@testable import Bridge

/// Our TOML reader against Python's `tomllib` (the standard library's TOML 1.0 decoder): every
/// document here reads to the same tree in both, or is refused by both.
@Suite("TOML: the configuration reader agrees with Python's tomllib")
struct TOMLConformanceTests {
    /// Reads each document of the JSON array in argv[1] and prints, per document, `doc N ok TREE`
    /// (tagged: the type of every leaf kept) or `doc N error MESSAGE`.
    static let decoder = """
        import json, sys, tomllib
        def tag(value):
            if isinstance(value, bool): return {"b": value}
            if isinstance(value, int): return {"i": str(value)}
            if isinstance(value, float): return {"f": repr(value)}
            if isinstance(value, str): return {"s": value}
            if isinstance(value, list): return {"a": [tag(v) for v in value]}
            if isinstance(value, dict): return {"t": {k: tag(v) for k, v in value.items()}}
            raise TypeError(type(value))
        for number, text in enumerate(json.load(open(sys.argv[1]))):
            try:
                print("doc", number, "ok", json.dumps(tag(tomllib.loads(text))), flush=True)
            except tomllib.TOMLDecodeError as error:
                print("doc", number, "error", str(error).replace("\\n", " "), flush=True)
        print("done", flush=True)
        """

    static let valid: [String] = [
        // Multi-line basic strings: the newline after the quotes trimmed, escapes, a backslash
        // joining lines, quotes before the closing three.
        "a = \"\"\"\nRoses are red\nViolets are blue\"\"\"",
        "b = \"\"\"\\\n   The quick \\\n\n   brown fox.\\\n   \"\"\"",
        "c = \"\"\"He said \"\"hi\"\".\"\"\"\nd = \"\"\"x\"\"\"\"\"\ne = \"\"\"\"\"\"",
        "f = \"\"\"tab\\there, \\u00e9 and \\U0001F600\r\nCRLF ends\"\"\"",
        // Multi-line literal strings: nothing escaped.
        "g = '''\nC:\\Users\\nobody\\  raw \\n\n  kept'''\nh = ''''That's' '''\ni = '''x'''''",
        // Inline tables: nested, dotted and quoted keys, empty, in arrays over several lines.
        "point = { x = 1, y = -2.5, z = 1e3 }\nname = { first = \"Tom\", \"last name\" = 'P' }",
        "a = { b = { c = true, d = [1, 2] } }\nd = { e.f = 0x1F, e.g = 0o17 }\ng = {}",
        "tokens = [\n  { token = \"x\", role = \"read\" },  # a comment\n  { token = \"y\", role = \"control\" },\n]",
        // What the configuration has always been written as.
        "[adapter]\nkind = \"mock\"\nspeed = 2.0\n\n[[api.tokens]]\ntoken = \"t\"\nrole = \"read\"\n[[api.tokens]]\ntoken = \"u\"\nrole = \"control\"\n[api]\ntcp_port = 8_086",
        "[a.b]\nc = 1\n[a]\nd = \"\"\"two\nlines\"\"\"\n[[e]]\nf = { g = 1 }\n[[e]]\n[e.h]\ni = false",
    ]

    static let invalid: [String] = [
        "a = { b = 1,\n c = 2 }",
        "a = { b = 1, }",
        "a = { b = 1 }\n[a]",
        "a = { b = 1 }\na.c = 2",
        "a = { b = 1, b = 2 }",
        "a = { b = { c = 1 }, b.d = 2 }",
        "a = \"\"\"unterminated\nb = 1",
        "a = '''unterminated",
        "a = \"\"\"x \\ y\"\"\"",
        "a = \"\"\"bell \u{07}\"\"\"",
        "a = '''x''''''",
        "a = \"\"\"\\q\"\"\"",
        "a = { b = 1 } c = 2",
    ]

    /// A parsed value in the tagged form the script prints.
    static func tagged(_ value: TOMLDocument.Value) -> Any {
        switch value.kind {
        case .string(let text): ["s": text]
        case .integer(let number): ["i": String(number)]
        case .float(let number): ["f": "\(number)"]
        case .boolean(let flag): ["b": flag]
        case .array(let elements): ["a": elements.map(tagged)]
        case .table(let table): tagged(table)
        case .tables(let tables): ["a": tables.map(tagged)]
        }
    }

    static func tagged(_ table: TOMLDocument.Table) -> Any {
        ["t": table.entries.mapValues(tagged)]
    }

    /// Python's tree with its floats read back as Swift prints them (repr and Swift agree on the
    /// value, not always on the digits).
    static func normalized(_ tree: Any) -> Any {
        switch tree {
        case let leaf as [String: Any] where leaf.count == 1 && leaf["f"] is String:
            return ["f": Double(leaf["f"] as! String).map { "\($0)" } ?? "?"]
        case let dictionary as [String: Any]:
            return dictionary.mapValues(normalized)
        case let array as [Any]:
            return array.map(normalized)
        default:
            return tree
        }
    }

    static func canonical(_ tree: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: tree, options: [.sortedKeys]), as: UTF8.self)
    }

    /// Each document's line from tomllib, by number.
    static func tomllib(_ documents: [String]) async throws -> [Int: String] {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("toml-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONSerialization.data(withJSONObject: documents).write(to: file)
        let python = try Spawned("/usr/bin/python3", ["-c", decoder, file.path], label: "tomllib")
        defer { python.stop() }
        #expect(await python.wait() == 0, "\(python.output.suffix(5))")
        var lines: [Int: String] = [:]
        for line in python.output where line.hasPrefix("doc ") {
            let parts = line.split(separator: " ", maxSplits: 2)
            if parts.count == 3, let number = Int(parts[1]) { lines[number] = String(parts[2]) }
        }
        return lines
    }

    @Test("documents both read: the same tree, every type kept (multi-line strings, inline tables, the shipped file)")
    func sameTrees() async throws {
        let shipped = try String(
            contentsOf: packageRoot.appendingPathComponent("systemd/config.toml"), encoding: .utf8)
        let documents = Self.valid + [shipped]
        let theirs = try await Self.tomllib(documents)
        for (number, text) in documents.enumerated() {
            let line = try #require(theirs[number], "tomllib said nothing of document \(number)")
            #expect(line.hasPrefix("ok "), "tomllib refused document \(number): \(line)")
            guard line.hasPrefix("ok ") else { continue }
            let tree = try JSONSerialization.jsonObject(with: Data(line.dropFirst(3).utf8))
            let ours: TOMLDocument
            do {
                ours = try TOMLDocument(parsing: text)
            } catch {
                Issue.record("we refused document \(number) (\(error)):\n\(text)")
                continue
            }
            #expect(
                try Self.canonical(Self.tagged(ours.root)) == Self.canonical(Self.normalized(tree)),
                "document \(number):\n\(text)")
        }
    }

    @Test("documents both refuse: we name the line, never crash")
    func sameRefusals() async throws {
        let theirs = try await Self.tomllib(Self.invalid)
        for (number, text) in Self.invalid.enumerated() {
            #expect(theirs[number]?.hasPrefix("error ") == true, "tomllib read document \(number): \(text)")
            #expect(throws: TOMLDocument.SyntaxError.self, "we read document \(number): \(text)") {
                try TOMLDocument(parsing: text)
            }
        }
    }

    @Test("the configuration written with inline tables and multi-line strings reads as with [tables]")
    func configurationInline() throws {
        let inline = try ConfigurationLoader.parse(
            """
            adapter = { kind = "mock", speed = 2 }
            api = { tcp_port = 8086, tokens = [
                { token = "read-token-0123456789", role = "read" },
                { token = "control-token-0123456789", role = "control" },
            ] }
            athletes = [{ id = "alice", name = \"\"\"Alice \\
                Liddell\"\"\", max_hr = 190 }]
            """)
        let tables = try ConfigurationLoader.parse(
            """
            [adapter]
            kind = "mock"
            speed = 2

            [api]
            tcp_port = 8086
            [[api.tokens]]
            token = "read-token-0123456789"
            role = "read"
            [[api.tokens]]
            token = "control-token-0123456789"
            role = "control"

            [[athletes]]
            id = "alice"
            name = "Alice Liddell"
            max_hr = 190
            """)
        #expect(inline.tokens.map(\.value) == ["read-token-0123456789", "control-token-0123456789"])
        #expect(inline.tokens == tables.tokens)
        #expect(inline.tcpPort == 8086 && tables.tcpPort == 8086)
        #expect(inline.athletes.map(\.profile.name) == ["Alice Liddell"])
        #expect(inline.athletes.map(\.profile) == tables.athletes.map(\.profile))
        #expect("\(inline.adapter)" == "\(tables.adapter)")
    }
}
