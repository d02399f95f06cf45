import BlueZ
import BridgeOut
import Foundation
import LabStreaming
import MQTT
import PostgresStore
import RemoteSensors
import Samples
import Sensors
import Wire
import Workouts

/// One thing wrong in a configuration file, with its line.
public struct ConfigurationProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line; 0 when the problem is the file as a whole.
    public var line: Int
    /// What is wrong, in words.
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    /// A one-line description for messages and logs.
    public var description: String { line > 0 ? "line \(line): \(message)" : message }
}

/// Every problem found in a configuration file (all of them, not just the first).
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The configuration file.
    public var path: String
    /// Every problem found, by line.
    public var problems: [ConfigurationProblem]
    /// A one-line description for messages and logs.
    public var description: String { problems.map { "\(path): \($0)" }.joined(separator: "\n") }
}

/// Reads `config.toml` into a ``BridgeConfiguration``, checking every key, type and range.
public enum ConfigurationLoader {
    /// The default location.
    public static let defaultPath = "/etc/hrbridge/config.toml"

    /// The largest configuration file read (a real one is a few KiB).
    public static let maximumFileBytes = 1 << 20

    /// Loads and checks the file at `path` (a pipe or a device too: it is read no further than the limit).
    public static func load(path: String) throws(ConfigurationError) -> BridgeConfiguration {
        let data: Data
        do {
            data = try BoundedFile.read(path, limit: maximumFileBytes)
        } catch {
            let message =
                switch error {
                case .larger: "larger than 1 MiB: not a configuration"
                case .unreadable, .notRegular: "cannot read the file"
                }
            throw ConfigurationError(path: path, problems: [ConfigurationProblem(line: 0, message: message)])
        }
        let configuration = try parseData(data, path: path)
        var status = stat()
        if !configuration.tokens.isEmpty, stat(path, &status) == 0, status.st_mode & S_IROTH != 0 {
            throw ConfigurationError(
                path: path,
                problems: [
                    ConfigurationProblem(
                        line: 0,
                        message:
                            "holds API tokens and every user can read it: chmod 640 \(path) (owner root, group hrbridge)"
                    )
                ])
        }
        return configuration
    }

    private static func parseData(_ data: Data, path: String) throws(ConfigurationError) -> BridgeConfiguration {
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(path: path, problems: [ConfigurationProblem(line: 0, message: "not UTF-8 text")])
        }
        return try parse(text, path: path)
    }

    /// Parses and checks configuration text; throws every problem found (`path` names it in messages).
    public static func parse(_ text: String, path: String = "config.toml") throws(ConfigurationError)
        -> BridgeConfiguration
    {
        let document: TOMLDocument
        do {
            document = try TOMLDocument(parsing: text)
        } catch {
            throw ConfigurationError(
                path: path, problems: [ConfigurationProblem(line: error.line, message: error.message)])
        }
        var reader = Reader()
        let configuration = reader.read(document.root)
        guard reader.problems.isEmpty else {
            throw ConfigurationError(path: path, problems: reader.problems.sorted { $0.line < $1.line })
        }
        return configuration
    }
}

private struct Reader {
    var problems: [ConfigurationProblem] = []

    mutating func problem(_ line: Int, _ message: String) {
        problems.append(ConfigurationProblem(line: line, message: message))
    }

    /// Flags keys the section does not know.
    mutating func onlyKnown(_ table: TOMLDocument.Table, _ known: [String], in section: String) {
        for key in table.keys where !known.contains(key) {
            let place = section.isEmpty ? "at the top level" : "in [\(section)]"
            problem(
                table[key]?.line ?? table.line,
                "unknown key '\(key)' \(place); known: \(known.joined(separator: ", "))")
        }
    }

    mutating func table(_ value: TOMLDocument.Value?, _ name: String) -> TOMLDocument.Table? {
        guard let value else { return nil }
        guard case .table(let table) = value.kind else {
            problem(value.line, "'\(name)' must be a [\(name)] table, not \(value.typeName)")
            return nil
        }
        return table
    }

    mutating func tables(_ value: TOMLDocument.Value?, _ name: String) -> [TOMLDocument.Table] {
        guard let value else { return [] }
        switch value.kind {
        case .tables(let tables):
            return tables
        case .array(let elements):
            // An array of inline tables is an array of tables too.
            let tables = elements.compactMap { element -> TOMLDocument.Table? in
                guard case .table(let table) = element.kind else { return nil }
                return table
            }
            if tables.count == elements.count { return tables }
        default:
            break
        }
        problem(value.line, "'\(name)' must be written as [[\(name)]] sections, not \(value.typeName)")
        return []
    }

    mutating func string(_ table: TOMLDocument.Table, _ key: String) -> (String, Int)? {
        guard let value = table[key] else { return nil }
        guard case .string(let text) = value.kind else {
            problem(value.line, "'\(key)' must be a string in quotes, not \(value.typeName)")
            return nil
        }
        return (text, value.line)
    }

    mutating func number(_ table: TOMLDocument.Table, _ key: String, in range: ClosedRange<Double>, unit: String = "")
        -> Double?
    {
        guard let value = table[key] else { return nil }
        guard let number = value.number else {
            problem(value.line, "'\(key)' must be a number, not \(value.typeName)")
            return nil
        }
        guard range.contains(number) else {
            problem(
                value.line,
                "'\(key)' = \(formatted(number)) is out of range \(formatted(range.lowerBound))–\(formatted(range.upperBound))\(unit)"
            )
            return nil
        }
        return number
    }

    mutating func integer(_ table: TOMLDocument.Table, _ key: String, in range: ClosedRange<Int>) -> Int? {
        guard let value = table[key] else { return nil }
        guard case .integer(let number) = value.kind else {
            problem(value.line, "'\(key)' must be an integer, not \(value.typeName)")
            return nil
        }
        guard range.contains(number) else {
            problem(value.line, "'\(key)' = \(number) is out of range \(range.lowerBound)–\(range.upperBound)")
            return nil
        }
        return number
    }

    func formatted(_ number: Double) -> String {
        // `Int` of a value past its range traps: `speed = 1e300` must be reported, not fatal.
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    mutating func read(_ root: TOMLDocument.Table) -> BridgeConfiguration {
        var configuration = BridgeConfiguration()
        onlyKnown(
            root, ["adapter", "store", "api", "athletes", "sensors", "mqtt", "class", "peripheral", "osc", "lsl"],
            in: "")
        if let adapter = table(root["adapter"], "adapter") {
            configuration.adapter = readAdapter(adapter)
            if let follows = flag(adapter, "follow_advertisements") { configuration.followsAdvertisements = follows }
        }
        if let store = table(root["store"], "store") {
            onlyKnown(store, ["path", "url", "password_file"], in: "store")
            if let (path, line) = string(store, "path") {
                // A relative path would depend on the directory the daemon happens to start in.
                if path.hasPrefix("/") {
                    configuration.storePath = path
                } else {
                    problem(line, "path must be an absolute path")
                }
            }
            readStoreServer(store, into: &configuration)
        }
        if let api = table(root["api"], "api") { readAPI(api, into: &configuration) }
        if let mqtt = table(root["mqtt"], "mqtt") { configuration.mqtt = readMQTT(mqtt) }
        if let settings = table(root["class"], "class") { configuration.classSettings = readClass(settings) }
        if let settings = table(root["peripheral"], "peripheral") {
            configuration.peripheral = readPeripheral(settings, adapter: configuration.adapter)
        }
        if let settings = table(root["osc"], "osc") { configuration.osc = readOSC(settings) }
        if let settings = table(root["lsl"], "lsl") { configuration.lsl = readLSL(settings) }
        for (name, source) in [("peripheral", configuration.peripheral?.source), ("osc", configuration.osc?.source)] {
            guard source == .simulator else { continue }
            if case .mock = configuration.adapter { continue }
            let line = (table(root[name], name)?["source"]?.line) ?? 1
            problem(line, "[\(name)] source = \"simulator\" needs the simulated adapter ([adapter] kind = \"mock\")")
        }
        for athlete in tables(root["athletes"], "athletes") {
            guard let read = readAthlete(athlete) else { continue }
            if configuration.athletes.contains(where: { $0.profile.id == read.profile.id }) {
                problem(athlete.line, "athlete '\(read.profile.id)' is defined twice")
            } else {
                configuration.athletes.append(read)
            }
        }
        for sensor in tables(root["sensors"], "sensors") {
            let isHub = if case .mqtt = configuration.adapter { true } else { false }
            guard let read = readSensor(sensor, athletes: configuration.athletes, isHub: isHub) else { continue }
            if case .bluez(let names?, _) = configuration.adapter, let bound = read.adapter, !names.contains(bound) {
                problem(
                    sensor.line,
                    "sensor \(read.address) is bound to adapter \(bound), which is not among [adapter] names")
            }
            if configuration.sensors.contains(where: { $0.address == read.address }) {
                problem(sensor.line, "sensor \(read.address) is listed twice")
            } else {
                configuration.sensors.append(read)
            }
        }
        return configuration
    }

    mutating func readAdapter(_ table: TOMLDocument.Table) -> BridgeConfiguration.AdapterKind {
        onlyKnown(
            table,
            [
                "kind", "name", "names", "scenario", "seed", "speed", "repair_on_key_loss", "url", "nodes", "username",
                "password_file", "tls_ca", "expire", "client_id", "max_clock_skew", "gateway_keys", "backfill_budget",
                "follow_advertisements",
            ], in: "adapter")
        let kind = string(table, "kind")
        if kind?.0 == "mqtt", let value = table["follow_advertisements"] {
            // A hub hears no radio: its gateways' own configuration says whether they follow broadcasts.
            problem(value.line, "'follow_advertisements' applies to kind = \"bluez\" or \"mock\" only")
        }
        if kind?.0 != "mqtt" {
            for key in [
                "url", "nodes", "username", "password_file", "tls_ca", "expire", "client_id", "max_clock_skew",
                "gateway_keys", "backfill_budget",
            ]
            where table[key] != nil {
                problem(table[key]!.line, "'\(key)' applies to kind = \"mqtt\" only")
            }
        }
        switch kind?.0 ?? "mock" {
        case "mqtt":
            for key in ["name", "names", "scenario", "seed", "speed", "repair_on_key_loss"] where table[key] != nil {
                problem(
                    table[key]!.line, "'\(key)' applies to kind = \"\(key.hasPrefix("s") ? "mock" : "bluez")\" only")
            }
            return readRemoteAdapter(table)
        case "bluez":
            for key in ["scenario", "seed", "speed"] where table[key] != nil {
                problem(table[key]!.line, "'\(key)' applies to kind = \"mock\" only")
            }
            var repair = false
            if let value = table["repair_on_key_loss"] {
                if case .boolean(let flag) = value.kind {
                    repair = flag
                } else {
                    problem(value.line, "'repair_on_key_loss' must be true or false, not \(value.typeName)")
                }
            }
            return .bluez(adapters: adapterNames(table), repairOnKeyLoss: repair)
        case "mock":
            for key in ["name", "names", "repair_on_key_loss"] where table[key] != nil {
                problem(table[key]!.line, "'\(key)' applies to kind = \"bluez\" only")
            }
            let seed = integer(table, "seed", in: 0...Int.max).map(UInt64.init)
            let speed = number(table, "speed", in: 0.01...100_000) ?? 1
            var scenario = string(table, "scenario")
            if let (path, line) = scenario, !FileManager.default.fileExists(atPath: path) {
                problem(line, "scenario file '\(path)' does not exist")
                scenario = nil
            }
            return .mock(scenario: scenario?.0, seed: seed, speed: speed)
        case let other:
            problem(kind?.1 ?? table.line, "adapter kind '\(other)' is not \"bluez\", \"mock\" or \"mqtt\"")
            return .mock(scenario: nil, seed: nil, speed: 1)
        }
    }

    /// `[adapter] kind = "mqtt"`: the broker, which gateways, credentials.
    mutating func readRemoteAdapter(_ table: TOMLDocument.Table) -> BridgeConfiguration.AdapterKind {
        let fallback = BridgeConfiguration.AdapterKind.mock(scenario: nil, seed: nil, speed: 1)
        guard let (url, line) = string(table, "url") else {
            problem(table.line, "kind = \"mqtt\" needs url = \"mqtt://broker:1883\"")
            return fallback
        }
        let broker: MQTTBrokerURL
        do {
            broker = try MQTTBrokerURL(parsing: url)
        } catch {
            problem(line, "\(error)")
            return fallback
        }
        var settings = BridgeConfiguration.RemoteAdapterSettings(broker: broker)
        if let value = table["nodes"] {
            if case .array(let items) = value.kind {
                var nodes: [String] = []
                for item in items {
                    guard case .string(let node) = item.kind, Self.isName(node) else {
                        problem(item.line, "a node is 1 to 64 letters, digits, - and _ (a gateway's [mqtt] node)")
                        continue
                    }
                    nodes.append(node)
                }
                if items.isEmpty {
                    // An empty list would follow no gateway at all, silently.
                    problem(value.line, "'nodes' lists no gateway: leave it out to follow every gateway")
                }
                settings.nodes = nodes
            } else {
                problem(value.line, "'nodes' must be an array of gateway node names, not \(value.typeName)")
            }
        }
        settings.username = string(table, "username")?.0
        settings.passwordFile = filePath(table, "password_file")
        refuseIfEveryoneReads(settings.passwordFile, line: table["password_file"]?.line)
        checkPasswordFile(settings.passwordFile, line: table["password_file"]?.line)
        if table["password_file"] != nil, settings.username == nil {
            problem(table["password_file"]!.line, "password_file needs username as well")
        }
        if let (id, line) = string(table, "client_id") {
            if Self.isName(id) {
                settings.clientID = id
            } else {
                problem(line, "client_id '\(id.prefix(80))' may use 1 to 64 letters, digits, - and _")
            }
        }
        settings.tlsCA = filePath(table, "tls_ca")
        if !broker.usesTLS, let value = table["tls_ca"] { problem(value.line, "TLS files need an mqtts:// url") }
        if let seconds = number(table, "expire", in: 2...3600, unit: " s") { settings.expire = seconds }
        if let seconds = number(table, "max_clock_skew", in: 0.5...600, unit: " s") {
            settings.maximumClockSkew = seconds
        }
        if let budget = integer(table, "backfill_budget", in: 100...10_000_000) { settings.backfillBudget = budget }
        if let directory = filePath(table, "gateway_keys"), let line = table["gateway_keys"]?.line {
            (settings.gatewayKeys, settings.gatewayNextKeys) = readGatewayKeys(directory, line: line)
            if settings.gatewayKeys.isEmpty { problem(line, "gateway_keys '\(directory)' holds no <node>.key file") }
            for node in settings.nodes ?? [] where settings.gatewayKeys[node] == nil {
                problem(line, "gateway \(node) in 'nodes' has no key in \(directory): add \(node).key")
            }
        }
        return .mqtt(settings)
    }

    /// `names = ["hci0", "hci1"]`, or the older `name = "hci0"`; nil: every adapter.
    mutating func adapterNames(_ table: TOMLDocument.Table) -> [String]? {
        if let single = table["name"], let list = table["names"] {
            problem(max(single.line, list.line), "give the adapters as names = [...] only, not with name as well")
            return nil
        }
        if let (name, line) = string(table, "name") {
            return adapterName(name, line: line).map { [$0] }
        }
        guard let value = table["names"] else { return nil }
        guard case .array(let elements) = value.kind, !elements.isEmpty, elements.count <= 16 else {
            problem(value.line, "names must be a list of 1 to 16 adapters, e.g. names = [\"hci0\", \"hci1\"]")
            return nil
        }
        var names: [String] = []
        for element in elements {
            guard case .string(let text) = element.kind else {
                problem(element.line, "adapter names are strings such as \"hci1\", not \(element.typeName)")
                continue
            }
            if let name = adapterName(text, line: element.line), !names.contains(name) { names.append(name) }
        }
        return names.isEmpty ? nil : names
    }

    /// An adapter name as BlueZ spells it (a path element: `hci0`).
    mutating func adapterName(_ text: String, line: Int) -> String? {
        guard !text.isEmpty, text.count <= 32,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        else {
            problem(line, "'\(text)' is not an adapter name such as hci0")
            return nil
        }
        return text
    }

    mutating func readAPI(_ table: TOMLDocument.Table, into configuration: inout BridgeConfiguration) {
        onlyKnown(table, ["socket", "socket_mode", "tcp_port", "tokens", "max_connections", "idle_timeout"], in: "api")
        if let limit = integer(table, "max_connections", in: 1...65_536) { configuration.maxConnections = limit }
        if let seconds = integer(table, "idle_timeout", in: 1...3600) { configuration.idleTimeout = seconds }
        if let (path, line) = string(table, "socket") {
            if !path.hasPrefix("/") {
                problem(line, "socket must be an absolute path")
            } else if path.utf8.count >= Self.socketPathCapacity {
                // bind() cannot take it: the daemon would fail at start, not here with the line.
                let most = Self.socketPathCapacity - 1
                problem(line, "socket is \(path.utf8.count) bytes long; a Unix socket's path is at most \(most)")
            } else {
                configuration.socketPath = path
            }
        }
        if let (mode, line) = string(table, "socket_mode") {
            if let bits = Int(mode, radix: 8), mode.count <= 4, mode.allSatisfy(\.isNumber), bits <= 0o777 {
                if bits & ~0o660 != 0 || bits & 0o600 != 0o600 {
                    // Anyone who can connect has the control role without a token.
                    problem(
                        line,
                        "socket_mode '\(mode)' must give the owner read and write and nobody but the group anything: at most \"0660\""
                    )
                } else {
                    configuration.socketMode = bits
                }
            } else {
                problem(line, "socket_mode '\(mode)' is not an octal mode such as \"0660\"")
            }
        }
        configuration.tcpPort = integer(table, "tcp_port", in: 1...65535)
        for token in tables(table["tokens"], "api.tokens") {
            onlyKnown(token, ["token", "role"], in: "[api.tokens]")
            guard let (value, line) = string(token, "token") else {
                problem(token.line, "a token needs token = \"…\"")
                continue
            }
            guard value.count >= 16, value.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                problem(line, "a token must be at least 16 printable ASCII characters, without spaces")
                continue
            }
            let roleText = string(token, "role")
            guard let role = BridgeConfiguration.Role(rawValue: roleText?.0 ?? "read") else {
                problem(roleText?.1 ?? token.line, "role '\(roleText?.0 ?? "")' is not \"read\" or \"control\"")
                continue
            }
            if configuration.tokens.contains(where: { $0.value == value }) {
                problem(line, "the same token is listed twice")
            }
            configuration.tokens.append(BridgeConfiguration.Token(value: value, role: role))
        }
        if let port = table["tcp_port"], configuration.tokens.isEmpty {
            problem(port.line, "tcp_port needs at least one [[api.tokens]]: every TCP request must carry one")
        }
    }

    mutating func flag(_ table: TOMLDocument.Table, _ key: String) -> Bool? {
        guard let value = table[key] else { return nil }
        guard case .boolean(let flag) = value.kind else {
            problem(value.line, "'\(key)' must be true or false, not \(value.typeName)")
            return nil
        }
        return flag
    }

    /// An absolute path to a file that exists.
    /// `[store] url` (PostgreSQL) and its `password_file`; a password inside the URL is refused.
    mutating func readStoreServer(_ table: TOMLDocument.Table, into configuration: inout BridgeConfiguration) {
        if let (url, line) = string(table, "url") {
            if table["path"] != nil {
                problem(line, "url and path both set: a store is either a PostgreSQL server or a SQLite file")
            }
            do {
                let location = try PostgresStoreLocation(url: url)
                if location.password != nil {
                    problem(line, "url holds a password: put it in password_file (mode 600) instead")
                } else {
                    configuration.storeURL = url
                }
            } catch {
                problem(line, error.description)
            }
        }
        configuration.storePasswordFile = filePath(table, "password_file")
        refuseIfEveryoneReads(configuration.storePasswordFile, line: table["password_file"]?.line)
        checkPasswordFile(configuration.storePasswordFile, line: table["password_file"]?.line)
        if configuration.storePasswordFile != nil, let line = table["password_file"]?.line,
            let url = configuration.storeURL, let refusal = (try? PostgresStoreLocation(url: url))?.passwordRefusal
        {
            problem(line, refusal)
        }
        if configuration.storePasswordFile != nil, let line = table["password_file"]?.line, table["url"] == nil {
            problem(line, "password_file needs url as well")
        }
    }

    /// The heart rates a person has, in bpm: resting_hr, max_hr and zone boundaries lie within.
    static let heartRates: ClosedRange<Double> = 25...250

    /// The bytes of `sockaddr_un`'s path, its terminating NUL included (108 on Linux).
    static let socketPathCapacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)

    /// A node or client id: 1 to 64 ASCII letters, digits, `-` and `_` (it goes into topics).
    static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// A password file that cannot give a password: read here, so the daemon's start cannot fail on it.
    mutating func checkPasswordFile(_ path: String?, line: Int?) {
        guard let path, let line else { return }
        if case .failure(let why) = PasswordFile.password(at: path) {
            problem(line, "password_file '\(path)' \(why)")
        }
    }

    /// A secret file (a password, a key) every user of the machine can read or write is refused:
    /// read, it is no secret; written, anyone could swap in their own.
    mutating func refuseIfEveryoneReads(_ path: String?, line: Int?, key: String = "password_file") {
        guard let path, let line else { return }
        var status = stat()
        guard stat(path, &status) == 0 else { return }
        if status.st_mode & S_IROTH != 0 {
            problem(line, "\(key) '\(path)' is readable by every user: chmod 640 \(path)")
        } else if status.st_mode & S_IWOTH != 0 {
            problem(line, "\(key) '\(path)' is writable by every user: chmod 640 \(path)")
        }
    }

    /// `<node>.key` files in `directory`, by node, and `<node>.next.key` files (a key being
    /// rotated in); each checked as a gateway's own `key_file` is.
    mutating func readGatewayKeys(_ directory: String, line: Int) -> (keys: [String: String], next: [String: String]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            problem(line, "gateway_keys '\(directory)' is not a readable directory")
            return ([:], [:])
        }
        var status = stat()
        if stat(directory, &status) == 0, status.st_mode & S_IWOTH != 0 {
            // Anyone could add a key and be taken for a gateway.
            problem(line, "gateway_keys '\(directory)' is writable by every user: chmod 750 \(directory)")
            return ([:], [:])
        }
        var keys: [String: String] = [:]
        var next: [String: String] = [:]
        for name in names.sorted() where name.hasSuffix(".key") {
            let isNext = name.hasSuffix(".next.key")
            let node = String(name.dropLast(isNext ? 9 : 4))
            let path = "\(directory)/\(name)"
            guard Self.isName(node) else {
                problem(
                    line,
                    "gateway_keys: '\(name.prefix(80))' names no node (<node>.key or <node>.next.key; a node is 1 to 64 letters, digits, - and _)"
                )
                continue
            }
            refuseIfEveryoneReads(path, line: line, key: "gateway key")
            guard EnvelopeSigner(keyFile: path) != nil else {
                problem(line, "gateway key '\(path)' is not a regular file of 32 bytes to 4 KiB")
                continue
            }
            if isNext { next[node] = path } else { keys[node] = path }
        }
        for node in next.keys.sorted() {
            guard let current = keys[node] else {
                // A gateway is read with its key until it signs with the next one: a next key
                // alone is a rotation half done (or a misnamed key).
                problem(line, "gateway_keys: \(node).next.key has no \(node).key beside it: rename it \(node).key")
                continue
            }
            if let path = next[node], let signer = EnvelopeSigner(keyFile: path),
                signer.hasSameKey(as: EnvelopeSigner(keyFile: current))
            {
                // The current key always verifies first: the rotation would never be seen to happen.
                problem(line, "gateway_keys: \(node).next.key holds the same key as \(node).key: make a new one")
            }
        }
        return (keys, next)
    }

    mutating func filePath(_ table: TOMLDocument.Table, _ key: String) -> String? {
        guard let (path, line) = string(table, key) else { return nil }
        guard path.hasPrefix("/") else {
            problem(line, "\(key) must be an absolute path")
            return nil
        }
        guard FileManager.default.fileExists(atPath: path) else {
            problem(line, "\(key) '\(path)' does not exist")
            return nil
        }
        return path
    }

    mutating func readClass(_ table: TOMLDocument.Table) -> ClassSettings {
        onlyKnown(table, ["auto_join", "leave_after_minutes", "activity", "join_via"], in: "class")
        var settings = ClassSettings()
        if let flag = flag(table, "auto_join") { settings.autoJoin = flag }
        if let (text, line) = string(table, "join_via") {
            if let path = ClassJoinPath(rawValue: text) {
                settings.joinVia = path
            } else {
                problem(line, "join_via '\(text.prefix(40))' is not \"link\" or \"broadcast\"")
            }
        }
        if let minutes = number(table, "leave_after_minutes", in: 0.1...240, unit: " minutes") {
            settings.leaveAfter = minutes * 60
        }
        if let (text, line) = string(table, "activity") {
            if let activity = WorkoutActivityType(rawValue: text) {
                settings.activity = activity
            } else {
                let known = WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", ")
                problem(line, "activity '\(text.prefix(40))' is not one of \(known)")
            }
        }
        return settings
    }

    /// `[peripheral]`: hrbridge as a heart-rate sensor for apps; `nil` unless enabled.
    mutating func readPeripheral(_ table: TOMLDocument.Table, adapter: BridgeConfiguration.AdapterKind)
        -> PeripheralSettings?
    {
        onlyKnown(
            table,
            [
                "enabled", "adapter", "source", "name", "forward_rr", "forward_energy", "location", "alpha1",
                "alpha1_adapter", "alpha1_name",
            ], in: "peripheral")
        var settings = PeripheralSettings()
        for (key, path) in [("adapter", \PeripheralSettings.adapter), ("alpha1_adapter", \.alpha1Adapter)] {
            if let (text, line) = string(table, key), text != "auto" {
                settings[keyPath: path] = adapterName(text, line: line)
            }
        }
        if let (text, line) = string(table, "source") {
            do {
                settings.source = try RelaySource(parsing: text)
            } catch {
                problem(line, error.description)
            }
        }
        for (key, path) in [("name", \PeripheralSettings.name), ("alpha1_name", \.alpha1Name)] {
            guard let (text, line) = string(table, key) else { continue }
            let safe = AdvertisedName.sanitized(text)
            if safe != text {
                problem(line, "\(key) \"\(text.prefix(40))\" cannot be advertised as it is; \"\(safe)\" can")
            } else {
                settings[keyPath: path] = text
            }
        }
        if let flag = flag(table, "forward_rr") { settings.forwardRR = flag }
        if let flag = flag(table, "forward_energy") { settings.forwardEnergy = flag }
        if let flag = flag(table, "alpha1") { settings.alpha1 = flag }
        if let (text, line) = string(table, "location") {
            if let location = PeripheralSettings.location(named: text) {
                settings.location = location
            } else {
                let known = PeripheralSettings.locations.map(\.0).joined(separator: ", ")
                problem(line, "location '\(text.prefix(40))' is not one of \(known)")
            }
        }
        let enabled = flag(table, "enabled") ?? false
        if case .mqtt = adapter, let line = table["enabled"]?.line, enabled {
            problem(
                line, "[peripheral] needs Bluetooth: a hub ([adapter] kind = \"mqtt\") has no adapter to serve apps")
        }
        for key in ["alpha1_adapter", "alpha1_name"] where !settings.alpha1 {
            if let given = table[key] { problem(given.line, "\(key) applies with alpha1 = true") }
        }
        if settings.alpha1, let first = settings.adapter, first == settings.alpha1Adapter,
            let line = table["alpha1"]?.line
        {
            problem(line, "alpha1 needs an adapter of its own: alpha1_adapter is the peripheral's adapter \(first)")
        }
        return enabled ? settings : nil
    }

    /// `[lsl]`: Lab Streaming Layer outlets; `nil` unless enabled.
    mutating func readLSL(_ table: TOMLDocument.Table) -> LSLSettings? {
        onlyKnown(table, ["enabled", "library", "streams", "acc_rate", "acc_range", "host"], in: "lsl")
        var settings = LSLSettings()
        if let (path, line) = string(table, "library") {
            if path.isEmpty || path.utf8.count > 4096 || path.contains("\0") {
                problem(line, "[lsl] library must be the path of liblsl.so")
            } else {
                settings.library = path
            }
        }
        if let (host, line) = string(table, "host") {
            if Self.isName(host) {
                settings.host = host
            } else {
                problem(line, "[lsl] host must be a plain name (letters, digits, - and _)")
            }
        }
        if let value = table["streams"] {
            let known = LSLStreamKind.allCases.map(\.rawValue).joined(separator: ", ")
            if case .array(let items) = value.kind, items.count <= LSLStreamKind.allCases.count {
                var kinds: Set<LSLStreamKind> = []
                for item in items {
                    if case .string(let text) = item.kind, let kind = LSLStreamKind(rawValue: text) {
                        kinds.insert(kind)
                    } else {
                        problem(item.line, "[lsl] streams: each is one of \(known)")
                    }
                }
                if items.isEmpty {
                    problem(value.line, "[lsl] streams lists none: leave it out for every stream (\(known))")
                }
                settings.kinds = kinds
            } else {
                problem(value.line, "[lsl] streams must be an array of \(known)")
            }
        }
        // Settings of a stream that is not sent would be ignored: said instead.
        for key in ["acc_rate", "acc_range"] where !settings.kinds.contains(.acc) {
            if let given = table[key] { problem(given.line, "[lsl] \(key) applies with \"acc\" in streams") }
        }
        if let rate = integer(table, "acc_rate", in: 25...200) {
            if WaveformKind.acc.supportedRates.contains(rate) {
                settings.accRate = rate
            } else {
                problem(table["acc_rate"]!.line, "[lsl] acc_rate is 25, 50, 100 or 200 (Hz), not \(rate)")
            }
        }
        if let range = integer(table, "acc_range", in: 2...8) {
            if [2, 4, 8].contains(range) {
                settings.accRange = range
            } else {
                problem(table["acc_range"]!.line, "[lsl] acc_range is 2, 4 or 8 (G), not \(range)")
            }
        }
        return flag(table, "enabled") == true ? settings : nil
    }

    /// `[osc]` and `[osc.custom]`: OSC for VR avatars; `nil` unless enabled.
    mutating func readOSC(_ table: TOMLDocument.Table) -> OSCSettings? {
        onlyKnown(table, OSCSettings.Key.allCases.map(\.rawValue), in: "osc")
        var settings = OSCSettings()
        for key in [OSCSettings.Key.target, .source, .preset, .onDrop, .chatboxFormat] {
            guard let (text, line) = string(table, key.rawValue) else { continue }
            do {
                try settings.set(key, to: text)
            } catch {
                problem(line, error.description)
            }
        }
        let integers: [(OSCSettings.Key, ClosedRange<Int>, WritableKeyPath<OSCSettings, Int>)] = [
            (.minHR, OSCSettings.Limits.minHR, \.minHR), (.maxHR, OSCSettings.Limits.maxHR, \.maxHR),
            (.beatPulseMs, OSCSettings.Limits.beatPulseMs, \.beatPulseMs),
            (.beatDelayMs, OSCSettings.Limits.beatDelayMs, \.beatDelayMs),
        ]
        for (key, range, path) in integers {
            if let value = integer(table, key.rawValue, in: range) { settings[keyPath: path] = value }
        }
        if let seconds = number(
            table, OSCSettings.Key.chatboxEverySeconds.rawValue, in: OSCSettings.Limits.chatboxEverySeconds, unit: " s")
        {
            settings.chatboxEverySeconds = seconds
        }
        if let flag = flag(table, OSCSettings.Key.chatbox.rawValue) { settings.chatbox = flag }
        if let custom = self.table(table["custom"], "osc.custom") {
            for key in custom.keys.sorted() {
                guard let (name, line) = string(custom, key) else { continue }
                do {
                    try settings.setCustomName(key, to: name)
                } catch {
                    problem(line, error.description)
                }
            }
        }
        let enabled = flag(table, OSCSettings.Key.enabled.rawValue) ?? false
        settings.enabled = enabled
        do {
            try settings.validate()
        } catch {
            let line = table[error.key]?.line ?? table["custom"]?.line ?? table.line
            problem(line, error.description)
        }
        return enabled ? settings : nil
    }

    /// A topic to subscribe to or publish under: no wildcards, no white space, no empty level,
    /// at most `longest` characters.
    static func isTopic(_ text: String, longest: Int) -> Bool {
        !text.isEmpty && text.count <= longest && !text.contains(where: { "+#".contains($0) || $0.isWhitespace })
            && !text.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty }
    }

    mutating func readMQTT(_ table: TOMLDocument.Table) -> MQTTSettings? {
        onlyKnown(
            table,
            [
                "url", "node", "username", "password_file", "tls_ca", "tls_cert", "tls_key", "keepalive", "discovery",
                "discovery_prefix", "state_interval", "expire_after", "commands", "publish_guests", "queue_limit",
                "publish_measurements", "journal_path", "journal_megabytes", "backfill_rate", "key_file",
                "birth_topic",
            ], in: "mqtt")
        guard let (url, line) = string(table, "url") else {
            problem(table.line, "[mqtt] needs url = \"mqtt://host:1883\"")
            return nil
        }
        let broker: MQTTBrokerURL
        do {
            broker = try MQTTBrokerURL(parsing: url)
        } catch {
            problem(line, "\(error)")
            return nil
        }
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "hrbridge"
        var settings = MQTTSettings(broker: broker, node: MQTTSettings.nodeName(fromHost: host))
        if let (node, nodeLine) = string(table, "node") {
            if Self.isName(node) {
                settings.node = node
            } else {
                problem(nodeLine, "node '\(node)' may use 1 to 64 letters, digits, - and _ (it is part of topics)")
            }
        }
        settings.username = string(table, "username")?.0
        settings.passwordFile = filePath(table, "password_file")
        refuseIfEveryoneReads(settings.passwordFile, line: table["password_file"]?.line)
        checkPasswordFile(settings.passwordFile, line: table["password_file"]?.line)
        if table["password_file"] != nil, settings.username == nil {
            problem(table["password_file"]!.line, "password_file needs username as well")
        }
        settings.tlsCA = filePath(table, "tls_ca")
        settings.tlsCertificate = filePath(table, "tls_cert")
        settings.tlsKey = filePath(table, "tls_key")
        refuseIfEveryoneReads(settings.tlsKey, line: table["tls_key"]?.line, key: "tls_key")
        if (table["tls_cert"] == nil) != (table["tls_key"] == nil) {
            problem(table.line, "tls_cert and tls_key go together")
        }
        if !broker.usesTLS, let value = table["tls_ca"] ?? table["tls_cert"] {
            problem(value.line, "TLS files need an mqtts:// url")
        }
        if let seconds = integer(table, "keepalive", in: 5...3600) { settings.keepalive = seconds }
        if let flag = flag(table, "discovery") { settings.discovery = flag }
        if let (prefix, prefixLine) = string(table, "discovery_prefix") {
            if Self.isTopic(prefix, longest: 64) {
                settings.discoveryPrefix = prefix
            } else {
                problem(prefixLine, "discovery_prefix '\(prefix)' is not a topic prefix such as homeassistant")
            }
        }
        if let (topic, topicLine) = string(table, "birth_topic") {
            if Self.isTopic(topic, longest: 128) {
                settings.birthTopic = topic
            } else {
                problem(topicLine, "birth_topic '\(topic.prefix(80))' is not a topic such as homeassistant/status")
            }
        }
        if let seconds = number(table, "state_interval", in: 0...3600, unit: " s") { settings.stateInterval = seconds }
        if let seconds = integer(table, "expire_after", in: 0...86_400) { settings.expireAfter = seconds }
        if settings.expireAfter > 0, settings.stateInterval >= Double(settings.expireAfter),
            let line = (table["state_interval"] ?? table["expire_after"])?.line
        {
            // The state goes out at least every expire_after / 2 while a strap streams, but never
            // more often than state_interval: Home Assistant would show the strap unavailable.
            problem(
                line,
                "state_interval (\(settings.stateInterval) s) must be shorter than expire_after (\(settings.expireAfter) s): Home Assistant would show every strap unavailable between two states"
            )
        }
        if let flag = flag(table, "commands") { settings.commands = flag }
        if let flag = flag(table, "publish_guests") { settings.publishGuests = flag }
        if let limit = integer(table, "queue_limit", in: 1...1_000_000) { settings.queueLimit = limit }
        if let flag = flag(table, "publish_measurements") { settings.publishMeasurements = flag }
        // A gateway feeding a hub: the hub announces the straps; both would make one Home
        // Assistant device of two gateways' entities.
        if settings.publishMeasurements, table["discovery"] == nil { settings.discovery = false }
        if let (path, line) = string(table, "journal_path") {
            if path.hasPrefix("/") {
                settings.journalPath = path
            } else {
                problem(line, "journal_path must be an absolute path")
            }
        }
        if let size = integer(table, "journal_megabytes", in: 1...4096) { settings.journalMegabytes = size }
        if let rate = integer(table, "backfill_rate", in: 1...100_000) { settings.backfillRate = rate }
        // The journal and its backfill are a gateway's: without publish_measurements they do nothing.
        for key in ["journal_path", "journal_megabytes", "backfill_rate"] where !settings.publishMeasurements {
            if let given = table[key] { problem(given.line, "\(key) is a gateway's: it needs publish_measurements") }
        }
        if let path = filePath(table, "key_file"), let line = table["key_file"]?.line {
            refuseIfEveryoneReads(path, line: line, key: "key_file")
            if EnvelopeSigner(keyFile: path) == nil {
                problem(
                    line,
                    "key_file '\(path)' is not a regular file of 32 bytes to 4 KiB: openssl rand -hex 32 > \(path)")
            } else {
                settings.keyFile = path
            }
            if !settings.publishMeasurements {
                problem(line, "key_file signs measurements: it needs publish_measurements")
            }
        }
        return settings
    }

    mutating func readAthlete(_ table: TOMLDocument.Table) -> BridgeConfiguration.Athlete? {
        onlyKnown(
            table, ["id", "name", "age", "sex", "weight", "resting_hr", "max_hr", "ftp", "zones"], in: "[athletes]")
        guard let (id, line) = string(table, "id") else {
            problem(table.line, "an athlete needs id = \"…\"")
            return nil
        }
        guard UserProfile.isValidID(id) else {
            problem(
                line,
                "athlete id '\(id.prefix(64))' may use letters, digits, - and _ only (1 to \(UserProfile.idLength))")
            return nil
        }
        var sex: BiologicalSex?
        if let (text, sexLine) = string(table, "sex") {
            sex = BiologicalSex(rawValue: text)
            if sex == nil { problem(sexLine, "sex '\(text)' is not \"male\" or \"female\"") }
        }
        let resting = number(table, "resting_hr", in: UserProfile.restingHeartRates, unit: " bpm")
        let maximum = number(table, "max_hr", in: UserProfile.maximumHeartRates, unit: " bpm")
        if let resting, let maximum, resting >= maximum {
            problem(
                table["resting_hr"]!.line,
                "resting_hr (\(formatted(resting))) must be below max_hr (\(formatted(maximum)))")
        }
        let profile = UserProfile(
            id: id, name: string(table, "name")?.0, age: integer(table, "age", in: UserProfile.ages), sex: sex,
            weightKilograms: number(table, "weight", in: UserProfile.weightsInKilograms, unit: " kg"),
            restingHeartRate: resting, maximumHeartRate: maximum,
            functionalThresholdPower: number(table, "ftp", in: UserProfile.functionalThresholdPowers, unit: " W"))
        var zones: ZoneConfiguration?
        if let value = table["zones"] {
            if case .array(let elements) = value.kind, elements.allSatisfy({ $0.number != nil }) {
                // The bounds of resting_hr and max_hr: a boundary no heart reaches is a typo.
                var inRange = true
                for (index, element) in elements.enumerated() {
                    guard let bpm = element.number, !Self.heartRates.contains(bpm) else { continue }
                    problem(
                        element.line,
                        "zones: boundary \(index + 1) (\(formatted(bpm))) is out of range "
                            + "\(formatted(Self.heartRates.lowerBound))–\(formatted(Self.heartRates.upperBound)) bpm")
                    inRange = false
                }
                do {
                    let configured = try ZoneConfiguration(
                        quantityType: .heartRate, boundaryValues: elements.compactMap(\.number))
                    if inRange { zones = configured }
                } catch {
                    problem(value.line, "zones: \(error)")
                }
            } else {
                problem(value.line, "zones must be an array of heart rates in bpm, e.g. [120, 140, 160, 175]")
            }
        }
        return BridgeConfiguration.Athlete(profile: profile, zones: zones)
    }

    mutating func readSensor(_ table: TOMLDocument.Table, athletes: [BridgeConfiguration.Athlete], isHub: Bool)
        -> BridgeConfiguration.KnownSensor?
    {
        onlyKnown(
            table,
            [
                "address", "athlete", "name", "adapter", "priority", "node", "address_type", "waveforms", "acc_rate",
                "acc_range",
            ], in: "[sensors]")
        guard let (address, line) = string(table, "address") else {
            problem(table.line, "a sensor needs address = \"AA:BB:CC:DD:EE:FF\"")
            return nil
        }
        guard BluetoothAddress.isValid(address) else {
            problem(line, "'\(address.prefix(40))' is not a Bluetooth address such as C0:FF:EE:00:00:01")
            return nil
        }
        var athlete: String?
        if let (id, athleteLine) = string(table, "athlete") {
            if athletes.contains(where: { $0.profile.id == id }) {
                athlete = id
            } else {
                problem(athleteLine, "athlete '\(id)' is not defined in an [[athletes]] section above")
            }
        }
        var adapter: String?
        if isHub {
            // A hub's straps are its gateways': the one a strap is bound to is its node.
            if let value = table["adapter"] { problem(value.line, "on a hub, bind a sensor to its gateway with node") }
            if let (node, nodeLine) = string(table, "node") {
                if Self.isName(node) {
                    adapter = node
                } else {
                    problem(nodeLine, "node '\(node.prefix(80))' may use 1 to 64 letters, digits, - and _")
                }
            }
        } else {
            if let value = table["node"] {
                problem(value.line, "'node' binds a hub's sensor to a gateway: kind = \"mqtt\" only")
            }
            adapter = string(table, "adapter").flatMap { adapterName($0.0, line: $0.1) }
        }
        var sensor = BridgeConfiguration.KnownSensor(
            address: address.uppercased(), athlete: athlete, name: string(table, "name")?.0, adapter: adapter)
        sensor.priority = integer(table, "priority", in: -1_000...1_000) ?? 0
        if let (text, typeLine) = string(table, "address_type") {
            if isHub {
                problem(typeLine, "address_type is checked by the gateway that hears the strap, not by a hub")
            } else if let type = AddressType(rawValue: text) {
                sensor.addressType = type
            } else {
                problem(typeLine, "address_type '\(text.prefix(40))' is not \"public\" or \"random\"")
            }
        }
        sensor.waveforms = readWaveforms(table, isHub: isHub)
        return sensor
    }

    /// `waveforms = ["ecg", "acc"]`, `acc_rate`, `acc_range` of a `[[sensors]]` entry.
    mutating func readWaveforms(_ table: TOMLDocument.Table, isHub: Bool) -> [WaveformRequest] {
        let rate = integer(table, "acc_rate", in: 1...1000) ?? 50
        let range = integer(table, "acc_range", in: 1...16) ?? 8
        guard let value = table["waveforms"] else {
            for key in ["acc_rate", "acc_range"] where table[key] != nil {
                problem(table[key]!.line, "\(key) applies with waveforms = [\"acc\"]")
            }
            return []
        }
        if isHub {
            problem(value.line, "raw signals are streamed by the gateway linked to the strap, not a hub")
            return []
        }
        guard case .array(let items) = value.kind, items.count <= WaveformKind.allCases.count else {
            problem(value.line, "waveforms must be an array of \"ecg\" and \"acc\"")
            return []
        }
        var requests: [WaveformRequest] = []
        for item in items {
            guard case .string(let text) = item.kind, let kind = WaveformKind(rawValue: text) else {
                problem(item.line, "waveforms: each is \"ecg\" or \"acc\"")
                continue
            }
            let request =
                kind == .acc ? WaveformRequest(kind: .acc, sampleRate: rate, range: range) : WaveformRequest(kind: kind)
            if kind == .acc, request.problem != nil {
                // Each on its own key's line.
                let fastest = WaveformKind.acc.supportedRates[0]
                if let why = WaveformRequest(kind: .acc, sampleRate: rate, range: 8).problem {
                    problem(table["acc_rate"]?.line ?? item.line, why)
                }
                if let why = WaveformRequest(kind: .acc, sampleRate: fastest, range: range).problem {
                    problem(table["acc_range"]?.line ?? item.line, why)
                }
            } else if let why = request.problem {
                problem(item.line, why)
            } else if !requests.contains(where: { $0.kind == kind }) {
                requests.append(request)
            }
        }
        let streamsAcc = items.contains { if case .string("acc") = $0.kind { true } else { false } }
        for key in ["acc_rate", "acc_range"] where !streamsAcc {
            if let given = table[key] { problem(given.line, "\(key) applies with waveforms = [\"acc\"]") }
        }
        return requests
    }
}
