import BlueZ
import Bridge
import Foundation
import LabStreaming
import MQTT
import Sensors
import Testing
import Wire
import Workouts

@Suite("Configuration file: TOML subset, every key checked, one problem per line")
struct ConfigurationTests {
    @Test("a full configuration is read into its values")
    func fullConfiguration() throws {
        let configuration = try ConfigurationLoader.parse(
            """
            # hrbridge
            [adapter]
            kind = "mock"
            seed = 7
            speed = 60.0

            [store]
            path = "/tmp/store.sqlite"

            [api]
            socket = "/tmp/hr.sock"
            socket_mode = "0600"
            tcp_port = 8086

            [[api.tokens]]
            token = "read-token-0123456789"
            role = "read"

            [[api.tokens]]
            token = "control-token-0123456789"
            role = "control"

            [[athletes]]
            id = "alice"
            name = "Alice"
            age = 34
            sex = "female"
            weight = 61.5
            resting_hr = 52
            max_hr = 188
            zones = [120, 140,
                     160, 175]   # four boundaries: five zones

            [[sensors]]
            address = "c0:ff:ee:00:00:01"
            athlete = "alice"
            name = "Alice's strap"
            """)
        #expect(configuration.adapter == .mock(scenario: nil, seed: 7, speed: 60))
        #expect(configuration.storePath == "/tmp/store.sqlite")
        #expect(configuration.socketPath == "/tmp/hr.sock")
        #expect(configuration.socketMode == 0o600)
        #expect(configuration.tcpPort == 8086)
        #expect(configuration.tokens.map(\.role) == [.read, .control])
        let alice = try #require(configuration.athlete("alice"))
        #expect(alice.profile.age == 34)
        #expect(alice.profile.sex == .female)
        #expect(alice.profile.weightKilograms == 61.5)
        #expect(alice.profile.maximumHeartRate == 188)
        #expect(alice.zones?.zones.count == 5)
        #expect(configuration.sensors == [.init(address: "C0:FF:EE:00:00:01", athlete: "alice", name: "Alice's strap")])
        #expect(configuration.athlete(forSensor: "c0:ff:ee:00:00:01")?.profile.id == "alice")
    }

    @Test("an empty file is the default configuration: the simulator, no TCP")
    func emptyFile() throws {
        let configuration = try ConfigurationLoader.parse("")
        #expect(configuration.adapter == .mock(scenario: nil, seed: nil, speed: 1))
        #expect(configuration.tcpPort == nil)
        #expect(configuration.tokens.isEmpty)
    }

    @Test("every problem is reported with its line, not just the first")
    func everyProblemWithItsLine() {
        let text = """
            [adapter]
            kind = "bluetooth"
            [api]
            tcp_port = 70000
            colour = "red"
            [[athletes]]
            id = "bob"
            age = "forty"
            resting_hr = 90
            max_hr = 80
            [[sensors]]
            address = "not-an-address"
            [[sensors]]
            address = "C0:FF:EE:00:00:02"
            athlete = "carol"
            """
        let expected: [(line: Int, fragment: String)] = [
            (2, "adapter kind 'bluetooth'"), (4, "out of range 1–65535"), (4, "needs at least one [[api.tokens]]"),
            (5, "unknown key 'colour' in [api]"), (8, "'age' must be an integer"), (9, "must be below max_hr (80)"),
            (12, "not a Bluetooth address"), (15, "athlete 'carol' is not defined"),
        ]
        do {
            _ = try ConfigurationLoader.parse(text)
            Issue.record("the configuration was accepted")
        } catch {
            #expect(error.problems.map(\.line) == expected.map(\.line))
            for (problem, want) in zip(error.problems, expected) {
                #expect(problem.message.contains(want.fragment), "line \(problem.line): \(problem.message)")
            }
        }
    }

    @Test(
        "syntax errors name their line",
        arguments: [
            ("[adapter\nkind = \"mock\"", 1, "expected ']' after"),
            ("[adapter]\nkind = mock", 2, "strings need quotes"),
            ("[adapter]\nkind = \"mock", 2, "unterminated string"),
            ("[store]\npath = \"/a\"\npath = \"/b\"", 3, "set twice"),
            ("[api]\n[api]", 2, "defined twice"),
            ("[adapter]\nkind = { a = 1,\n b = 2 }", 2, "an inline table stays on one line"),
            ("[adapter]\nkind = { a = 1, }", 2, "no comma after the last entry"),
            ("[adapter]\nkind = { a = 1 }", 2, "'kind' must be a string in quotes, not a table"),
            ("adapter = { kind = \"mock\" }\n[adapter]", 2, "an inline table, complete as written"),
            ("[store]\npath = \"\"\"\n/a", 2, "unterminated multi-line string: no closing \"\"\""),
            ("[store]\npath = \"\"\"a \\ b\"\"\"", 2, "joins lines only at the end of a line"),
            ("[adapter]\nkind = \"mock\" speed = 2", 2, "one key = value per line"),
        ])
    func syntaxErrors(text: String, line: Int, message: String) {
        #expect {
            try ConfigurationLoader.parse(text)
        } throws: { error in
            guard let problems = (error as? ConfigurationError)?.problems, problems.count == 1 else { return false }
            return problems[0].line == line && problems[0].message.contains(message)
        }
    }

    @Test("a TCP listener without any token is refused: every TCP request must carry one")
    func tcpNeedsTokens() {
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.parse("[api]\ntcp_port = 8086") }
    }

    @Test("a file that cannot be read is one problem naming the path")
    func unreadableFile() {
        #expect {
            try ConfigurationLoader.load(path: "/nonexistent/config.toml")
        } throws: { error in
            (error as? ConfigurationError)?.description == "/nonexistent/config.toml: cannot read the file"
        }
    }

    @Test(
        "a number past every bound is reported with its line, not fatal",
        arguments: [
            ("[adapter]\nspeed = 1e300", 2, "'speed' = 1e+300 is out of range"),
            ("[adapter]\nspeed = -1e300", 2, "'speed' = -1e+300 is out of range"),
            ("[adapter]\nspeed = 100001", 2, "'speed' = 100001 is out of range 0.01–100000"),
            (
                "[[athletes]]\nid = \"a\"\nweight = 9223372036854775807", 3,
                "'weight' = 9.223372036854776e+18 is out of range"
            ),
            // Past 64 bits an integer is still an integer, not "a float".
            (
                "[api]\ntcp_port = 99999999999999999999", 2,
                "'tcp_port' = 99999999999999999999 is out of range for an integer"
            ),
            ("[adapter]\nseed = -9_223_372_036_854_775_809", 2, "'seed' = -9_223_372_036_854_775_809 is out of range"),
            ("[adapter]\nseed = 0x1_0000_0000_0000_0000", 2, "'seed' = 0x1_0000_0000_0000_0000 is out of range"),
            ("[[athletes]]\nid = \"a\"\nzones = [120,\n  99999999999999999999]", 4, "'zones' = 99999999999999999999"),
        ])
    func hugeNumbers(_ text: String, _ line: Int, _ message: String) {
        #expect {
            try ConfigurationLoader.parse(text)
        } throws: { error in
            (error as? ConfigurationError)?.problems.contains { $0.line == line && $0.message.hasPrefix(message) }
                == true
        }
    }

    @Test("deeply nested arrays, long dotted keys and oversized files are refused, not recursed into or read")
    func bounds() throws {
        let deep = "[api]\nsocket = " + String(repeating: "[", count: 100_000)
        #expect {
            try ConfigurationLoader.parse(deep)
        } throws: { error in
            (error as? ConfigurationError)?.problems.first?.message == "arrays nest deeper than 8 levels"
        }
        #expect {
            try ConfigurationLoader.parse("[api]\nsocket = " + String(repeating: "{a=", count: 100_000))
        } throws: { error in
            (error as? ConfigurationError)?.problems.first?.message
                == "arrays and inline tables nest deeper than 8 levels"
        }
        for dotted in [
            "[" + Array(repeating: "a", count: 500_000).joined(separator: ".") + "]",
            Array(repeating: "a", count: 500_000).joined(separator: ".") + " = 1",
        ] {
            #expect {
                try ConfigurationLoader.parse(dotted)
            } throws: { error in
                (error as? ConfigurationError)?.problems.first?.message == "a dotted key has more than 8 parts"
            }
        }
        let nine = Array(repeating: "a", count: 9).joined(separator: ".")
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader.parse("[\(nine)]") }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("big-\(UUID().uuidString).toml")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(repeating: UInt8(ascii: "#"), count: ConfigurationLoader.maximumFileBytes + 1).write(to: file)
        #expect {
            try ConfigurationLoader.load(path: file.path)
        } throws: { error in
            (error as? ConfigurationError)?.problems.first?.message == "larger than 1 MiB: not a configuration"
        }
    }

    @Test("paths the daemon opens: the store's must be absolute, the socket's short enough for bind()")
    func daemonPaths() throws {
        // sun_path holds the path and its NUL: 108 bytes on Linux.
        let most = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1
        func path(_ bytes: Int) -> String { "/run/" + String(repeating: "s", count: bytes - 5) }
        #expect(try ConfigurationLoader.parse("[api]\nsocket = \"\(path(most))\"").socketPath == path(most))
        #expect(try ConfigurationLoader.parse("[store]\npath = \"/srv/hr.sqlite\"").storePath == "/srv/hr.sqlite")
        for (text, line, message) in [
            ("[store]\npath = \"store.sqlite\"", 2, "path must be an absolute path"),
            ("[store]\npath = \"./data/store.sqlite\"", 2, "path must be an absolute path"),
            ("[store]\npath = \"~/store.sqlite\"", 2, "path must be an absolute path"),
            (
                "[api]\nsocket = \"\(path(most + 1))\"", 2,
                "socket is \(most + 1) bytes long; a Unix socket's path is at most \(most)"
            ),
            ("[api]\nsocket = \"\(path(4096))\"", 2, "socket is 4096 bytes long"),
        ] {
            expectProblem(in: text, line: line, saying: message)
        }
    }

    @Test("zone boundaries are heart rates a person has: 25–250 bpm, as resting_hr and max_hr; still ascending")
    func zoneBounds() throws {
        let athlete = "[[athletes]]\nid = \"a\"\n"
        let widest = try ConfigurationLoader.parse(athlete + "zones = [25, 140, 250]")
        #expect(widest.athlete("a")?.zones?.zones.count == 4)
        for (text, line, message) in [
            (athlete + "zones = [20, 140, 160]", 3, "zones: boundary 1 (20) is out of range 25–250 bpm"),
            (athlete + "zones = [120, 140,\n  260]", 4, "zones: boundary 3 (260) is out of range 25–250 bpm"),
            (athlete + "zones = [120, 140, 1e6]", 3, "zones: boundary 3 (1000000) is out of range"),
            (athlete + "zones = [120, 110, 160]", 3, "zones: boundary 2 (110.0) must be above boundary 1"),
        ] {
            expectProblem(in: text, line: line, saying: message)
        }
    }

    @Test(
        "socket_mode: at most 0660, owner read-write, no world bits; nonsense refused",
        arguments: ["0666", "0777", "0606", "0664", "-1", "0400", "0o660", "+660", "9999"])
    func socketModeRefused(mode: String) {
        #expect(throws: ConfigurationError.self, "\(mode)") {
            try ConfigurationLoader.parse("[api]\nsocket_mode = \"\(mode)\"")
        }
    }

    @Test("socket_mode 0660 and 0600 are accepted")
    func socketModeAccepted() throws {
        #expect(try ConfigurationLoader.parse("[api]\nsocket_mode = \"0600\"").socketMode == 0o600)
        #expect(try ConfigurationLoader.parse("[api]\nsocket_mode = \"0660\"").socketMode == 0o660)
    }

    @Test("[mqtt] is read with its defaults and every setting checked")
    func mqttSettings() throws {
        let configuration = try ConfigurationLoader.parse(
            "[mqtt]\nurl = \"mqtt://broker.lan\"\nnode = \"gym-1\"\nstate_interval = 0\ncommands = true")
        let mqtt = try #require(configuration.mqtt)
        #expect(mqtt.broker.host == "broker.lan" && mqtt.broker.port == 1883 && !mqtt.broker.usesTLS)
        #expect(mqtt.node == "gym-1")
        #expect(mqtt.stateInterval == 0)
        #expect(mqtt.commands && mqtt.discovery && !mqtt.publishGuests)
        #expect(mqtt.discoveryPrefix == "homeassistant" && mqtt.expireAfter == 30)
        #expect(mqtt.birthTopic == "homeassistant/status")
        #expect(try ConfigurationLoader.parse("").mqtt == nil)
        let custom = try #require(
            try ConfigurationLoader.parse(
                "[mqtt]\nurl = \"mqtt://b\"\ndiscovery_prefix = \"ha/gym\"\nbirth_topic = \"ha/status\"\nexpire_after = 0\nstate_interval = 60"
            ).mqtt)
        #expect(custom.discoveryPrefix == "ha/gym" && custom.birthTopic == "ha/status")
        // Any interval shorter than the expiry works: the state is refreshed at half of it at the latest.
        #expect(
            try ConfigurationLoader.parse("[mqtt]\nurl = \"mqtt://b\"\nexpire_after = 10\nstate_interval = 6").mqtt?
                .stateInterval == 6)
        // A gateway feeding a hub announces nothing to Home Assistant unless asked: the hub does.
        #expect(
            try ConfigurationLoader.parse("[mqtt]\nurl = \"mqtt://b\"\npublish_measurements = true").mqtt?.discovery
                == false)
        #expect(
            try ConfigurationLoader.parse("[mqtt]\nurl = \"mqtt://b\"\npublish_measurements = true\ndiscovery = true")
                .mqtt?
                .discovery == true)
        for (text, line, message) in [
            ("[mqtt]\nurl = \"mqtt://b\"\ndiscovery_prefix = \"/ha\"", 3, "not a topic prefix"),
            ("[mqtt]\nurl = \"mqtt://b\"\ndiscovery_prefix = \"ha/\"", 3, "not a topic prefix"),
            ("[mqtt]\nurl = \"mqtt://b\"\nbirth_topic = \"ha/+\"", 3, "not a topic such as"),
            ("[mqtt]\nurl = \"mqtt://b\"\nbirth_topic = \"\"", 3, "not a topic such as"),
            ("[mqtt]\nurl = \"mqtt://b\"\nstate_interval = 30", 3, "shorter than expire_after (30 s)"),
            ("[mqtt]\nurl = \"mqtt://b\"\nexpire_after = 10\nstate_interval = 12", 4, "shorter than expire_after"),
        ] {
            #expect(
                "\(text)", performing: { try ConfigurationLoader.parse(text) },
                throws: { error in
                    guard let problems = (error as? ConfigurationError)?.problems else { return false }
                    return problems.contains { $0.line == line && $0.message.contains(message) }
                })
        }
    }

    @Test("a hub: [adapter] kind = \"mqtt\" with its broker, nodes and expiry; publish_measurements on a gateway")
    func hubAdapter() throws {
        let hub = try ConfigurationLoader.parse(
            "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://broker.lan\"\nnodes = [\"room-1\", \"room_2\"]\nexpire = 5")
        guard case .mqtt(let settings) = hub.adapter else {
            Issue.record("not an mqtt adapter: \(hub.adapter)")
            return
        }
        #expect(settings.broker.host == "broker.lan" && settings.nodes == ["room-1", "room_2"] && settings.expire == 5)
        #expect(settings.clientID == nil, "the default id is the host's")
        let pinned = try ConfigurationLoader.parse(
            "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://broker.lan\"\nclient_id = \"hub-gym_1\"\nmax_clock_skew = 2.5")
        guard case .mqtt(let pinnedSettings) = pinned.adapter else {
            Issue.record("not an mqtt adapter: \(pinned.adapter)")
            return
        }
        #expect(pinnedSettings.clientID == "hub-gym_1" && pinnedSettings.maximumClockSkew == 2.5)
        #expect(settings.maximumClockSkew == 5)
        let gateway = try ConfigurationLoader.parse("[mqtt]\nurl = \"mqtt://b\"\npublish_measurements = true")
        #expect(gateway.mqtt?.publishMeasurements == true)
        #expect(try ConfigurationLoader.parse("[mqtt]\nurl = \"mqtt://b\"").mqtt?.publishMeasurements == false)
        for (text, line, message) in [
            ("[adapter]\nkind = \"mqtt\"", 1, "needs url"),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"http://b\"", 3, "mqtt://"),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nnodes = [\"a/b\"]", 4, "a node is"),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nexpire = 1", 4, "out of range"),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nscenario = \"x.json\"", 4, "mock"),
            ("[adapter]\nkind = \"bluez\"\nurl = \"mqtt://b\"", 3, "applies to kind = \"mqtt\" only"),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nclient_id = \"hub/1\"", 4, "client_id"),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nclient_id = \"\"", 4, "client_id"),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nmax_clock_skew = 0", 4, "out of range"),
            ("[adapter]\nkind = \"bluez\"\nclient_id = \"hub\"", 3, "applies to kind = \"mqtt\" only"),
        ] {
            #expect(
                performing: { try ConfigurationLoader.parse(text) },
                throws: { error in
                    guard let problems = (error as? ConfigurationError)?.problems else { return false }
                    return problems.contains { $0.line == line && $0.message.contains(message) }
                })
        }
    }

    @Test("gateway keys: a gateway's key_file and a hub's gateway_keys directory, each checked; straps bound to a node")
    func gatewayKeys() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func key(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            return path
        }
        let good = String(repeating: "ab", count: 32) + "\n"
        let room1 = try key("room-1.key", good)
        let gateway = try ConfigurationLoader.parse(
            "[mqtt]\nurl = \"mqtt://b\"\npublish_measurements = true\nkey_file = \"\(room1)\"")
        #expect(gateway.mqtt?.keyFile == room1)
        _ = try key("room-2.key", good, mode: 0o640)
        let hub = try ConfigurationLoader.parse(
            """
            [adapter]
            kind = "mqtt"
            url = "mqtt://b"
            nodes = ["room-1", "room-2"]
            gateway_keys = "\(directory.path)"
            backfill_budget = 5000

            [[sensors]]
            address = "C0:FF:EE:00:00:01"
            node = "room-1"
            """)
        guard case .mqtt(let settings) = hub.adapter else {
            Issue.record("not an mqtt adapter: \(hub.adapter)")
            return
        }
        #expect(settings.gatewayKeys.keys.sorted() == ["room-1", "room-2"] && settings.backfillBudget == 5000)
        #expect(hub.sensors.first?.adapter == "room-1", "bound to its gateway")
        let loose = try key("loose.key", good, mode: 0o644)
        let short = try key("short.key", "0123456789")
        let others = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: others, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: others) }
        try Data(good.utf8).write(to: others.appendingPathComponent("room-1.key"))
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o600], ofItemAtPath: others.appendingPathComponent("room-1.key").path)
        let mqtt = "[mqtt]\nurl = \"mqtt://b\"\npublish_measurements = true\n"
        for (text, line, message) in [
            (mqtt + "key_file = \"\(loose)\"", 4, "readable by every user"),
            (mqtt + "key_file = \"\(short)\"", 4, "not a regular file of 32 bytes to 4 KiB"),
            ("[mqtt]\nurl = \"mqtt://b\"\nkey_file = \"\(room1)\"", 3, "needs publish_measurements"),
            (
                "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nnodes = [\"room-1\", \"room-3\"]\ngateway_keys = \"\(others.path)\"",
                5, "room-3 in 'nodes' has no key"
            ),
            (
                "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\ngateway_keys = \"\(directory.path)\"", 4,
                "readable by every user"
            ),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\nbackfill_budget = 10", 4, "out of range"),
            (
                "[adapter]\nkind = \"bluez\"\n\n[[sensors]]\naddress = \"C0:FF:EE:00:00:01\"\nnode = \"room-1\"", 6,
                "kind = \"mqtt\" only"
            ),
            (
                "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\n\n[[sensors]]\naddress = \"C0:FF:EE:00:00:01\"\nadapter = \"hci0\"",
                7, "with node"
            ),
        ] {
            #expect(
                "\(text)", performing: { try ConfigurationLoader.parse(text) },
                throws: { error in
                    guard let problems = (error as? ConfigurationError)?.problems else { return false }
                    return problems.contains { $0.line == line && $0.message.contains(message) }
                })
        }
    }

    @Test(
        "a key being rotated: <node>.next.key beside <node>.key is read as that gateway's next key; alone, or under a name that is no node, it is refused"
    )
    func gatewayNextKeys() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func key(_ name: String, _ text: String = String(repeating: "cd", count: 32)) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            return path
        }
        let hub = "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b\"\ngateway_keys = \"\(directory.path)\""
        let current = try key("room-1.key")
        let next = try key("room-1.next.key", String(repeating: "ef", count: 32))
        guard case .mqtt(let settings) = try ConfigurationLoader.parse(hub).adapter else {
            Issue.record("not an mqtt adapter")
            return
        }
        #expect(settings.gatewayKeys == ["room-1": current])
        #expect(settings.gatewayNextKeys == ["room-1": next])

        for (name, message) in [
            ("room-2.next.key", "room-2.next.key has no room-2.key beside it"),
            ("room-3.old.key", "'room-3.old.key' names no node"),
        ] {
            let path = try key(name)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(
                performing: { try ConfigurationLoader.parse(hub) },
                throws: { error in
                    guard let problems = (error as? ConfigurationError)?.problems else { return false }
                    return problems.contains { $0.line == 4 && $0.message.contains(message) }
                })
        }
        // The same key twice: the gateway would never be seen to switch.
        _ = try key("room-1.next.key")
        #expect(
            performing: { try ConfigurationLoader.parse(hub) },
            throws: { error in
                guard let problems = (error as? ConfigurationError)?.problems else { return false }
                return problems.contains { $0.message.contains("room-1.next.key holds the same key as room-1.key") }
            })
    }

    @Test("[store] url selects PostgreSQL (password only from password_file); the gateway journal's settings")
    func storeServer() throws {
        let hub = try ConfigurationLoader.parse("[store]\nurl = \"postgresql://hub@db.lan/gym?sslmode=require\"")
        #expect(hub.storeURL == "postgresql://hub@db.lan/gym?sslmode=require" && hub.storePath == nil)
        let gateway = try ConfigurationLoader.parse(
            "[mqtt]\nurl = \"mqtt://b\"\npublish_measurements = true\njournal_path = \"/var/lib/j\"\njournal_megabytes = 8"
                + "\nbackfill_rate = 250"
        )
        #expect(gateway.mqtt?.journalPath == "/var/lib/j" && gateway.mqtt?.journalMegabytes == 8)
        #expect(gateway.mqtt?.backfillRate == 250)
        #expect(try ConfigurationLoader.parse("[mqtt]\nurl = \"mqtt://b\"").mqtt?.backfillRate == 400)
        #expect(gateway.mqtt?.effectiveJournalPath == "/var/lib/j")
        for (text, line, message) in [
            ("[store]\nurl = \"postgresql://hub:secret@db/gym\"", 2, "password_file"),
            ("[store]\nurl = \"postgresql://db/gym\"", 2, "no user"),
            ("[store]\nurl = \"postgresql://hub@db/gym?sslmode=maybe\"", 2, "sslmode"),
            ("[store]\nurl = \"postgresql://hub@db/gym\"\npath = \"/tmp/s.sqlite\"", 2, "either"),
            ("[store]\npassword_file = \"/etc/hostname\"", 2, "needs url"),
            ("[mqtt]\nurl = \"mqtt://b\"\njournal_path = \"j\"", 3, "absolute"),
            ("[mqtt]\nurl = \"mqtt://b\"\njournal_megabytes = 0", 3, "out of range"),
            ("[mqtt]\nurl = \"mqtt://b\"\nbackfill_rate = 0", 3, "out of range"),
        ] {
            #expect(
                "\(text)", performing: { try ConfigurationLoader.parse(text) },
                throws: { error in
                    guard let problems = (error as? ConfigurationError)?.problems else { return false }
                    return problems.contains { $0.line == line && $0.message.contains(message) }
                })
        }
    }

    @Test("[class] is read with its defaults; bad values name their line")
    func classSettings() throws {
        let defaults = try ConfigurationLoader.parse("").classSettings
        #expect(!defaults.autoJoin && defaults.leaveAfter == 300 && defaults.activity == .hiit)
        #expect(defaults.joinVia == .link, "a broadcast signs nobody in unless asked")
        let read = try ConfigurationLoader.parse(
            "[class]\nauto_join = true\nleave_after_minutes = 2.5\nactivity = \"cycling\"\njoin_via = \"broadcast\""
        ).classSettings
        #expect(read.autoJoin && read.leaveAfter == 150 && read.activity == .cycling && read.joinVia == .broadcast)
        for (text, line, message) in [
            ("[class]\njoin_via = \"radio\"", 2, "is not \"link\" or \"broadcast\""),
            ("[class]\njoin_via = true", 2, "must be a string"),
            ("[class]\nauto_join = 1", 2, "true or false"),
            ("[class]\nleave_after_minutes = 0", 2, "out of range"),
            ("[class]\nleave_after_minutes = 1000", 2, "out of range"),
            ("[class]\nactivity = \"juggling\"", 2, "is not one of"),
            ("[class]\nautojoin = true", 2, "autojoin"),
        ] {
            #expect(
                performing: { try ConfigurationLoader.parse(text) },
                throws: { error in
                    guard let first = (error as? ConfigurationError)?.problems.first else { return false }
                    return first.line == line && first.message.contains(message)
                })
        }
    }

    @Test("[adapter] follow_advertisements: on by default, off when asked, refused where there is no radio")
    func followAdvertisements() throws {
        #expect(try ConfigurationLoader.parse("").followsAdvertisements)
        #expect(
            try !ConfigurationLoader.parse("[adapter]\nkind = \"bluez\"\nfollow_advertisements = false")
                .followsAdvertisements)
        #expect(try !ConfigurationLoader.parse("[adapter]\nfollow_advertisements = false").followsAdvertisements)
        for (text, line, message) in [
            ("[adapter]\nfollow_advertisements = \"no\"", 2, "true or false"),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://broker\"\nfollow_advertisements = true", 4, "applies to kind"),
        ] {
            expectProblem(in: text, line: line, saying: message)
        }
    }

    @Test("[[sensors]] waveforms: the raw signals to stream, with acc_rate and acc_range; nonsense named by line")
    func sensorWaveforms() throws {
        let sensor = try #require(
            try ConfigurationLoader.parse(
                "[[sensors]]\naddress = \"A0:9E:1A:00:00:01\"\nwaveforms = [\"ecg\", \"acc\"]\nacc_rate = 100\nacc_range = 4"
            ).sensors.first)
        #expect(
            sensor.waveforms == [WaveformRequest(kind: .ecg), WaveformRequest(kind: .acc, sampleRate: 100, range: 4)])
        #expect(
            try ConfigurationLoader.parse("[[sensors]]\naddress = \"A0:9E:1A:00:00:01\"").sensors[0].waveforms.isEmpty)
        for (text, line, message) in [
            ("[[sensors]]\naddress = \"A0:9E:1A:00:00:01\"\nwaveforms = [\"ppg\"]", 3, "\"ecg\" or \"acc\""),
            ("[[sensors]]\naddress = \"A0:9E:1A:00:00:01\"\nwaveforms = [\"acc\"]\nacc_rate = 30", 4, "not 30"),
            ("[[sensors]]\naddress = \"A0:9E:1A:00:00:01\"\nacc_rate = 50", 3, "applies with waveforms"),
            (
                "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://broker\"\n[[sensors]]\naddress = \"A0:9E:1A:00:00:01\"\nwaveforms = [\"ecg\"]",
                6, "not a hub"
            ),
        ] {
            expectProblem(in: text, line: line, saying: message)
        }
    }

    @Test("[lsl]: off unless enabled; streams, acceleration and the library path read; nonsense named by line")
    func labStreaming() throws {
        #expect(try ConfigurationLoader.parse("").lsl == nil)
        #expect(try ConfigurationLoader.parse("[lsl]\nstreams = [\"hr\"]").lsl == nil)
        let all = try #require(try ConfigurationLoader.parse("[lsl]\nenabled = true").lsl)
        #expect(all.kinds == Set(LSLStreamKind.allCases) && all.accRate == 50 && all.library == nil)
        let some = try #require(
            try ConfigurationLoader.parse(
                "[lsl]\nenabled = true\nstreams = [\"rr\", \"ecg\", \"acc\"]\nacc_rate = 200\nacc_range = 4\n"
                    + "library = \"/opt/lsl/lib/liblsl.so\"\nhost = \"lab-3\""
            ).lsl)
        #expect(some.kinds == [.rr, .ecg, .acc] && some.accRate == 200 && some.accRange == 4 && some.host == "lab-3")
        #expect(some.library == "/opt/lsl/lib/liblsl.so")
        for (text, line, message) in [
            ("[lsl]\nenabled = true\nstreams = [\"eeg\"]", 3, "each is one of hr, rr, hrv, ecg, acc, markers"),
            ("[lsl]\nenabled = true\nstreams = \"hr\"", 3, "must be an array"),
            ("[lsl]\nenabled = true\nacc_rate = 30", 3, "25, 50, 100 or 200"),
            ("[lsl]\nenabled = true\nacc_range = 3", 3, "2, 4 or 8"),
            ("[lsl]\nenabled = true\nhost = \"a b\"", 3, "plain name"),
            ("[lsl]\nenabled = true\nlibrary = \"\"", 3, "path of liblsl.so"),
            ("[lsl]\nenabled = true\nport = 1", 3, "port"),
        ] {
            expectProblem(in: text, line: line, saying: message)
        }
    }

    @Test(
        "bad [mqtt] settings name their line",
        arguments: [
            ("[mqtt]\nurl = \"http://broker\"", 2, "mqtt:// or mqtts://"),
            ("[mqtt]\nurl = \"mqtt://user:secret@broker\"", 2, "credentials do not belong in the URL"),
            ("[mqtt]\nurl = \"mqtt://broker\"\nnode = \"a/b\"", 3, "part of topics"),
            ("[mqtt]\nurl = \"mqtt://broker\"\ntls_ca = \"/etc/hostname\"", 3, "need an mqtts:// url"),
            ("[mqtt]\nurl = \"mqtt://broker\"\nstate_interval = -1", 3, "out of range"),
            ("[mqtt]\nurl = \"mqtt://broker\"\ncommands = \"yes\"", 3, "true or false"),
            ("[mqtt]\nnode = \"gym\"", 1, "needs url"),
            ("[mqtt]\nurl = \"mqtt://broker\"\npassword_file = \"/nonexistent\"", 3, "does not exist"),
        ])
    func badMQTTSettings(text: String, line: Int, message: String) {
        #expect {
            try ConfigurationLoader.parse(text)
        } throws: { error in
            guard let problems = (error as? ConfigurationError)?.problems, let first = problems.first else {
                return false
            }
            return first.line == line && first.message.contains(message)
        }
    }

    @Test("a password file every user can read is refused: a gateway's broker, a hub's broker, the store's server")
    func worldReadablePasswordFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mqtt-pw-\(UUID().uuidString)").path
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        for text in [
            "[mqtt]\nurl = \"mqtt://broker\"\nusername = \"u\"\npassword_file = \"\(path)\"",
            "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://broker\"\nusername = \"hub\"\npassword_file = \"\(path)\"",
            "[store]\nurl = \"postgres://hrbridge@db/hrbridge\"\npassword_file = \"\(path)\"",
        ] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            #expect {
                try ConfigurationLoader.parse(text)
            } throws: { error in
                (error as? ConfigurationError)?.problems.first?.message.contains("readable by every user") == true
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
            #expect(throws: Never.self, "\(text)") { try ConfigurationLoader.parse(text) }
        }
    }

    @Test("a configuration holding tokens that every user can read is refused")
    func tokensNeedPrivateFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString).toml")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("[api]\ntcp_port = 8086\n[[api.tokens]]\ntoken = \"0123456789abcdef0\"\n".utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect {
            try ConfigurationLoader.load(path: file.path)
        } throws: { error in
            (error as? ConfigurationError)?.problems.first?.message.hasPrefix(
                "holds API tokens and every user can read it")
                == true
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: file.path)
        #expect(try ConfigurationLoader.load(path: file.path).tokens.count == 1)
    }

    @Test("re-pairing on a lost key is opt-in, for BlueZ only")
    func repairOnKeyLoss() throws {
        #expect(try ConfigurationLoader.parse("[adapter]\nkind = \"bluez\"").adapter == .bluez())
        #expect(
            try ConfigurationLoader.parse("[adapter]\nkind = \"bluez\"\nrepair_on_key_loss = true").adapter
                == .bluez(adapters: nil, repairOnKeyLoss: true))
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.parse("[adapter]\nkind = \"mock\"\nrepair_on_key_loss = true")
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.parse("[adapter]\nkind = \"bluez\"\nrepair_on_key_loss = \"yes\"")
        }
    }

    @Test("adapters: names = [...] (the older name = \"…\" still read), bindings among them, bad names refused")
    func adapterNames() throws {
        let bluez = "[adapter]\nkind = \"bluez\"\n"
        let strap = "[[sensors]]\naddress = \"C0:FF:EE:00:00:01\"\n"
        let list = try ConfigurationLoader.parse(bluez + "names = [\"hci0\", \"hci2\", \"hci0\"]")
        #expect(list.adapter == .bluez(adapters: ["hci0", "hci2"]))
        let single = try ConfigurationLoader.parse(bluez + "name = \"hci1\"")
        #expect(single.adapter == .bluez(adapters: ["hci1"]))
        let bound = try ConfigurationLoader.parse(
            bluez + "names = [\"hci0\", \"hci1\"]\n" + strap + "adapter = \"hci1\"")
        #expect(bound.sensors.first?.adapter == "hci1")
        for bad in [
            "names = [\"hci0\"]\nname = \"hci0\"", "names = []", "names = [\"../hci0\"]", "names = [1]",
            "names = \"hci0\"", "names = [\"hci0\"]\n" + strap + "adapter = \"hci3\"",
        ] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ConfigurationLoader.parse(bluez + bad) }
        }
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.parse("[adapter]\nkind = \"mock\"\nnames = [\"hci0\"]")
        }
    }

    @Test("a sensor's priority for a freed link slot: an integer within ±1000, 0 when absent")
    func sensorPriority() throws {
        let strap = "[[sensors]]\naddress = \"C0:FF:EE:00:00:01\"\n"
        #expect(try ConfigurationLoader.parse(strap + "priority = 10").sensors.first?.priority == 10)
        #expect(try ConfigurationLoader.parse(strap).sensors.first?.priority == 0)
        for bad in ["priority = 1001", "priority = -1001", "priority = \"high\"", "priority = 1.5"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ConfigurationLoader.parse(strap + bad) }
        }
    }

    @Test("a sensor's address type: public or random, checked by the radio that hears it, never by a hub")
    func sensorAddressType() throws {
        let strap = "[[sensors]]\naddress = \"C0:FF:EE:00:00:01\"\n"
        #expect(
            try ConfigurationLoader.parse(strap + "address_type = \"random\"").sensors.first?.addressType == .random)
        #expect(
            try ConfigurationLoader.parse(strap + "address_type = \"public\"").sensors.first?.addressType == .public)
        #expect(try ConfigurationLoader.parse(strap).sensors.first?.addressType == nil)
        let hub = "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://broker\"\n"
        for (text, line, message) in [
            (strap + "address_type = \"static\"", 3, "is not \"public\" or \"random\""),
            (strap + "address_type = 1", 3, "must be a string"),
            (hub + strap + "address_type = \"public\"", 6, "checked by the gateway"),
        ] {
            #expect(
                performing: { try ConfigurationLoader.parse(text) },
                throws: { error in
                    (error as? ConfigurationError)?.problems.contains {
                        $0.line == line && $0.message.contains(message)
                    } ?? false
                })
        }
    }
}

/// Expects `text` to be refused with a problem on `line` whose message contains `message`.
private func expectProblem(
    in text: String, line: Int, saying message: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(
        "\(text)", sourceLocation: sourceLocation, performing: { try ConfigurationLoader.parse(text) },
        throws: { error in
            (error as? ConfigurationError)?.problems.contains { $0.line == line && $0.message.contains(message) }
                ?? false
        })
}
