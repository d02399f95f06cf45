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

    @Test("broadcastOnly: false unless asked, a boolean or an error")
    func broadcastOnly() throws {
        let strap =
            #"{"name": "P", "address": "C0:FF:EE:00:00:01", "segments": [{"type": "steady", "duration": 60, "intensity": 0.5}]"#
        #expect(try parse(#"{"straps": [\#(strap)}]}"#).straps[0].broadcastOnly == false)
        #expect(try parse(#"{"straps": [\#(strap), "broadcastOnly": true}]}"#).straps[0].broadcastOnly == true)
        #expect(throws: ScenarioError.self) { try parse(#"{"straps": [\#(strap), "broadcastOnly": "yes"}]}"#) }
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

    @Test("every list and size has a bound, checked before it is read")
    func bounds() {
        func paths(_ text: String) -> [String] {
            do {
                _ = try parse(text)
                return []
            } catch {
                return error.problems.map { "\($0.path): \($0.message)" }
            }
        }
        let segment = #"{"type": "steady", "duration": 60, "intensity": 0.5}"#
        func strap(_ index: Int, name: String = "A", segments: Int = 1, faults: Int = 0) -> String {
            let address = String(format: "C0:FF:EE:00:%02X:%02X", index / 256, index % 256)
            let fault = #"{"type": "dropout", "at": 10, "duration": 5}"#
            return
                #"{"name": "\#(name)", "address": "\#(address)", "segments": [\#(Array(repeating: segment, count: segments).joined(separator: ","))], "faults": [\#(Array(repeating: fault, count: faults).joined(separator: ","))]}"#
        }
        let tooMany = (0...ScenarioParser.limits.straps).map { strap($0) }.joined(separator: ",")
        #expect(paths(#"{"straps": [\#(tooMany)]}"#) == ["$.straps: at most 1000 straps"])
        #expect(
            paths(#"{"straps": [\#(strap(0, segments: ScenarioParser.limits.segments + 1))]}"#) == [
                "$.straps[0].segments: at most 1000 segments"
            ])
        #expect(
            paths(#"{"straps": [\#(strap(0, faults: ScenarioParser.limits.faults + 1))]}"#) == [
                "$.straps[0].faults: at most 10000 faults"
            ])
        #expect(
            paths(#"{"straps": [\#(strap(0, name: String(repeating: "n", count: 249)))]}"#) == [
                "$.straps[0].name: at most 248 bytes"
            ])
        #expect(
            paths(String(repeating: " ", count: ScenarioParser.limits.fileBytes + 1)) == [
                "$: larger than 4194304 bytes"
            ])
        #expect(paths(String(repeating: "[", count: 100_000)).first?.hasPrefix("$: not valid JSON") == true)
    }
}
