import Foundation
public import Samples
public import Workouts

/// Writes TrainingCenterDatabase v2: one Activity, its laps with totals, trackpoints with
/// `HeartRateBpm` (valid without position data), in the element order the schema requires.
public enum TCXExporter {
    /// The TCX document of `workout` with its `samples`.
    public static func export(_ workout: Workout, samples: [QuantitySample]) throws(ExportError) -> String {
        let model = try ExportModel(workout: workout, samples: samples)
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
            xsi:schemaLocation="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2 \
            http://www.garmin.com/xmlschemas/TrainingCenterDatabasev2.xsd">
              <Activities>
                <Activity Sport="\(sport(workout.configuration.activityType))">
                  <Id>\(time(workout.start))</Id>

            """
        let laps = model.sessions.flatMap { model.laps(of: $0) }
        // A trackpoint's distance is the activity's running total, not the lap's.
        var distance = 0.0
        for lap in laps {
            xml += "      <Lap StartTime=\"\(time(lap.start))\">\n"
            xml += "        <TotalTimeSeconds>\(number(lap.timerTime))</TotalTimeSeconds>\n"
            xml += "        <DistanceMeters>\(number(lap.distance ?? 0))</DistanceMeters>\n"
            xml += "        <Calories>\(Int((lap.kilocalories ?? 0).rounded()))</Calories>\n"
            if let average = lap.averageHeartRate.flatMap(beatsPerMinute) {
                xml += "        <AverageHeartRateBpm><Value>\(average)</Value></AverageHeartRateBpm>\n"
            }
            if let maximum = lap.maximumHeartRate.flatMap(beatsPerMinute) {
                xml += "        <MaximumHeartRateBpm><Value>\(maximum)</Value></MaximumHeartRateBpm>\n"
            }
            xml += "        <Intensity>Active</Intensity>\n"
            xml += "        <TriggerMethod>Manual</TriggerMethod>\n"
            xml += "        <Track>\n"
            let inside = model.samples.filter { $0.start >= lap.start && $0.start < lap.end }
            let seconds = Dictionary(grouping: inside) { Int64($0.start.timeIntervalSince1970.rounded(.down)) }
            for second in seconds.keys.sorted() {
                let group = seconds[second] ?? []
                let heartRate = group.last { $0.type == .heartRate }.flatMap { beatsPerMinute($0.canonicalValue) }
                let cadence = group.last { $0.type == .cyclingCadence }.flatMap {
                    revolutionsPerMinute($0.canonicalValue)
                }
                let distances = group.filter { $0.type == .distance }
                distance += distances.map(\.canonicalValue).reduce(0, +)
                guard heartRate != nil || cadence != nil || !distances.isEmpty else { continue }
                xml += "          <Trackpoint>\n"
                xml += "            <Time>\(time(Date(timeIntervalSince1970: Double(second))))</Time>\n"
                if !distances.isEmpty { xml += "            <DistanceMeters>\(number(distance))</DistanceMeters>\n" }
                if let heartRate { xml += "            <HeartRateBpm><Value>\(heartRate)</Value></HeartRateBpm>\n" }
                if let cadence { xml += "            <Cadence>\(cadence)</Cadence>\n" }
                xml += "          </Trackpoint>\n"
            }
            xml += "        </Track>\n"
            xml += "      </Lap>\n"
        }
        xml += """
                  <Creator xsi:type="Device_t">
                    <Name>hrbridge</Name>
                    <UnitId>0</UnitId>
                    <ProductID>0</ProductID>
                    <Version><VersionMajor>0</VersionMajor><VersionMinor>1</VersionMinor></Version>
                  </Creator>
                </Activity>
              </Activities>
            </TrainingCenterDatabase>

            """
        return xml
    }

    /// TCX knows three sports.
    static func sport(_ type: WorkoutActivityType) -> String {
        switch type {
        case .running, .walking: "Running"
        case .cycling: "Biking"
        default: "Other"
        }
    }

    /// A heart rate as TCX holds it (`HeartRateInBeatsPerMinute_t`: a positiveByte, 1–255); nil
    /// outside, where the element is left out: importers refuse a file that breaks the schema.
    static func beatsPerMinute(_ value: Double) -> Int? {
        let rounded = value.rounded()
        return (1...255).contains(rounded) ? Int(rounded) : nil
    }

    /// A cadence as TCX holds it (`CadenceValue_t`: 0–254), clamped; nil when not a number.
    static func revolutionsPerMinute(_ value: Double) -> Int? {
        value.isFinite ? Int(min(max(value.rounded(), 0), 254)) : nil
    }

    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false))
    }

    static func number(_ value: Double) -> String { String(format: "%.3f", value) }
}
