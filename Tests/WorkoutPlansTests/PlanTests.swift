import Foundation
import Samples
import Testing
import Workouts

@testable import WorkoutPlans

private let heartRateZones = try! ZoneConfiguration(quantityType: .heartRate, boundaryValues: [120, 140, 160, 175])
private let context = PlanContext(zones: [.heartRate: heartRateZones])

/// The WWDC23 example: cycling, open warm-up; 4 × (2 mi work with a pace alert, 0.5 mi recovery
/// in HR zone 1); 2 × (2 min at 250–275 W, 30 s recovery in HR zone 1); a 5 min cool-down.
let wwdcJSON = """
    {
      "version": 1,
      "name": "WWDC intervals",
      "activity": "cycling",
      "location": "outdoor",
      "custom": {
        "warmup": {"goal": "open"},
        "blocks": [
          {"iterations": 4, "steps": [
            {"purpose": "work", "goal": {"distance": "2 mi"}, "alert": {"pace": "3:00-3:30 /mi"}},
            {"purpose": "recovery", "goal": {"distance": "0.5 mi"}, "alert": {"heartRateZone": 1}}
          ]},
          {"iterations": 2, "steps": [
            {"purpose": "work", "goal": {"time": "2 min"}, "alert": {"power": "250-275 W"}},
            {"purpose": "recovery", "goal": {"time": "30 s"}, "alert": {"heartRateZone": 1}}
          ]}
        ],
        "cooldown": {"goal": {"time": "5 min"}}
      }
    }
    """

private func problems(_ json: String, context: PlanContext = context) -> [PlanProblem] {
    do {
        _ = try PlanFormat.decode(Data(json.utf8), context: context)
        return []
    } catch {
        return error.problems
    }
}

private func plan(activity: String = "cycling", _ custom: String) -> String {
    "{\"version\": 1, \"name\": \"t\", \"activity\": \"\(activity)\", \"custom\": \(custom)}"
}

@Suite("Structured workouts: format and validation")
struct PlanFormatTests {
    @Test("the WWDC example is valid and round-trips exactly")
    func wwdc() throws {
        let decoded = try PlanFormat.decode(Data(wwdcJSON.utf8), context: context)
        guard case .custom(let warmup, let blocks, let cooldown) = decoded.kind else {
            Issue.record("not a custom plan")
            return
        }
        #expect(warmup?.goal == .open)
        #expect(blocks.map(\.iterations) == [4, 2])
        #expect(blocks[0].steps[0].step.goal == .distance(PlanValue(2, .mile)))
        #expect(
            blocks[0].steps[0].step.alert
                == .speedRange(PlanRange(from: PlanValue(180, .perMile), to: PlanValue(210, .perMile)), .current))
        #expect(
            blocks[1].steps[0].step.alert
                == .powerRange(PlanRange(from: PlanValue(250, .watt), to: PlanValue(275, .watt)), .current))
        #expect(cooldown?.goal == .time(PlanValue(5, .minute)))
        let encoded = try PlanFormat.encode(decoded, context: context)
        let again = try PlanFormat.decode(encoded, context: context)
        #expect(again == decoded)
        #expect(try PlanFormat.encode(again, context: context) == encoded, "stable output")
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text.contains("\"2 mi\"") && text.contains("\"250-275 W\"") && text.contains("\"3:00-3:30 /mi\""))
    }

    @Test("single-goal and pacer plans")
    func otherKinds() throws {
        let single = try PlanFormat.decode(Data(#"{"activity": "running", "singleGoal": {"energy": "500 kcal"}}"#.utf8))
        #expect(single.kind == .singleGoal(.energy(PlanValue(500, .kilocalorie))))
        let pacer = try PlanFormat.decode(
            Data(#"{"activity": "running", "pacer": {"distance": "5 km", "time": "25 min"}}"#.utf8))
        #expect(pacer.kind == .pacer(distance: PlanValue(5, .kilometer), time: PlanValue(25, .minute)))
        #expect(try PlanFormat.decode(PlanFormat.encode(pacer)) == pacer)
    }

    @Test("one test per error kind, each saying where")
    func errors() {
        let distanceOnStrength = problems(
            plan(activity: "strength", #"{"blocks": [{"steps": [{"goal": {"distance": "1 km"}}]}]}"#))
        #expect(distanceOnStrength.map(\.kind) == [.goalNotSupported(goal: "distance", activity: .strength)])
        #expect(distanceOnStrength.first?.location == "block 1, step 1")
        #expect(distanceOnStrength.first?.path == "$.custom.blocks[0].steps[0].goal")

        let paceOnElliptical = problems(
            plan(
                activity: "elliptical",
                #"{"blocks": [{"steps": [{"goal": {"time": "1 min"}, "alert": {"pace": "5:00-6:00 /km"}}]}]}"#))
        #expect(
            paceOnElliptical.map(\.kind) == [
                .alertNotSupported(alert: "pace or speed", activity: .elliptical, reason: "it has no speed")
            ])

        let powerOnRunning = problems(
            plan(
                activity: "running",
                #"{"blocks": [{"steps": [{"goal": {"time": "1 min"}, "alert": {"power": "200-250 W"}}]}]}"#))
        #expect(
            powerOnRunning.map(\.kind) == [
                .alertNotSupported(alert: "power", activity: .running, reason: "no power meter")
            ])
        #expect(
            problems(
                plan(
                    activity: "running",
                    #"{"blocks": [{"steps": [{"goal": {"time": "1 min"}, "alert": {"power": "200-250 W"}}]}]}"#),
                context: PlanContext(zones: [.heartRate: heartRateZones], hasPowerMeter: true)
            ).isEmpty)

        let energyInCustom = problems(plan(#"{"blocks": [{"steps": [{"goal": {"energy": "100 kcal"}}]}]}"#))
        #expect(energyInCustom.map(\.kind) == [.energyGoalInCustomPlan])

        #expect(problems(plan(#"{"blocks": [{"steps": []}]}"#)).map(\.kind) == [.emptyBlock])
        #expect(problems(plan(#"{"blocks": []}"#)).map(\.kind) == [.noBlocks])
        let zero = problems(plan(#"{"blocks": [{"iterations": 0, "steps": [{"goal": {"time": "1 min"}}]}]}"#))
        #expect(zero.map(\.kind) == [.zeroIterations])
        #expect(zero.first?.location == "block 1")

        let inverted = problems(
            plan(#"{"blocks": [{"steps": [{"goal": {"time": "1 min"}, "alert": {"power": "275-250 W"}}]}]}"#))
        #expect(
            inverted.map(\.kind) == [.invertedRange(PlanRange(from: PlanValue(275, .watt), to: PlanValue(250, .watt)))])

        let zone = problems(
            plan(#"{"blocks": [{"steps": [{"goal": {"time": "1 min"}, "alert": {"heartRateZone": 6}}]}]}"#))
        #expect(zone.map(\.kind) == [.zoneOutOfRange(index: 6, zoneCount: 5)])

        let unit = problems(
            plan(#"{"blocks": [{"steps": [{"goal": {"time": "2 mi"}, "alert": {"power": "250-275 bpm"}}]}]}"#))
        #expect(unit.map(\.kind).contains(.wrongDimension(found: .mile, expected: .time)))
        #expect(unit.map(\.kind).contains(.wrongDimension(found: .beatsPerMinute, expected: .power)))

        let second = problems(
            plan(
                #"{"blocks": [{"steps": [{"goal": {"time": "1 min"}}]}, {"steps": [{"goal": "open"}, {"goal": {"time": "-5 s"}}]}]}"#
            ))
        #expect(second.map(\.location) == ["block 2, step 2"])
        #expect(second.map(\.kind) == [.notPositive])

        let format = problems(#"{"activity": "juggling", "custom": {}}"#)
        #expect(format.first?.path == "$.activity")
        #expect(problems("not json").first?.kind == .format("not valid JSON"))
        #expect(
            problems(plan(#"{"blocks": [{"steps": [{"goal": {"time": "5 fortnights"}}]}]}"#)).first?.path
                == "$.custom.blocks[0].steps[0].goal.time")
    }

    @Test(
        "a misspelt key or a value of the wrong type anywhere is a problem at its path, never a default",
        arguments: [
            (
                #"{"activity": "running", "custom": {"blockz": [], "blocks": [{"steps": [{"goal": "open"}]}]}}"#,
                "$.custom.blockz"
            ),
            (
                #"{"activity": "running", "custom": {"blocks": [{"iteratons": 3, "steps": [{"goal": "open"}]}]}}"#,
                "$.custom.blocks[0].iteratons"
            ),
            (
                #"{"activity": "running", "custom": {"blocks": [{"steps": [{"gaol": {"time": "1 min"}}]}]}}"#,
                "$.custom.blocks[0].steps[0].gaol"
            ),
            (
                #"{"activity": "running", "custom": {"warmup": {"purpose": "work", "goal": "open"}, "blocks": [{"steps": [{"goal": "open"}]}]}}"#,
                "$.custom.warmup.purpose"
            ),
            (
                #"{"activity": "running", "pacer": {"distance": "5 km", "time": "25 min", "pace": "5 min"}}"#,
                "$.pacer.pace"
            ),
            (#"{"activity": "running", "location": "outdoors", "singleGoal": "open"}"#, "$.location"),
            (#"{"activity": "running", "name": 5, "singleGoal": "open"}"#, "$.name"),
            (
                #"{"activity": "running", "custom": {"blocks": [{"steps": [{"purpose": 7, "goal": "open"}]}]}}"#,
                "$.custom.blocks[0].steps[0].purpose"
            ),
            (
                #"{"activity": "running", "custom": {"blocks": [{"steps": [{"name": 1, "goal": "open"}]}]}}"#,
                "$.custom.blocks[0].steps[0].name"
            ),
            (
                #"{"activity": "running", "custom": {"blocks": [{"steps": [{"goal": "open", "alert": {"metric": true, "heartRateZone": 2}}]}]}}"#,
                "$.custom.blocks[0].steps[0].alert.metric"
            ),
            (#"{"activity": "running", "custom": {"blocks": {"steps": []}}}"#, "$.custom.blocks"),
            (
                #"{"activity": "running", "custom": {"blocks": [{"steps": {"goal": "open"}}]}}"#,
                "$.custom.blocks[0].steps"
            ),
        ])
    func strictKeysAndTypes(json: String, path: String) {
        #expect(problems(json).map(\.path).contains(path), "\(problems(json))")
    }
}

@Suite("Structured workouts: every count and size is bounded")
struct PlanLimitTests {
    func plan(blocks: String, name: String = "p") -> String {
        #"{"version": 1, "name": "\#(name)", "activity": "running", "custom": {"blocks": [\#(blocks)]}}"#
    }

    func problems(_ text: String) -> [PlanProblem] {
        do {
            _ = try PlanFormat.decode(Data(text.utf8))
            return []
        } catch {
            return error.problems
        }
    }

    @Test("a 200-byte plan asking for 9e18 iterations is refused at once, naming the path")
    func iterationBomb() {
        let bomb = plan(blocks: #"{"iterations": 9000000000000000000, "steps": [{"goal": {"time": "1 min"}}]}"#)
        #expect(bomb.utf8.count < 200)
        let found = problems(bomb)
        #expect(found.map(\.kind) == [.tooLarge("iterations", limit: PlanLimits.iterations)])
        #expect(found.first?.path == "$.custom.blocks[0].iterations")
        let huge = problems(plan(blocks: #"{"iterations": 1e30, "steps": [{"goal": {"time": "1 min"}}]}"#))
        #expect(huge.first?.path == "$.custom.blocks[0].iterations")
        #expect(problems(plan(blocks: #"{"iterations": 2.5, "steps": [{"goal": {"time": "1 min"}}]}"#)).count == 1)
    }

    @Test("blocks, steps per block, steps in the plan, names and file size have bounds")
    func bounds() {
        let step = #"{"goal": {"time": "1 min"}}"#
        let block = #"{"steps": [\#(step)]}"#
        #expect(
            problems(plan(blocks: Array(repeating: block, count: PlanLimits.blocks + 1).joined(separator: ","))).map(
                \.kind) == [.tooLarge("blocks", limit: PlanLimits.blocks)])
        #expect(
            problems(plan(blocks: Array(repeating: block, count: PlanLimits.blocks).joined(separator: ","))).isEmpty)
        let wide =
            #"{"steps": [\#(Array(repeating: step, count: PlanLimits.stepsPerBlock + 1).joined(separator: ","))]}"#
        #expect(
            problems(plan(blocks: wide)).map(\.kind) == [.tooLarge("steps in a block", limit: PlanLimits.stepsPerBlock)]
        )
        // 100 steps × 101 iterations: each bound holds, their product does not.
        let long =
            #"{"iterations": 101, "steps": [\#(Array(repeating: step, count: 100).joined(separator: ","))]}"#
        #expect(
            problems(plan(blocks: long)).map(\.kind) == [
                .tooLarge("steps in the plan, every iteration counted", limit: PlanLimits.plannedSteps)
            ])
        let longName = String(repeating: "x", count: PlanLimits.nameLength + 1)
        #expect(
            problems(plan(blocks: block, name: longName)).map(\.kind) == [
                .tooLarge("characters in a name", limit: PlanLimits.nameLength)
            ])
        let stepName = #"{"steps": [{"name": "\#(longName)", "goal": {"time": "1 min"}}]}"#
        #expect(problems(plan(blocks: stepName)).first?.path == "$.custom.blocks[0].steps[0].name")
        let padded = plan(blocks: block) + String(repeating: " ", count: PlanLimits.fileBytes)
        #expect(problems(padded).map(\.kind) == [.tooLarge("bytes", limit: PlanLimits.fileBytes)])
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(problems(deep).map(\.kind) == [.format("not valid JSON")])
    }

    @Test(
        "a pace is whole minutes up to 999 and seconds below 60: an absurd one is a problem named at its path, and its description never traps",
        arguments: [
            "99999999999999999999:00-5:00 /km", "1e20:00-5:00 /km", "inf:00-5:00 /km", "nan:00-5:00 /km",
            "5:nan-6:00 /km", "5:inf-6:00 /km", "1000:00-5:00 /km", "5:60-6:00 /km", "5:-1-6:00 /km", "5:1e1-6:00 /km",
            "+5:00-6:00 /km", "5:00:00-6:00 /km", ":30-6:00 /km",
        ])
    func absurdPace(_ pace: String) {
        let found = problems(plan(blocks: #"{"steps": [{"goal": {"time": "1 min"}, "alert": {"pace": "\#(pace)"}}]}"#))
        // (The step it spoils leaves its block empty: a second problem, after it.)
        #expect(found.first?.path == "$.custom.blocks[0].steps[0].alert.pace", "\(found)")
        #expect(found.first.map { !"\($0)".isEmpty } == true)
    }

    @Test(
        "a value is digits with an optional decimal part, as the schema's pattern: exponents, signs and bare points are problems",
        arguments: ["1e300 min", "1E2 s", "+5 min", "--5 min", ".5 h", "5. h", "0x10 s", "inf s", "5.5.5 min"])
    func valueSyntax(_ value: String) {
        #expect(PlanValue.parse(value) == nil, "\(value)")
        let found = problems(plan(blocks: #"{"steps": [{"goal": {"time": "\#(value)"}}]}"#))
        #expect(found.first?.path == "$.custom.blocks[0].steps[0].goal.time", "\(found)")
    }

    @Test(
        "a value beyond any workout is a problem, not an infinity that traps the executor (a 1 followed by 306 zeros is valid JSON)",
        arguments: [
            (
                #""pacer": {"distance": "1\#(String(repeating: "0", count: 306)) km", "time": "1 s"}"#,
                "$.pacer.distance"
            ),
            (#""pacer": {"distance": "5 km", "time": "0.001 s"}"#, "$.pacer"),
            (#""singleGoal": {"time": "200 h"}"#, "$.singleGoal"),
            (#""singleGoal": {"distance": "10001 km"}"#, "$.singleGoal"),
            (#""singleGoal": {"energy": "100001 kJ"}"#, "$.singleGoal"),
        ])
    func valueAboveMaximum(_ kind: String, _ path: String) {
        let found = problems(#"{"version": 1, "name": "p", "activity": "running", \#(kind)}"#)
        #expect(found.map(\.path) == [path], "\(found)")
        #expect(found.allSatisfy { if case .aboveMaximum = $0.kind { true } else { false } }, "\(found)")
    }

    @Test("alerts beyond any workout are problems; the executor's targets stay finite for plans built in code")
    func alertAboveMaximum() {
        let huge = "1" + String(repeating: "0", count: 306)
        for alert in [
            #""speedThreshold": "\#(huge) mph""#, #""speed": "1-\#(huge) mph""#, #""powerThreshold": "5001 W""#,
            #""heartRate": "120-301 bpm""#, #""cadenceThreshold": "301 rpm""#, #""paceThreshold": "0:01 /km""#,
        ] {
            let found = problems(
                plan(blocks: #"{"steps": [{"goal": {"time": "1 min"}, "alert": {\#(alert)}}]}"#).replacingOccurrences(
                    of: "running", with: "cycling"))
            #expect(found.map(\.path) == ["$.custom.blocks[0].steps[0].alert"], "\(alert): \(found)")
        }
        // The shortest pace a Double holds: a speed of 1000 / 5e-324 m/s, past what a Double holds.
        let infinite = PlanValue(.leastNonzeroMagnitude, .perKilometer)
        #expect(!infinite.base.isFinite)
        let executor = PlanExecutor(plan: WorkoutPlan(name: "p", activity: .cycling, kind: .singleGoal(.open)))
        #expect(executor.target(.speedThreshold(infinite, .current)) == nil)
        #expect(
            executor.target(.speedRange(PlanRange(from: PlanValue(1, .metersPerSecond), to: infinite), .current)) == nil
        )
    }

    @Test("names are bounded by Unicode scalars, and line separators are hidden characters")
    func namesByScalars() {
        let marks = "e" + String(repeating: "\u{301}", count: 30_000)
        #expect(marks.count == 1)
        #expect(
            problems(plan(blocks: #"{"steps": [{"goal": {"time": "1 min"}}]}"#, name: marks)).map(\.kind) == [
                .tooLarge("characters in a name", limit: PlanLimits.nameLength)
            ])
        for separator in ["\u{2028}", "\u{2029}"] {
            #expect(
                problems(plan(blocks: #"{"steps": [{"goal": {"time": "1 min"}}]}"#, name: "a\(separator)b")).map(
                    \.path) == ["$.name"])
        }
    }

    @Test("a malformed plan's problems are bounded: entries past a bound are not read, at most 100 are listed")
    func problemsBounded() {
        let zeros = Array(repeating: "0", count: 20_000).joined(separator: ",")
        let blocks = problems(plan(blocks: zeros))
        #expect(blocks.map(\.kind) == [.tooLarge("blocks", limit: PlanLimits.blocks)], "\(blocks.count)")
        let steps = problems(plan(blocks: #"{"steps": [\#(zeros)]}"#))
        // (The block left out leaves no blocks: a second problem.)
        #expect(steps.first?.kind == .tooLarge("steps in a block", limit: PlanLimits.stepsPerBlock))
        #expect(steps.count <= 2, "\(steps)")
        // 100 blocks of 100 bad steps each: 10,000 problems found, 100 listed and a count of the rest.
        let bad = Array(repeating: "0", count: 100).joined(separator: ",")
        let many = problems(plan(blocks: Array(repeating: #"{"steps": [\#(bad)]}"#, count: 100).joined(separator: ",")))
        #expect(many.count == PlanLimits.problems + 1)
        #expect(many.last.map { "\($0)" }?.contains("more problems not listed") == true)
    }

    @Test("values and ranges: a small decimal round-trips in plain digits; a minus sign inside a range is no range")
    func valueText() throws {
        let small = PlanValue(0.00001, .kilometer)
        #expect(small.description == "0.00001 km")
        #expect(PlanValue.parse(small.description) == small)
        #expect(PlanValue.parse(PlanValue(1e-9, .second).description) == PlanValue(1e-9, .second))
        #expect(PlanRange.parse("-5-10 W") == nil)
        #expect(PlanRange.parse("5-10 W") == PlanRange(from: PlanValue(5, .watt), to: PlanValue(10, .watt)))
    }

    @Test("the slowest and fastest paces a plan may name still parse, and any pace describes itself")
    func paceBounds() {
        #expect(PlanValue.parse("999:59.5 /km") == PlanValue(999 * 60 + 59.5, .perKilometer))
        #expect(PlanValue.parse("0:00 /mi") == PlanValue(0, .perMile))
        #expect(PlanValue.parse("4:30 /km")?.description == "4:30 /km")
        // Values built in code are not bounded by the parser: describing them must not trap.
        for value in [6e21, -.infinity, .nan, -1e300] {
            #expect(
                !PlanRange(from: PlanValue(value, .perKilometer), to: PlanValue(300, .perKilometer)).description.isEmpty
            )
        }
    }

    @Test("the executor never materialises the plan: a block repeated Int.max times costs nothing")
    func lazySteps() {
        let block = IntervalBlock(
            steps: [
                IntervalStep(purpose: .work, step: WorkoutStep(goal: .time(PlanValue(60, .second)))),
                IntervalStep(purpose: .recovery, step: WorkoutStep(goal: .open)),
            ], iterations: .max)
        let unbounded = WorkoutPlan(
            name: "built in code", activity: .running,
            kind: .custom(warmup: WorkoutStep(goal: .open), blocks: [block], cooldown: WorkoutStep(goal: .open)))
        let steps = PlanExecutor(plan: unbounded).steps
        #expect(steps.count == .max, "the count saturates instead of overflowing")
        #expect(steps[0].location == "warm-up")
        #expect(steps[1].location == "block 1 (1/\(Int.max)), step 1")
        let deep = steps[1 + 2 * 1_000_000_000 + 1]
        #expect(deep.location == "block 1 (1000000001/\(Int.max)), step 2")
        #expect(deep.purpose == "recovery" && deep.endsIteration && deep.iteration == 1_000_000_001)
        #expect(!PlanValidator.problems(in: unbounded).isEmpty, "and the validator refuses it")
    }
}

private let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)

@Suite("Structured workouts: execution")
struct PlanExecutorTests {
    @Test("time goals count active time only; steps, segments and laps come in order")
    func timeGoals() throws {
        let plan = WorkoutPlan(
            name: "t", activity: .running,
            kind: .custom(
                warmup: WorkoutStep(goal: .time(PlanValue(60, .second))),
                blocks: [
                    IntervalBlock(
                        steps: [
                            IntervalStep(purpose: .work, step: WorkoutStep(goal: .time(PlanValue(30, .second)))),
                            IntervalStep(purpose: .recovery, step: WorkoutStep(goal: .time(PlanValue(10, .second)))),
                        ], iterations: 2)
                ], cooldown: WorkoutStep(goal: .open)))
        var executor = PlanExecutor(plan: plan)
        #expect(executor.steps.count == 6)
        var events = executor.start(PlanProgress(activeTime: 0), at: t0)
        // 20 s of pause at 30–50 s wall time: active time lags wall time by 20 s after it.
        for wall in 1...200 {
            let active = Double(wall <= 30 ? wall : (wall <= 50 ? 30 : wall - 20))
            events += executor.update(PlanProgress(activeTime: active), at: t0.addingTimeInterval(Double(wall)))
        }
        let starts = events.compactMap {
            if case .stepStarted(let step, let date) = $0 { (step.purpose, date.timeIntervalSince(t0)) } else { nil }
        }
        #expect(starts.map(\.0) == ["warmup", "work", "recovery", "work", "recovery", "cooldown"])
        #expect(starts.map(\.1) == [0, 80, 110, 120, 150, 160], "warm-up ends at 60 s active = 80 s wall")
        let laps = events.compactMap {
            if case .lap(let block, let iteration, let interval) = $0 {
                (block, iteration, interval.duration)
            } else {
                nil
            }
        }
        #expect(laps.map(\.1) == [1, 2])
        #expect(laps.map(\.2) == [40, 40])
        #expect(executor.current?.purpose == "cooldown")
        let finished = executor.next(PlanProgress(activeTime: 200), at: t0.addingTimeInterval(220))
        #expect(finished.last == .completed(at: t0.addingTimeInterval(220)))
        #expect(events.filter { if case .stepEnded = $0 { true } else { false } }.count == 5)
    }

    @Test("a late tick ends every step it passed, each on time: ten 0.1 s steps end within one 1 s tick")
    func lateTickEndsEveryStepPassed() {
        let step = IntervalStep(purpose: .work, step: WorkoutStep(goal: .time(PlanValue(0.1, .second))))
        let plan = WorkoutPlan(
            name: "t", activity: .running,
            kind: .custom(
                warmup: nil, blocks: [IntervalBlock(steps: Array(repeating: step, count: 10), iterations: 3)],
                cooldown: nil))
        var executor = PlanExecutor(plan: plan)
        _ = executor.start(PlanProgress(activeTime: 0), at: t0)
        let first = executor.update(PlanProgress(activeTime: 1.05), at: t0.addingTimeInterval(1.05))
        let ends = first.compactMap { if case .stepEnded(_, let segment) = $0 { segment.end } else { nil } }
        #expect(ends.count == 10)
        for (index, end) in ends.enumerated() {
            // (A Date 800 million seconds from its reference holds about 0.1 µs.)
            #expect(abs(end.timeIntervalSince(t0) - 0.1 * Double(index + 1)) < 1e-6)
        }
        #expect(first.filter { if case .lap = $0 { true } else { false } }.count == 1)
        // A stall of a minute: the plan's other 20 steps end, and it completes at 3 s.
        let rest = executor.update(PlanProgress(activeTime: 61), at: t0.addingTimeInterval(61))
        guard case .completed(let end)? = rest.last else {
            Issue.record("not completed: \(rest.count) events")
            return
        }
        #expect(abs(end.timeIntervalSince(t0) - 3) < 1e-6)
        #expect(executor.current == nil)
    }

    @Test("distance and energy goals from totals; alerts leave and return with hysteresis, no flapping")
    func alerts() throws {
        let plan = WorkoutPlan(
            name: "t", activity: .running,
            kind: .custom(
                warmup: nil,
                blocks: [
                    IntervalBlock(steps: [
                        IntervalStep(
                            purpose: .work,
                            step: WorkoutStep(
                                goal: .distance(PlanValue(1, .kilometer)), alert: .heartRateZone(3, .current)))
                    ])
                ], cooldown: nil))
        var executor = PlanExecutor(plan: plan, zones: [.heartRate: heartRateZones])
        var events = executor.start(PlanProgress(activeTime: 0, distance: 200), at: t0)
        #expect(executor.alertTarget == 140...160.0.nextDown)
        let heartRates: [Double] = [150, 155, 161, 161.5, 162.5, 161, 159, 158.5, 157, 150, 139, 137, 141, 150]
        for (second, heartRate) in heartRates.enumerated() {
            events += executor.update(
                PlanProgress(activeTime: Double(second), distance: 200 + Double(second) * 50, heartRate: heartRate),
                at: t0.addingTimeInterval(Double(second)))
        }
        let alerts = events.compactMap { event -> String? in
            switch event {
            case .alertOutOfRange(_, let value, _, _): "out \(value)"
            case .alertBackInRange(_, let value, _, _): "in \(value)"
            default: nil
            }
        }
        #expect(
            alerts == ["out 162.5", "in 157.0", "out 137.0", "in 150.0"],
            "161–162 and 139–141 are inside the 2 bpm band")
        #expect(executor.current != nil, "650 m of 1 km so far")
        events = executor.update(
            PlanProgress(activeTime: 30, distance: 1200, heartRate: 150), at: t0.addingTimeInterval(30))
        #expect(events.last == .completed(at: t0.addingTimeInterval(30)))
    }

    @Test("a pacer is a distance goal with an average-speed alert")
    func pacer() {
        var executor = PlanExecutor(
            plan: WorkoutPlan(
                name: "5k", activity: .running,
                kind: .pacer(distance: PlanValue(5, .kilometer), time: PlanValue(25, .minute))))
        _ = executor.start(PlanProgress(activeTime: 0), at: t0)
        #expect(executor.steps.count == 1)
        #expect(executor.steps[0].step.goal == .distance(PlanValue(5, .kilometer)))
        #expect(executor.steps[0].step.alert?.metric == .average)
        #expect(abs((executor.alertTarget?.lowerBound ?? 0) - 5000.0 / 1500) < 1e-9)
    }
}
