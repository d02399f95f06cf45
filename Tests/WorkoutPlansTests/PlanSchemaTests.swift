import Foundation
import Samples
import Testing
import Workouts

@testable import WorkoutPlans

@Suite("The plan schema file")
struct PlanSchemaTests {
    private func schema() throws -> [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/WorkoutPlans/plan.schema.json")
        let data = try Data(contentsOf: url)
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("documents version 1 and exactly the alert keys the reader accepts")
    func alertKeys() throws {
        let schema = try schema()
        let properties = try #require(schema["properties"] as? [String: Any])
        #expect((properties["version"] as? [String: Any])?["const"] as? Int == 1)
        let definitions = try #require(schema["$defs"] as? [String: Any])
        let alert = try #require((definitions["alert"] as? [String: Any])?["properties"] as? [String: Any])
        let sample: [String: String] = [
            "heartRate": "\"120-140 bpm\"", "heartRateZone": "1", "power": "\"200-250 W\"",
            "powerThreshold": "\"200 W\"", "powerZone": "1", "cadence": "\"80-90 rpm\"",
            "cadenceThreshold": "\"80 rpm\"", "speed": "\"20-25 km/h\"", "pace": "\"2:00-2:30 /km\"",
            "speedThreshold": "\"20 km/h\"", "paceThreshold": "\"2:30 /km\"",
        ]
        #expect(Set(alert.keys) == Set(sample.keys).union(["metric"]))
        let zones = PlanContext(
            zones: [
                .heartRate: try .init(quantityType: .heartRate, boundaryValues: [120, 140, 160]),
                .cyclingPower: try .init(quantityType: .cyclingPower, boundaryValues: [150, 200, 250]),
            ], hasPowerMeter: true)
        for (key, value) in sample {
            let json = """
                {"version": 1, "activity": "cycling", "custom": {"blocks": [{"steps": [
                  {"goal": {"time": "1 min"}, "alert": {"\(key)": \(value), "metric": "average"}}]}]}}
                """
            #expect(throws: Never.self, "\(key)") { try PlanFormat.decode(Data(json.utf8), context: zones) }
        }
    }
}
