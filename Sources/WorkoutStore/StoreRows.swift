package import Foundation
import GATT
package import Samples
package import Sensors
package import Workouts

/// What every backend stores as text and reads back: JSON columns, and rows turned into values
/// with the same checks, so both backends refuse a damaged row alike.
package enum StoreRows {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// A value as a JSON column.
    package static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// A JSON column as a value; nil when absent or unreadable.
    package static func decode<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
        text.flatMap { try? JSONDecoder().decode(type, from: Data($0.utf8)) }
    }

    /// A stored workout from its columns; nil for an unknown activity type or location.
    package static func workout(
        id: String, activityType: String, location: String, athlete: String, start: Date, end: Date?,
        elapsedTime: Double?, state: String, summary: String?
    ) -> StoredWorkout? {
        guard let uuid = UUID(uuidString: id), let type = WorkoutActivityType(rawValue: activityType),
            let location = WorkoutLocation(rawValue: location)
        else { return nil }
        return StoredWorkout(
            id: uuid, configuration: WorkoutConfiguration(activityType: type, location: location), athlete: athlete,
            start: start, end: end, elapsedTime: elapsedTime, isActive: state == "active",
            summary: decode(Workout.self, summary))
    }

    /// A journal row as a record; nil when its id, configuration or state cannot be read.
    package static func journal(
        workoutID: String, configuration: String, profile: String?, start: Date, state: String,
        customZones: String, primarySources: String, sensors: String
    ) -> ActiveSessionRecord? {
        guard let id = UUID(uuidString: workoutID),
            let configuration = decode(WorkoutConfiguration.self, configuration),
            let state = WorkoutSessionState(rawValue: state)
        else { return nil }
        return ActiveSessionRecord(
            workoutID: id, configuration: configuration, profile: decode(UserProfile.self, profile),
            start: start, state: state,
            customZones: decode([ZoneConfiguration].self, customZones) ?? [],
            primarySources: decode([String: SampleSource].self, primarySources) ?? [:],
            sensors: decode([SampleSource].self, sensors) ?? [])
    }

    /// What is wrong with a journal row, one line; nil when it reads.
    package static func journalProblem(
        workoutID: String?, configuration: String?, start: Date?, state: String?
    ) -> String? {
        guard let id = workoutID, UUID(uuidString: id) != nil else { return "a journal row without a valid workout id" }
        var wrong: [String] = []
        if start == nil { wrong.append("its workout row is missing") }
        if decode(WorkoutConfiguration.self, configuration) == nil { wrong.append("configuration") }
        if state.flatMap(WorkoutSessionState.init(rawValue:)) == nil { wrong.append("session state") }
        return wrong.isEmpty ? nil : "workout \(id): unreadable \(wrong.joined(separator: ", "))"
    }

    /// A sample from its columns; nil for a type this version does not know (a newer writer's).
    package static func sample(
        id: Int64, type: String, value: Double, start: Date, end: Date, contact: String?, rawRR: Int64?,
        via: Int64?, source: SampleSource
    ) throws(StoreError) -> QuantitySample? {
        guard let type = QuantityType(rawValue: type) else { return nil }
        do {
            return try QuantitySample(
                type: type, quantity: Quantity(unit: type.canonicalUnit, value: value),
                start: start, end: end, source: source,
                metadata: SampleMetadata(
                    sensorContact: contact.flatMap(SensorContact.init(rawValue:)),
                    rawRRInterval: rawRR.map { UInt16(clamping: $0) }, via: try Self.via(code: via, sample: id)))
        } catch let error as StoreError {
            throw error
        } catch {
            throw .corrupt("sample \(id): \(error)")
        }
    }

    /// How a sample's frame came, as stored: 0 a link, 1 a broadcast; nil stays unknown.
    package static func viaCode(_ via: MeasurementPath?) -> Int64? {
        switch via {
        case .connection?: 0
        case .advertisement?: 1
        case nil: nil
        }
    }

    /// The path a stored code names; any other code is a corrupt row, not a guess.
    package static func via(code: Int64?, sample id: Int64) throws(StoreError) -> MeasurementPath? {
        switch code {
        case nil: nil
        case 0?: .connection
        case 1?: .advertisement
        case let other?: throw .corrupt("sample \(id): via \(other) is not 0 (link) or 1 (broadcast)")
        }
    }

    /// An event from its columns; nil for an unknown kind.
    package static func event(kind: String, start: Date, end: Date, metadata: String?) -> WorkoutEvent? {
        guard let kind = WorkoutEvent.Kind(rawValue: kind) else { return nil }
        return WorkoutEvent(
            kind: kind,
            dateInterval: DateInterval(start: start, end: end),
            metadata: decode([String: String].self, metadata) ?? [:])
    }

    /// Whether buckets of `interval` from `anchor` over `[from, to)` can be read from the hourly
    /// rollups: hour, day or week buckets with everything hour-aligned (on UTC hours: the rollups'
    /// hours are Unix time's).
    package static func readsRollups(_ interval: StatisticsInterval, anchor: Date, from: Date, to: Date) -> Bool {
        interval != .minute
            && [anchor, from, to].allSatisfy { $0.timeIntervalSince1970.truncatingRemainder(dividingBy: 3600) == 0 }
    }

    /// A bucket from its aggregate row: `index` buckets of `interval` after `anchor`; discrete
    /// types report average, minimum and maximum, cumulative ones the sum.
    package static func bucket(
        _ index: Int64, of interval: StatisticsInterval, from anchor: Date, type: QuantityType, count: Int, sum: Double,
        minimum: Double, maximum: Double
    ) -> StatisticsBucket {
        let start = anchor.addingTimeInterval(Double(index) * interval.seconds)
        let discrete = type.aggregationStyle == .discrete
        return StatisticsBucket(
            start: start, end: start.addingTimeInterval(interval.seconds), count: count,
            average: discrete ? sum / Double(count) : nil, minimum: discrete ? minimum : nil,
            maximum: discrete ? maximum : nil, sum: discrete ? nil : sum)
    }
}
