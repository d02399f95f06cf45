import Foundation
import Testing

@testable import SensorSimulator

private func parse(_ json: String) throws(ScenarioError) -> Scenario {
    try ScenarioParser.parse(Data(json.utf8), file: "test.json")
}

@Suite("Scenario files")
struct ScenarioParserTests {
    @Test("the built-in scenario parses: two straps, 18 minutes")
    func builtIn() {
        let scenario = Scenario.default
        #expect(scenario.straps.count == 2)
        #expect(scenario.duration == 18 * 60)
        #expect(scenario.straps[1].faults.count == 5)
    }

    @Test("durations: seconds, 90s, 5m, 1h30m, 1m30s")
    func durations() {
        #expect(ScenarioParser.duration("90s") == 90)
        #expect(ScenarioParser.duration("5m") == 300)
        #expect(ScenarioParser.duration("1h30m") == 5400)
        #expect(ScenarioParser.duration("1m30s") == 90)
        #expect(ScenarioParser.duration("45") == 45)
        #expect(ScenarioParser.duration("5x") == nil)
        #expect(ScenarioParser.duration("") == nil)
        #expect(ScenarioParser.duration("m") == nil)
    }

    @Test("one error per problem, each with its JSON path")
    func problems() {
        let json = """
            {"version": 1, "straps": [
              {"name": "A", "address": "nope", "restingHeartRate": 300,
               "segments": [{"type": "steady", "duration": "5q", "intensity": 1.5},
                            {"type": "sprint"}],
               "faults": [{"type": "dropout", "at": "1m"}], "colour": "red"},
              {"name": "B", "address": "C0:FF:EE:00:00:01", "segments": []}
            ]}
            """
        do {
            _ = try parse(json)
            Issue.record("expected errors")
        } catch {
            let paths = error.problems.map(\.path)
            #expect(paths.contains("$.straps[0].address"))
            #expect(paths.contains("$.straps[0].restingHeartRate"))
            #expect(paths.contains("$.straps[0].segments[0].duration"))
            #expect(paths.contains("$.straps[0].segments[0].intensity"))
            #expect(paths.contains("$.straps[0].segments[1].type"))
            #expect(paths.contains("$.straps[0].faults[0].duration"))
            #expect(paths.contains("$.straps[0].colour"))
            #expect(paths.contains("$.straps[1].segments"))
            #expect(error.problems.count == 8)
            #expect(
                error.description.contains(
                    "test.json: $.straps[0].segments[0].intensity: must be from 0 to 1 (got 1.5)"))
        }
    }

    @Test("bad JSON, missing straps and duplicate addresses are refused")
    func structural() {
        #expect(throws: ScenarioError.self) { _ = try parse("{") }
        #expect(throws: ScenarioError.self) { _ = try parse("{\"version\": 1}") }
        do {
            _ = try parse(
                """
                {"straps": [{"name": "A", "address": "C0:FF:EE:00:00:01", "segments": [{"type": "steady", "duration": 60, "intensity": 0.5}]},
                            {"name": "B", "address": "c0:ff:ee:00:00:01", "segments": [{"type": "steady", "duration": 60, "intensity": 0.5}]}]}
                """)
            Issue.record("expected a duplicate error")
        } catch {
            #expect(error.problems.map(\.path) == ["$.straps[1].address"])
        }
    }
}
