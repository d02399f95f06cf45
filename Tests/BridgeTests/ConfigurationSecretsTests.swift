import Foundation
import Testing

@testable import Bridge

/// What the configuration reader refuses that would otherwise leak a secret, hand one to another
/// user, or be silently misread.
@Suite("Configuration: secrets, strict strings and values no strap matches")
struct ConfigurationSecretsTests {
    /// The problems `text` is refused with (none: it was taken).
    private func problems(_ text: String) -> [ConfigurationProblem] {
        do {
            _ = try ConfigurationLoader.parse(text)
            return []
        } catch {
            return error.problems
        }
    }

    @Test(
        "a broker URL holding a password is refused without showing it: a gateway's [mqtt] and a hub's [adapter]",
        arguments: ["[mqtt]\nurl = \"URL\"", "[adapter]\nkind = \"mqtt\"\nurl = \"URL\""])
    func brokerCredentialsNotEchoed(template: String) {
        let found = problems(template.replacingOccurrences(of: "URL", with: "mqtt://room-1:hunter2@broker.lan:1883"))
        #expect(found.count == 1)
        #expect(found.first?.message.contains("credentials do not belong in the URL") == true, "\(found)")
        #expect(found.first?.message.contains("broker.lan") == true, "\(found)")
        #expect(!found.contains { $0.message.contains("hunter2") || $0.message.contains("room-1") }, "\(found)")
    }

    @Test(
        "secret files: a TLS key or password file anyone may read or write is refused, and a keys directory anyone may write"
    )
    func secretFilesAreOwnersOnly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = directory.appendingPathComponent("client.pem").path
        let key = directory.appendingPathComponent("client.key").path
        let password = directory.appendingPathComponent("password").path
        for path in [certificate, key, password] { try Data("x\n".utf8).write(to: URL(fileURLWithPath: path)) }
        let tls = "[mqtt]\nurl = \"mqtts://b:8883\"\ntls_cert = \"\(certificate)\"\ntls_key = \"\(key)\""
        let withPassword = "[mqtt]\nurl = \"mqtt://b\"\nusername = \"u\"\npassword_file = \"\(password)\""
        for (text, path, line) in [(tls, key, 4), (withPassword, password, 4)] {
            for (mode, saying) in [(0o644, "readable by every user"), (0o602, "writable by every user")] {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
                #expect(
                    problems(text).contains { $0.line == line && $0.message.contains(saying) },
                    "\(path) \(String(mode, radix: 8))")
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
            #expect(problems(text).isEmpty, "\(problems(text))")
        }

        let keys = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true)
        let room = keys.appendingPathComponent("room-1.key").path
        try Data((String(repeating: "ab", count: 32) + "\n").utf8).write(to: URL(fileURLWithPath: room))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: room)
        let hub = "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\ngateway_keys = \"\(keys.path)\""
        try FileManager.default.setAttributes([.posixPermissions: 0o750], ofItemAtPath: keys.path)
        #expect(problems(hub).isEmpty, "\(problems(hub))")
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: keys.path)
        #expect(problems(hub).contains { $0.line == 4 && $0.message.contains("writable by every user") })
    }

    @Test(
        "strings: raw control characters, a NUL and malformed unicode escapes are refused by line; \\b and \\f are read",
        arguments: [
            ("[adapter]\nkind = \"mo\u{01}ck\"", 2, "control character in a string (U+1)"),
            ("[adapter]\nkind = 'mo\u{1B}[31mck'", 2, "control character in a string (U+1B)"),
            ("[store]\npath = \"/var/lib/hrbridge/store.sqlite\\u0000.new\"", 2, "NUL"),
            ("[adapter]\nkind = \"\\u+041\"", 2, "bad unicode escape"),
            ("[adapter]\nkind = \"\\u41\"", 2, "bad unicode escape"),
            ("[adapter]\nkind = \"\\\u{07}\"", 2, "unknown escape \\U+7"),
        ])
    func strictStrings(text: String, line: Int, message: String) {
        let found = problems(text)
        #expect(found.count == 1 && found[0].line == line && found[0].message.contains(message), "\(found)")
    }

    @Test("the escapes TOML has are read as it says")
    func knownEscapes() throws {
        let configuration = try ConfigurationLoader.parse(
            "[[sensors]]\naddress = \"C0:FF:EE:00:00:01\"\nname = \"a\\bb\\fc\\td\\u00e9\"")
        #expect(configuration.sensors.first?.name == "a\u{08}b\u{0C}c\td\u{E9}")
    }

    @Test(
        "values no strap or gateway would ever match are refused: an empty nodes list, an address with a sign or wide digits",
        arguments: [
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nnodes = []", 4, "lists no gateway"),
            ("[[sensors]]\naddress = \"+C:FF:EE:00:00:01\"", 2, "not a Bluetooth address"),
            ("[[sensors]]\naddress = \"C0:FF:EE:00:00:０１\"", 2, "not a Bluetooth address"),
        ])
    func neverMatching(text: String, line: Int, message: String) {
        let found = problems(text)
        #expect(found.contains { $0.line == line && $0.message.contains(message) }, "\(found)")
    }

    @Test("acceleration settings: each problem on its own key's line; either one without acc in waveforms is refused")
    func accelerationLines() {
        let sensor = "[[sensors]]\naddress = \"A0:9E:1A:00:00:01\"\n"
        let range = problems(sensor + "waveforms = [\"acc\"]\nacc_rate = 50\nacc_range = 3")
        #expect(range.map(\.line) == [5] && range[0].message.contains("acc range is 2, 4 or 8"), "\(range)")
        let both = problems(sensor + "waveforms = [\"acc\"]\nacc_rate = 30\nacc_range = 3")
        #expect(both.map(\.line) == [4, 5], "\(both)")
        let withoutAcc = problems(sensor + "waveforms = [\"ecg\"]\nacc_rate = 999\nacc_range = 3")
        #expect(withoutAcc.map(\.line) == [4, 5], "\(withoutAcc)")
        #expect(withoutAcc.allSatisfy { $0.message.contains("applies with waveforms = [\"acc\"]") }, "\(withoutAcc)")
    }

    @Test(
        "numbers as TOML writes them: leading zeros, signs on prefixed integers, stray underscores and bare points are refused",
        arguments: [
            "priority = 010", "priority = 0x-10", "priority = 0x+ff", "priority = _1", "priority = 1__0",
            "priority = 1_", "priority = +0o7",
        ])
    func strictIntegers(line: String) {
        let found = problems("[[sensors]]\naddress = \"C0:FF:EE:00:00:01\"\n" + line)
        #expect(found.count == 1 && found[0].line == 3 && found[0].message.contains("not a TOML number"), "\(found)")
    }

    @Test("what TOML allows is read: underscores between digits, prefixed integers, exponents; inf and nan are named")
    func numbersRead() throws {
        let sensor = "[[sensors]]\naddress = \"C0:FF:EE:00:00:01\"\n"
        for (text, value) in [("1_000", 1_000), ("-0", 0), ("+7", 7), ("0x3_e8", 1_000), ("0o17", 15), ("0b1010", 10)] {
            let priority = try ConfigurationLoader.parse(sensor + "priority = \(text)").sensors.first?.priority
            #expect(priority == (text == "1_000" ? 1_000 : value), "\(text)")
        }
        for (text, speed) in [("2.5", 2.5), ("25e-1", 2.5), ("0.2_5E1", 2.5), ("1e0", 1.0)] {
            guard case .mock(_, _, let read) = try ConfigurationLoader.parse("[adapter]\nspeed = \(text)").adapter
            else {
                Issue.record("\(text): not the simulator")
                continue
            }
            #expect(read == speed, "\(text)")
        }
        for text in [".5", "5.", "1e", "1.e3", "01.5"] {
            #expect(
                problems("[adapter]\nspeed = \(text)").contains { $0.message.contains("not a TOML number") }, "\(text)")
        }
        #expect(problems("[adapter]\nspeed = inf").contains { $0.message.contains("inf and nan") })
    }

    @Test("an unquoted value is not shown in the problem: it may be a token or a password")
    func unquotedValuesNotEchoed() {
        let found = problems("[api]\ntcp_port = 8086\n[[api.tokens]]\ntoken = s3cr3t-token-0123456789\nrole = \"read\"")
        #expect(
            found.contains { $0.line == 4 && $0.message.contains("'token'") && $0.message.contains("quotes") },
            "\(found)")
        #expect(!found.contains { $0.message.contains("s3cr3t") }, "\(found)")
    }

    @Test(
        "password files are read when the configuration is: a directory, a FIFO, too large, empty or a blank first line is refused"
    )
    func passwordFilesRead() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("passwords-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String, _ bytes: Data) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try bytes.write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            return path
        }
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let subdirectory = directory.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: subdirectory.path)
        for (path, saying) in [
            (subdirectory.path, "is not a regular file"), (fifo, "is not a regular file"),
            (try file("large", Data(repeating: 0x61, count: 4_097)), "holds more than 4 KiB"),
            (try file("empty", Data()), "has no password"),
            (try file("blank", Data("\nsecret\n".utf8)), "has no password"),
            (try file("binary", Data([0xFF, 0xFE, 0x0A])), "is not UTF-8"),
        ] {
            for text in [
                "[mqtt]\nurl = \"mqtt://b\"\nusername = \"u\"\npassword_file = \"\(path)\"",
                "[store]\nurl = \"postgres://hrbridge@localhost/hrbridge\"\npassword_file = \"\(path)\"",
            ] {
                #expect(problems(text).contains { $0.message.contains(saying) }, "\(path): \(problems(text))")
            }
        }
        let good = try file("good", Data("secret\r\nnext\n".utf8))
        #expect(PasswordFile.read(good) == "secret")
        #expect(problems("[mqtt]\nurl = \"mqtt://b\"\nusername = \"u\"\npassword_file = \"\(good)\"").isEmpty)
    }

    @Test(
        "keys that would do nothing where they stand are refused, naming what they need",
        arguments: [
            ("[lsl]\nenabled = true\nstreams = [\"hr\"]\nacc_rate = 50", 4, "applies with \"acc\" in streams"),
            ("[lsl]\nenabled = true\nstreams = [\"hr\", \"rr\"]\nacc_range = 4", 4, "applies with \"acc\" in streams"),
            ("[lsl]\nenabled = true\nstreams = []", 3, "lists none"),
            ("[mqtt]\nurl = \"mqtt://b\"\njournal_megabytes = 8", 3, "needs publish_measurements"),
            ("[mqtt]\nurl = \"mqtt://b\"\nbackfill_rate = 100", 3, "needs publish_measurements"),
            ("[mqtt]\nurl = \"mqtt://b\"\njournal_path = \"/var/lib/x\"", 3, "needs publish_measurements"),
            ("[peripheral]\nalpha1_name = \"HR alpha\"", 2, "applies with alpha1 = true"),
            ("[peripheral]\nalpha1_adapter = \"hci1\"", 2, "applies with alpha1 = true"),
        ])
    func keysThatWouldDoNothing(text: String, line: Int, message: String) {
        let found = problems(text)
        #expect(found.contains { $0.line == line && $0.message.contains(message) }, "\(found)")
    }

    @Test("the same keys where they apply are taken")
    func keysWhereTheyApply() throws {
        #expect(try ConfigurationLoader.parse("[lsl]\nenabled = true\nacc_rate = 100").lsl?.accRate == 100)
        let gateway = try ConfigurationLoader.parse(
            "[mqtt]\nurl = \"mqtt://b\"\npublish_measurements = true\njournal_megabytes = 8\nbackfill_rate = 100")
        #expect(gateway.mqtt?.journalMegabytes == 8 && gateway.mqtt?.backfillRate == 100)
    }
}
