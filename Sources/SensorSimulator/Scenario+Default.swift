import Foundation

extension Scenario {
    /// The built-in scenario: 18 minutes of one runner wearing two sensors, a chest strap and an
    /// arm band (a workout is one person's). The effort ramps from easy to nearly all-out, so DFA α1
    /// falls through both thresholds; the arm band loses contact, drops out, disconnects and
    /// reconnects, sends one malformed frame and drains its battery, so every fault path shows in a
    /// demo while the chest strap, the primary source, carries the workout.
    public static let defaultJSON = """
        {
          "version": 1,
          "seed": 2026,
          "straps": [
            {
              "name": "Virtual Strap A",
              "address": "C0:FF:EE:00:00:01",
              "restingHeartRate": 55,
              "maximumHeartRate": 186,
              "battery": 88,
              "age": 35, "weight": 72, "sex": "male",
              "segments": [
                {"type": "steady", "duration": "3m", "intensity": 0.3},
                {"type": "ramp", "duration": "10m", "from": 0.3, "to": 0.95},
                {"type": "steady", "duration": "2m", "intensity": 0.5},
                {"type": "steady", "duration": "3m", "intensity": 0.2}
              ]
            },
            {
              "name": "Virtual Arm Band B",
              "address": "C0:FF:EE:00:00:02",
              "restingHeartRate": 55,
              "maximumHeartRate": 186,
              "battery": 34,
              "age": 35, "weight": 72, "sex": "male",
              "segments": [
                {"type": "steady", "duration": "3m", "intensity": 0.3},
                {"type": "ramp", "duration": "10m", "from": 0.3, "to": 0.95},
                {"type": "steady", "duration": "2m", "intensity": 0.5},
                {"type": "steady", "duration": "3m", "intensity": 0.2}
              ],
              "faults": [
                {"type": "contactLost", "at": "4m", "duration": "15s"},
                {"type": "dropout", "at": "7m", "duration": "8s"},
                {"type": "disconnect", "at": "10m", "duration": "20s"},
                {"type": "malformedFrame", "at": "12m"},
                {"type": "batteryDrain", "at": "14m", "to": 9, "duration": "2m"}
              ]
            }
          ]
        }
        """

    /// The built-in scenario, parsed.
    public static var `default`: Scenario {
        // The text above is part of the source and covered by a test, so it always parses.
        try! ScenarioParser.parse(Data(defaultJSON.utf8), file: "<built-in>")
    }
}
