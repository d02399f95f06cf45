public import Foundation
public import JSONSupport
import Workouts

/// The plan file format (JSON, version 1), documented in docs/workouts.md and in
/// `Sources/WorkoutPlans/plan.schema.json`: human-friendly values such as `"5 min"`, `"2 mi"`, `"250-275 W"`,
/// `"4:30-5:00 /km"`; every plan is validated when it is read and before it is written.
public enum PlanFormat {
    /// Reads and validates a plan; every problem is reported with its location and JSON path.
    public static func decode(_ data: Data, context: PlanContext = PlanContext()) throws(PlanError) -> WorkoutPlan {
        guard data.count <= PlanLimits.fileBytes else {
            throw PlanError(problems: [
                PlanProblem(location: "plan", path: "$", kind: .tooLarge("bytes", limit: PlanLimits.fileBytes))
            ])
        }
        let root: JSONValue
        do {
            root = try JSONText.decode(JSONValue.self, from: data)
        } catch {
            throw PlanError(problems: [PlanProblem(location: "plan", path: "$", kind: .format("not valid JSON"))])
        }
        return try decode(root, context: context)
    }

    /// Reads and validates a plan already parsed as JSON (a session request's `plan`).
    public static func decode(_ root: JSONValue, context: PlanContext = PlanContext()) throws(PlanError) -> WorkoutPlan
    {
        var reader = Reader()
        let plan = reader.plan(root)
        if let plan { reader.problems += PlanValidator.problems(in: plan, context: context) }
        if !reader.problems.isEmpty { throw PlanError(problems: Self.listed(reader.problems)) }
        return plan!
    }

    /// The first ``PlanLimits/problems`` problems, then one saying how many more there were.
    static func listed(_ problems: [PlanProblem]) -> [PlanProblem] {
        guard problems.count > PlanLimits.problems else { return problems }
        return Array(problems.prefix(PlanLimits.problems)) + [
            PlanProblem(
                location: "plan", path: "$",
                kind: .format("\(problems.count - PlanLimits.problems) more problems not listed"))
        ]
    }

    /// Validates and writes a plan (sorted keys, so the output is stable).
    public static func encode(_ plan: WorkoutPlan, context: PlanContext = PlanContext()) throws(PlanError) -> Data {
        try PlanValidator.validate(plan, context: context)
        var object: [String: JSONValue] = [
            "version": .number(1), "name": .string(plan.name), "activity": .string(plan.activity.rawValue),
            "location": .string(plan.location.rawValue),
        ]
        switch plan.kind {
        case .custom(let warmup, let blocks, let cooldown):
            var custom: [String: JSONValue] = [
                "blocks": .array(
                    blocks.map { block in
                        .object([
                            "iterations": .number(Double(block.iterations)),
                            "steps": .array(
                                block.steps.map { step in
                                    var object = Self.step(step.step)
                                    object["purpose"] = .string(step.purpose.rawValue)
                                    return .object(object)
                                }),
                        ])
                    })
            ]
            if let warmup { custom["warmup"] = .object(step(warmup)) }
            if let cooldown { custom["cooldown"] = .object(step(cooldown)) }
            object["custom"] = .object(custom)
        case .singleGoal(let goal):
            object["singleGoal"] = self.goal(goal)
        case .pacer(let distance, let time):
            object["pacer"] = .object(["distance": .string(distance.description), "time": .string(time.description)])
        }
        // Every number in a validated plan is finite: encoding cannot fail.
        return (try? JSONText.pretty(JSONValue.object(object))) ?? Data()
    }

    private static func step(_ step: WorkoutStep) -> [String: JSONValue] {
        var object: [String: JSONValue] = ["goal": goal(step.goal)]
        if let name = step.displayName { object["name"] = .string(name) }
        if let alert = step.alert { object["alert"] = .object(self.alert(alert)) }
        return object
    }

    private static func goal(_ goal: WorkoutGoal) -> JSONValue {
        switch goal {
        case .open: .string("open")
        case .time(let value): .object(["time": .string(value.description)])
        case .distance(let value): .object(["distance": .string(value.description)])
        case .energy(let value): .object(["energy": .string(value.description)])
        }
    }

    private static func alert(_ alert: WorkoutAlert) -> [String: JSONValue] {
        var object: [String: JSONValue] = ["metric": .string(alert.metric.rawValue)]
        switch alert {
        case .heartRateRange(let range, _): object["heartRate"] = .string(range.description)
        case .heartRateZone(let index, _): object["heartRateZone"] = .number(Double(index))
        case .powerRange(let range, _): object["power"] = .string(range.description)
        case .powerThreshold(let value, _): object["powerThreshold"] = .string(value.description)
        case .powerZone(let index, _): object["powerZone"] = .number(Double(index))
        case .cadenceRange(let range, _): object["cadence"] = .string(range.description)
        case .cadenceThreshold(let value, _): object["cadenceThreshold"] = .string(value.description)
        case .speedRange(let range, _): object["speed"] = .string(range.description)
        case .speedThreshold(let value, _): object["speedThreshold"] = .string(value.description)
        }
        return object
    }
}

private struct Reader {
    var problems: [PlanProblem] = []

    mutating func fail(_ location: String, _ path: String, _ message: String) {
        problems.append(PlanProblem(location: location, path: path, kind: .format(message)))
    }

    /// Every key of `object` not in `known` is a problem: a misspelt key is never silently ignored.
    mutating func onlyKnownKeys(
        _ object: [String: JSONValue], _ known: Set<String>, _ location: String, _ path: String
    ) {
        for key in object.keys.sorted() where !known.contains(key) { fail(location, "\(path).\(key)", "unknown key") }
    }

    /// The text at `key`: nil when absent; a problem, and nil, when it is there but not text.
    mutating func text(
        _ object: [String: JSONValue], _ key: String, _ location: String, _ path: String
    ) -> String? {
        guard let raw = object[key] else { return nil }
        guard let text = raw.string else {
            fail(location, "\(path).\(key)", "expected text")
            return nil
        }
        return text
    }

    mutating func plan(_ root: JSONValue) -> WorkoutPlan? {
        guard let object = root.object else {
            fail("plan", "$", "expected an object")
            return nil
        }
        onlyKnownKeys(
            object, ["version", "name", "activity", "location", "custom", "singleGoal", "pacer"], "plan", "$")
        if let version = object["version"], version != .number(1) {
            fail("plan", "$.version", "only version 1 is supported")
        }
        let name = text(object, "name", "plan", "$") ?? "Workout"
        guard let activityText = object["activity"]?.string,
            let activity = WorkoutActivityType(rawValue: activityText)
        else {
            fail(
                "plan", "$.activity",
                "required: one of \(WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        var location = WorkoutLocation.unknown
        if let text = text(object, "location", "plan", "$") {
            if let known = WorkoutLocation(rawValue: text) {
                location = known
            } else {
                fail(
                    "plan", "$.location",
                    "indoor, outdoor or unknown")
            }
        }
        let kinds = ["custom", "singleGoal", "pacer"].filter { object[$0] != nil }
        guard kinds.count == 1 else {
            fail("plan", "$", "exactly one of custom, singleGoal or pacer is required")
            return nil
        }
        let kind: WorkoutPlan.Kind?
        switch kinds[0] {
        case "custom": kind = custom(object["custom"])
        case "singleGoal": kind = goal(object["singleGoal"], "plan", "$.singleGoal").map { .singleGoal($0) }
        default:
            let pacer = object["pacer"]?.object
            if let pacer { onlyKnownKeys(pacer, ["distance", "time"], "plan", "$.pacer") }
            let distance = value(pacer?["distance"], "plan", "$.pacer.distance")
            let time = value(pacer?["time"], "plan", "$.pacer.time")
            kind = distance.flatMap { distance in time.map { .pacer(distance: distance, time: $0) } }
        }
        return kind.map { WorkoutPlan(name: name, activity: activity, location: location, kind: $0) }
    }

    mutating func custom(_ any: JSONValue?) -> WorkoutPlan.Kind? {
        guard let object = any?.object else {
            fail("plan", "$.custom", "expected an object with warmup, blocks and cooldown")
            return nil
        }
        onlyKnownKeys(object, ["warmup", "blocks", "cooldown"], "plan", "$.custom")
        let warmup = object["warmup"].flatMap { step($0, "warm-up", "$.custom.warmup") }
        let cooldown = object["cooldown"].flatMap { step($0, "cool-down", "$.custom.cooldown") }
        var blocks: [IntervalBlock] = []
        if let raw = object["blocks"], raw.array == nil { fail("plan", "$.custom.blocks", "expected a list of blocks") }
        // Bounds before the work they bound: each entry read is a problem or a block.
        let rawBlocks = object["blocks"]?.array ?? []
        guard rawBlocks.count <= PlanLimits.blocks else {
            problems.append(
                PlanProblem(
                    location: "plan", path: "$.custom.blocks", kind: .tooLarge("blocks", limit: PlanLimits.blocks)))
            return nil
        }
        var oversized = false
        for (index, any) in rawBlocks.enumerated() {
            let path = "$.custom.blocks[\(index)]"
            guard let block = any.object else {
                fail("block \(index + 1)", path, "expected an object")
                continue
            }
            onlyKnownKeys(block, ["steps", "iterations"], "block \(index + 1)", path)
            if let raw = block["steps"], raw.array == nil {
                fail("block \(index + 1)", path + ".steps", "expected a list of steps")
            }
            var steps: [IntervalStep] = []
            let rawSteps = block["steps"]?.array ?? []
            guard rawSteps.count <= PlanLimits.stepsPerBlock else {
                problems.append(
                    PlanProblem(
                        location: "block \(index + 1)", path: path + ".steps",
                        kind: .tooLarge("steps in a block", limit: PlanLimits.stepsPerBlock)))
                oversized = true
                continue
            }
            for (stepIndex, stepAny) in rawSteps.enumerated() {
                let location = "block \(index + 1), step \(stepIndex + 1)"
                let stepPath = path + ".steps[\(stepIndex)]"
                let purposeRaw = stepAny.object?["purpose"]
                guard let purpose = IntervalStep.Purpose(rawValue: purposeRaw.map { $0.string ?? "" } ?? "work") else {
                    fail(location, stepPath + ".purpose", "work or recovery")
                    continue
                }
                if let parsed = step(stepAny, location, stepPath, purposeAllowed: true) {
                    steps.append(IntervalStep(purpose: purpose, step: parsed))
                }
            }
            var iterations = 1
            if let raw = block["iterations"] {
                // A whole number (the validator bounds it); anything else is an error, never a default.
                if let whole = raw.integer {
                    iterations = whole
                } else {
                    fail(
                        "block \(index + 1)", path + ".iterations",
                        "iterations must be a whole number from 1 to \(PlanLimits.iterations)")
                }
            }
            blocks.append(IntervalBlock(steps: steps, iterations: iterations))
        }
        // A block left unread is no plan to check further.
        if oversized { return nil }
        return .custom(warmup: warmup, blocks: blocks, cooldown: cooldown)
    }

    mutating func step(
        _ any: JSONValue, _ location: String, _ path: String, purposeAllowed: Bool = false
    ) -> WorkoutStep? {
        guard let object = any.object else {
            fail(location, path, "expected an object with a goal")
            return nil
        }
        onlyKnownKeys(
            object, purposeAllowed ? ["goal", "alert", "name", "purpose"] : ["goal", "alert", "name"], location, path)
        guard let goal = goal(object["goal"] ?? .string("open"), location, path + ".goal") else { return nil }
        var alert: WorkoutAlert?
        if let alertObject = object["alert"] {
            guard let parsed = self.alert(alertObject, location, path + ".alert") else { return nil }
            alert = parsed
        }
        return WorkoutStep(goal: goal, alert: alert, displayName: text(object, "name", location, path))
    }

    mutating func value(_ any: JSONValue?, _ location: String, _ path: String) -> PlanValue? {
        guard let text = any?.string, let value = PlanValue.parse(text) else {
            fail(location, path, "expected a value with a unit, such as \"5 min\", \"2 mi\" or \"250 W\"")
            return nil
        }
        return value
    }

    mutating func goal(_ any: JSONValue?, _ location: String, _ path: String) -> WorkoutGoal? {
        if any?.string == "open" { return .open }
        guard let object = any?.object, object.count == 1, let (key, raw) = object.first else {
            fail(location, path, "expected \"open\" or one of {\"time\"|\"distance\"|\"energy\": value}")
            return nil
        }
        guard let parsed = value(raw, location, path + ".\(key)") else { return nil }
        switch key {
        case "time": return .time(parsed)
        case "distance": return .distance(parsed)
        case "energy": return .energy(parsed)
        default:
            fail(location, path + ".\(key)", "unknown goal (time, distance, energy or \"open\")")
            return nil
        }
    }

    mutating func alert(_ any: JSONValue, _ location: String, _ path: String) -> WorkoutAlert? {
        guard let object = any.object else {
            fail(location, path, "expected an object such as {\"heartRateZone\": 2}")
            return nil
        }
        let metric = AlertMetric(rawValue: object["metric"].map { $0.string ?? "" } ?? "current")
        guard let metric else {
            fail(location, path + ".metric", "current or average")
            return nil
        }
        let keys = object.keys.filter { $0 != "metric" }
        guard keys.count == 1, let key = keys.first else {
            fail(location, path, "exactly one alert per step")
            return nil
        }
        let raw = object[key]
        func range() -> PlanRange? {
            guard let text = raw?.string, let range = PlanRange.parse(text) else {
                fail(location, path + ".\(key)", "expected a range with a unit, such as \"250-275 W\"")
                return nil
            }
            return range
        }
        func zone() -> Int? {
            guard let index = raw?.integer else {
                fail(location, path + ".\(key)", "expected a zone number")
                return nil
            }
            return index
        }
        switch key {
        case "heartRate": return range().map { .heartRateRange($0, metric) }
        case "heartRateZone": return zone().map { .heartRateZone($0, metric) }
        case "power": return range().map { .powerRange($0, metric) }
        case "powerThreshold": return value(raw, location, path + ".\(key)").map { .powerThreshold($0, metric) }
        case "powerZone": return zone().map { .powerZone($0, metric) }
        case "cadence": return range().map { .cadenceRange($0, metric) }
        case "cadenceThreshold": return value(raw, location, path + ".\(key)").map { .cadenceThreshold($0, metric) }
        case "speed", "pace": return range().map { .speedRange($0, metric) }
        case "speedThreshold", "paceThreshold":
            return value(raw, location, path + ".\(key)").map { .speedThreshold($0, metric) }
        default:
            fail(location, path + ".\(key)", "unknown alert")
            return nil
        }
    }
}
