public import Foundation
import JSONSupport
import Sensors

/// One problem in a scenario file, with where it is.
public struct ScenarioProblem: Hashable, Sendable, CustomStringConvertible {
    /// The file, as given.
    public var file: String
    /// The JSON path: `$.straps[0].segments[2].intensity`.
    public var path: String
    /// What is wrong.
    public var message: String

    /// `file: $.path: message`.
    public var description: String { "\(file): \(path): \(message)" }
}

/// Every problem found in a scenario file; nothing is simulated until there are none.
public struct ScenarioError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The problems, in document order.
    public var problems: [ScenarioProblem]

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Reads and validates scenario JSON, collecting one error per problem.
public enum ScenarioParser {
    /// Parses `data` read from `file` (the name only labels errors).
    public static func parse(_ data: Data, file: String) throws(ScenarioError) -> Scenario {
        guard data.count <= limits.fileBytes else {
            throw ScenarioError(problems: [
                ScenarioProblem(file: file, path: "$", message: "larger than \(limits.fileBytes) bytes")
            ])
        }
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw ScenarioError(problems: [
                ScenarioProblem(file: file, path: "$", message: "not valid JSON: \(Self.reason(error))")
            ])
        }
        var reader = Reader(file: file)
        let scenario = reader.scenario(root)
        if !reader.problems.isEmpty { throw ScenarioError(problems: reader.problems) }
        return scenario!
    }

    /// Bounds on what a scenario may ask for; each list is checked before it is read.
    public static let limits = (fileBytes: 4 << 20, straps: 1_000, segments: 1_000, faults: 10_000, nameLength: 248)

    /// Reads and parses the file at `path`.
    public static func load(path: String) throws(ScenarioError) -> Scenario {
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > limits.fileBytes
        {
            throw ScenarioError(problems: [
                ScenarioProblem(file: path, path: "$", message: "larger than \(limits.fileBytes) bytes")
            ])
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScenarioError(problems: [ScenarioProblem(file: path, path: "$", message: "cannot read the file")])
        }
        return try parse(data, file: path)
    }

    private static func reason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        }
        return "\(error)"
    }

    /// Parses a duration: seconds as a number, or text such as `90s`, `5m`, `1h30m`, `1m30s`.
    public static func duration(_ text: String) -> Double? {
        var total = 0.0
        var number = ""
        var sawUnit = false
        for character in text.trimmingCharacters(in: .whitespaces) {
            if character.isNumber || character == "." {
                number.append(character)
                continue
            }
            guard let value = Double(number) else { return nil }
            switch character {
            case "h": total += value * 3600
            case "m": total += value * 60
            case "s": total += value
            default: return nil
            }
            number = ""
            sawUnit = true
        }
        if !number.isEmpty {
            guard let value = Double(number), !sawUnit else { return nil }
            total += value
        }
        return sawUnit || !text.isEmpty ? total : nil
    }
}

private struct Reader {
    let file: String
    var problems: [ScenarioProblem] = []

    init(file: String) { self.file = file }

    mutating func problem(_ path: String, _ message: String) {
        problems.append(ScenarioProblem(file: file, path: path, message: message))
    }

    mutating func object(_ value: JSONValue, _ path: String, allowed: Set<String>) -> [String: JSONValue]? {
        guard case .object(let members) = value else {
            problem(path, "expected an object, found \(value.kindName)")
            return nil
        }
        for key in members.keys.sorted() where !allowed.contains(key) {
            problem("\(path).\(key)", "unknown key (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
        return members
    }

    mutating func number(
        _ members: [String: JSONValue], _ key: String, _ path: String, range: ClosedRange<Double>,
        default value: Double?
    ) -> Double? {
        guard let raw = members[key] else {
            if value == nil { problem("\(path).\(key)", "required") }
            return value
        }
        guard case .number(let number) = raw else {
            problem("\(path).\(key)", "expected a number, found \(raw.kindName)")
            return nil
        }
        guard range.contains(number) else {
            problem(
                "\(path).\(key)",
                "must be from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)) (got \(Self.format(number)))"
            )
            return nil
        }
        return number
    }

    mutating func bool(_ members: [String: JSONValue], _ key: String, _ path: String, default value: Bool) -> Bool {
        guard let raw = members[key] else { return value }
        guard case .bool(let flag) = raw else {
            problem("\(path).\(key)", "expected true or false, found \(raw.kindName)")
            return value
        }
        return flag
    }

    mutating func string(_ members: [String: JSONValue], _ key: String, _ path: String) -> String? {
        guard let raw = members[key] else {
            problem("\(path).\(key)", "required")
            return nil
        }
        guard case .string(let text) = raw, !text.isEmpty else {
            problem("\(path).\(key)", "expected a non-empty string, found \(raw.kindName)")
            return nil
        }
        return text
    }

    mutating func duration(
        _ members: [String: JSONValue], _ key: String, _ path: String, default value: Double? = nil,
        allowsZero: Bool = false
    ) -> Double? {
        guard let raw = members[key] else {
            if value == nil { problem("\(path).\(key)", "required") }
            return value
        }
        let seconds: Double?
        switch raw {
        case .number(let number): seconds = number
        case .string(let text): seconds = ScenarioParser.duration(text)
        default: seconds = nil
        }
        guard let seconds, seconds.isFinite, seconds > 0 || (allowsZero && seconds == 0) else {
            problem(
                "\(path).\(key)",
                "expected a duration such as \"90s\", \"5m\", \"1h30m\" or seconds (got \(Self.describe(raw)))")
            return nil
        }
        return seconds
    }

    mutating func scenario(_ root: JSONValue) -> Scenario? {
        guard let members = object(root, "$", allowed: ["version", "seed", "straps"]) else { return nil }
        if let version = members["version"], case .number(let number) = version, number == 1 {
        } else if members["version"] != nil {
            problem("$.version", "only version 1 is supported")
        }
        let seed = number(members, "seed", "$", range: 0...9_007_199_254_740_991, default: 1)
        guard let rawStraps = members["straps"] else {
            problem("$.straps", "required: a list of virtual straps")
            return nil
        }
        guard case .array(let list) = rawStraps, !list.isEmpty else {
            problem("$.straps", "expected a non-empty array, found \(rawStraps.kindName)")
            return nil
        }
        guard list.count <= ScenarioParser.limits.straps else {
            problem("$.straps", "at most \(ScenarioParser.limits.straps) straps")
            return nil
        }
        var straps: [StrapScenario] = []
        var addresses: Set<String> = []
        for (index, value) in list.enumerated() {
            let path = "$.straps[\(index)]"
            guard let strap = strap(value, path) else { continue }
            if !addresses.insert(strap.address.uppercased()).inserted {
                problem("\(path).address", "duplicate address \(strap.address)")
            }
            straps.append(strap)
        }
        guard let seed, problems.isEmpty else { return nil }
        return Scenario(seed: UInt64(seed), straps: straps)
    }

    mutating func strap(_ value: JSONValue, _ path: String) -> StrapScenario? {
        let allowed: Set<String> = [
            "name", "address", "restingHeartRate", "maximumHeartRate", "battery", "contactSupported",
            "energyExpended", "rrIntervals", "age", "weight", "sex", "segments", "faults", "ectopicBeats",
            "missedBeats", "broadcastOnly", "bonded", "pmd",
        ]
        guard let members = object(value, path, allowed: allowed) else { return nil }
        let name = string(members, "name", path)
        if let name, name.utf8.count > ScenarioParser.limits.nameLength {
            // A Bluetooth name holds at most 248 bytes.
            problem("\(path).name", "at most \(ScenarioParser.limits.nameLength) bytes")
        }
        var address = string(members, "address", path)
        if let text = address, !Self.isAddress(text) {
            problem("\(path).address", "expected a Bluetooth address like C0:FF:EE:00:00:01 (got \"\(text)\")")
            address = nil
        }
        let resting = number(members, "restingHeartRate", path, range: 30...120, default: 60)
        let maximum = number(members, "maximumHeartRate", path, range: 100...240, default: 185)
        if let resting, let maximum, maximum <= resting + 20 {
            problem("\(path).maximumHeartRate", "must be at least 20 above restingHeartRate")
        }
        let battery = number(members, "battery", path, range: 0...100, default: 100)
        let age = number(members, "age", path, range: 10...100, default: 35)
        let weight = number(members, "weight", path, range: 25...250, default: 75)
        var isMale = true
        if let sex = members["sex"] {
            if case .string(let text) = sex, text == "male" || text == "female" {
                isMale = text == "male"
            } else {
                problem("\(path).sex", "expected \"male\" or \"female\"")
            }
        }
        let contact = bool(members, "contactSupported", path, default: true)
        let energy = bool(members, "energyExpended", path, default: true)
        let rr = bool(members, "rrIntervals", path, default: true)
        let broadcastOnly = bool(members, "broadcastOnly", path, default: false)
        let bonded = bool(members, "bonded", path, default: true)
        let ectopic = number(members, "ectopicBeats", path, range: 0...0.2, default: 0)
        let missed = number(members, "missedBeats", path, range: 0...0.2, default: 0)
        let pmd = members["pmd"].flatMap { pmdService($0, "\(path).pmd") }
        var segments: [WorkloadSegment] = []
        if let raw = members["segments"] {
            if case .array(let list) = raw, list.count > ScenarioParser.limits.segments {
                problem("\(path).segments", "at most \(ScenarioParser.limits.segments) segments")
            } else if case .array(let list) = raw, !list.isEmpty {
                for (index, item) in list.enumerated() {
                    if let segment = segment(item, "\(path).segments[\(index)]") { segments.append(segment) }
                }
            } else {
                problem("\(path).segments", "expected a non-empty array, found \(raw.kindName)")
            }
        } else {
            problem(
                "\(path).segments",
                "required: the workload, e.g. [{\"type\": \"steady\", \"duration\": \"5m\", \"intensity\": 0.5}]")
        }
        var faults: [Fault] = []
        if let raw = members["faults"] {
            if case .array(let list) = raw, list.count > ScenarioParser.limits.faults {
                problem("\(path).faults", "at most \(ScenarioParser.limits.faults) faults")
            } else if case .array(let list) = raw {
                for (index, item) in list.enumerated() {
                    if let fault = fault(item, "\(path).faults[\(index)]") { faults.append(fault) }
                }
            } else {
                problem("\(path).faults", "expected an array, found \(raw.kindName)")
            }
        }
        guard let name, let address, let resting, let maximum, let battery, let age, let weight else { return nil }
        return StrapScenario(
            name: name, address: address.uppercased(), restingHeartRate: resting, maximumHeartRate: maximum,
            battery: battery, contactSupported: contact, energyExpended: energy, rrIntervals: rr, age: age,
            weight: weight, isMale: isMale, segments: segments, faults: faults.sorted { $0.start < $1.start },
            ectopicBeats: ectopic ?? 0, missedBeats: missed ?? 0, broadcastOnly: broadcastOnly, bonded: bonded, pmd: pmd
        )
    }

    /// `"pmd": true`, or an object with `clockDriftPpm`, `jitter` and `latencyFloor` (seconds), and
    /// `answersStart` (false: a strap that never answers a START request).
    mutating func pmdService(_ value: JSONValue, _ path: String) -> PMDScenario? {
        if case .bool(let on) = value { return on ? PMDScenario() : nil }
        guard
            let members = object(
                value, path, allowed: ["clockDriftPpm", "jitter", "latencyFloor", "answersStart"])
        else {
            return nil
        }
        let defaults = PMDScenario()
        let drift = number(members, "clockDriftPpm", path, range: -500...500, default: defaults.clockDriftPPM)
        let jitter = number(members, "jitter", path, range: 0...1, default: defaults.jitter)
        let floor = number(members, "latencyFloor", path, range: 0...1, default: defaults.latencyFloor)
        let answers = bool(members, "answersStart", path, default: true)
        guard let drift, let jitter, let floor else { return nil }
        return PMDScenario(clockDriftPPM: drift, jitter: jitter, latencyFloor: floor, answersStart: answers)
    }

    mutating func segment(_ value: JSONValue, _ path: String) -> WorkloadSegment? {
        guard case .object(let members) = value, case .string(let type)? = members["type"] else {
            problem("\(path).type", "required: \"steady\", \"ramp\" or \"intervals\"")
            return nil
        }
        switch type {
        case "steady":
            guard object(value, path, allowed: ["type", "duration", "intensity"]) != nil else { return nil }
            let duration = duration(members, "duration", path)
            let intensity = number(members, "intensity", path, range: 0...1, default: nil)
            guard let duration, let intensity else { return nil }
            return .steady(duration: duration, intensity: intensity)
        case "ramp":
            guard object(value, path, allowed: ["type", "duration", "from", "to"]) != nil else { return nil }
            let duration = duration(members, "duration", path)
            let from = number(members, "from", path, range: 0...1, default: nil)
            let to = number(members, "to", path, range: 0...1, default: nil)
            guard let duration, let from, let to else { return nil }
            return .ramp(duration: duration, from: from, to: to)
        case "intervals":
            guard object(value, path, allowed: ["type", "repeat", "work", "recovery"]) != nil else { return nil }
            let count = number(members, "repeat", path, range: 1...1000, default: nil)
            if let count, count != count.rounded() { problem("\(path).repeat", "must be a whole number") }
            let work = phase(members["work"], "\(path).work")
            let recovery = phase(members["recovery"], "\(path).recovery")
            guard let count, let work, let recovery else { return nil }
            return .intervals(
                repeat: Int(count), workDuration: work.duration, workIntensity: work.intensity,
                recoveryDuration: recovery.duration, recoveryIntensity: recovery.intensity)
        default:
            problem("\(path).type", "unknown segment type \"\(type)\" (steady, ramp, intervals)")
            return nil
        }
    }

    mutating func phase(_ value: JSONValue?, _ path: String) -> (duration: Double, intensity: Double)? {
        guard let value else {
            problem(path, "required: {\"duration\": \"1m\", \"intensity\": 0.9}")
            return nil
        }
        guard let members = object(value, path, allowed: ["duration", "intensity"]) else { return nil }
        let duration = duration(members, "duration", path)
        let intensity = number(members, "intensity", path, range: 0...1, default: nil)
        guard let duration, let intensity else { return nil }
        return (duration, intensity)
    }

    mutating func fault(_ value: JSONValue, _ path: String) -> Fault? {
        guard case .object(let members) = value, case .string(let type)? = members["type"] else {
            problem("\(path).type", "required: dropout, contactLost, disconnect, batteryDrain or malformedFrame")
            return nil
        }
        switch type {
        case "dropout", "contactLost", "disconnect":
            guard object(value, path, allowed: ["type", "at", "duration"]) != nil else { return nil }
            let at = duration(members, "at", path, allowsZero: true)
            let length = duration(members, "duration", path)
            guard let at, let length else { return nil }
            switch type {
            case "dropout": return .dropout(at: at, duration: length)
            case "contactLost": return .contactLost(at: at, duration: length)
            default: return .disconnect(at: at, duration: length)
            }
        case "batteryDrain":
            guard object(value, path, allowed: ["type", "at", "to", "duration"]) != nil else { return nil }
            let at = duration(members, "at", path, allowsZero: true)
            let to = number(members, "to", path, range: 0...100, default: nil)
            let length = duration(members, "duration", path, default: 60)
            guard let at, let to, let length else { return nil }
            return .batteryDrain(at: at, to: to, duration: length)
        case "malformedFrame":
            guard object(value, path, allowed: ["type", "at"]) != nil else { return nil }
            guard let at = duration(members, "at", path, allowsZero: true) else { return nil }
            return .malformedFrame(at: at)
        default:
            problem(
                "\(path).type",
                "unknown fault type \"\(type)\" (dropout, contactLost, disconnect, batteryDrain, malformedFrame)")
            return nil
        }
    }

    static func isAddress(_ text: String) -> Bool {
        BluetoothAddress.isValid(text)
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): "\"\(text)\""
        case .number(let number): format(number)
        default: value.kindName
        }
    }
}
