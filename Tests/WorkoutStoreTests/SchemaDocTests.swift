import BusHarness
import Foundation
import GRDB
import Logging
import PostgresStore
import Samples
import Sensors
import Testing
import WorkoutStore
import Workouts

/// An example query of docs/schema.md: the ```sql block after `<!-- query: NAME BACKEND -->`.
private struct DocQuery {
    let name: String
    let backend: String
    let sql: String
}

private func docQueries() throws -> [DocQuery] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent("docs/schema.md"), encoding: .utf8)
    let pattern = try Regex(#"<!-- query: ([a-z0-9-]+) (postgresql|sqlite) -->\n```sql\n(.*?)```"#)
        .dotMatchesNewlines()
    return text.matches(of: pattern).map { match in
        DocQuery(
            name: String(match.output[1].substring ?? ""), backend: String(match.output[2].substring ?? ""),
            sql: String(match.output[3].substring ?? ""))
    }
}

/// Whether the rows a query printed are the expected ones: fields split at `|`, numbers compared
/// as numbers (psql prints 100 where GRDB reads 100.0).
private func same(_ rows: [String], _ expected: [[String]]) -> Bool {
    rows.count == expected.count
        && zip(rows, expected).allSatisfy { row, fields in
            let actual = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            return actual.count == fields.count
                && zip(actual, fields).allSatisfy { got, want in
                    if let a = Double(got), let b = Double(want) { return abs(a - b) < 1e-6 }
                    return got == want
                }
        }
}

/// What the seeded store holds, and what each documented query must answer on it.
private struct Seeded {
    /// The workout whose heart rate is queried.
    let workout: UUID
    /// Rows by query name, fields in order.
    let expected: [String: [[String]]]
}

/// Seeds a store through WorkoutStore: finished workouts around `now` with zones and RMSSD (some
/// mornings in the last 30 days, and an afternoon, an early, an old and an unfinished one that the
/// morning query leaves out), one with heart-rate samples. Days and hours are in `zone`, the time
/// zone the queries will run in; times are printed as `timestampFormat` in that zone.
private func seed(_ store: WorkoutStore, zone: TimeZone, now: Date, timestampFormat: String) async throws -> Seeded {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = zone
    let today = calendar.startOfDay(for: now)
    func at(daysAgo: Int, _ hour: Int, _ minute: Int) -> Date {
        let day = calendar.date(byAdding: .day, value: -daysAgo, to: today)!
        return calendar.date(bySettingHour: hour, minute: minute, second: 0, of: day)!
    }
    func format(_ date: Date, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
    let heartRateZones = try ZoneConfiguration(quantityType: .heartRate, boundaryValues: [120, 140, 160, 175])
    let powerZones = try ZoneConfiguration(quantityType: .cyclingPower, boundaryValues: [150, 200, 250, 300, 350, 400])
    func group(_ configuration: ZoneConfiguration, _ seconds: [Double]) -> ZoneGroup {
        ZoneGroup(
            configuration: configuration,
            durations: zip(configuration.zones, seconds).map { ZoneDuration(zone: $0, duration: $1) })
    }

    struct Plan {
        let start: Date
        let rmssd: Double?
        let zones: [Double]
        var finished = true
    }
    let plans = [
        Plan(start: at(daysAgo: 1, 7, 0), rmssd: 0.0421, zones: [600, 1200, 300, 60, 0]),
        Plan(start: at(daysAgo: 5, 6, 30), rmssd: 0.0385, zones: [300, 300, 300, 300, 300]),
        // The evening workout with heart-rate samples, on the same day as the one above.
        Plan(start: at(daysAgo: 5, 18, 0), rmssd: 0.030, zones: [120, 240, 360, 0, 0]),
        Plan(start: at(daysAgo: 12, 9, 59), rmssd: 0.0333, zones: [60, 0, 0, 0, 0]),
        Plan(start: at(daysAgo: 3, 14, 0), rmssd: 0.050, zones: [90, 90, 0, 0, 0]),
        Plan(start: at(daysAgo: 20, 3, 59), rmssd: 0.070, zones: [30, 30, 30, 30, 30]),
        Plan(start: at(daysAgo: 8, 7, 0), rmssd: nil, zones: [6, 6, 6, 6, 6]),
        Plan(start: at(daysAgo: 40, 7, 0), rmssd: 0.060, zones: [600, 600, 600, 600, 600]),
        Plan(start: at(daysAgo: 2, 7, 0), rmssd: nil, zones: [], finished: false),
    ]
    var ids: [UUID] = []
    for plan in plans {
        let id = UUID()
        ids.append(id)
        let configuration = WorkoutConfiguration(activityType: .cycling, location: .indoor)
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: id, configuration: configuration, profile: nil, start: plan.start, state: .running))
        guard plan.finished else { continue }
        let end = plan.start.addingTimeInterval(1800)
        // An activity's zones and power zones: the queries take the whole workout's heart-rate zones only.
        let activity = WorkoutActivity(
            id: UUID(), configuration: configuration, start: plan.start, end: end, elapsedTime: 1800, statistics: [:],
            zoneGroups: [group(heartRateZones, [9_000, 9_000, 9_000, 9_000, 9_000])])
        try await store.finish(
            Workout(
                id: id, configuration: configuration, profile: nil, start: plan.start, end: end, elapsedTime: 1800,
                events: [], activities: [activity], statistics: [:],
                zoneGroups: [group(heartRateZones, plan.zones), group(powerZones, Array(repeating: 60, count: 7))],
                heartRateVariability: HeartRateVariability(
                    rmssd: plan.rmssd, sdnn: plan.rmssd.map { $0 * 2 }, acceptedIntervals: 100, rejectedIntervals: 0),
                activeEnergy: ActiveEnergy(kilojoules: 500, source: .estimatedFromHeartRate), sources: [], metadata: [:]
            ))
    }

    // Heart rate of the evening workout, a strap's beats (another type) and another workout's heart rate.
    let workout = ids[2]
    let strap = SampleSource(adapter: "hci0", address: "C0:FF:EE:00:00:10", name: "H10")
    let start = plans[2].start
    func reading(_ type: QuantityType, _ value: Double, _ date: Date) throws -> QuantitySample {
        try QuantitySample(
            type: type, quantity: Quantity(unit: type.canonicalUnit, value: value), start: date, end: date,
            source: strap)
    }
    let beats = try (0..<10).map { try reading(.heartRate, Double(100 + $0), start.addingTimeInterval(Double($0 * 5))) }
    try await store.append(beats + [try reading(.heartbeatSeries, 0.6, start)], workout: workout)
    try await store.append([try reading(.heartRate, 150, plans[0].start)], workout: ids[0])

    // Daily minutes per zone: every finished workout of the last 30 days, by the day it started.
    var daily: [String: [Double]] = [:]
    for plan in plans where plan.finished && plan.start >= now.addingTimeInterval(-30 * 86_400) {
        let day = format(plan.start, "yyyy-MM-dd")
        let sum = daily[day] ?? Array(repeating: 0, count: 5)
        daily[day] = zip(sum, plan.zones).map { $0 + $1 }
    }
    let zonesRows = daily.keys.sorted().flatMap { day in
        daily[day]!.enumerated().map { [day, "\($0.offset + 1)", "\($0.element / 60)"] }
    }
    let mornings = [plans[3], plans[1], plans[0]].map {
        [format($0.start, "yyyy-MM-dd HH:mm"), "\((($0.rmssd ?? 0) * 10_000).rounded() / 10)"]
    }
    return Seeded(
        workout: workout,
        expected: [
            "workout-heart-rate": beats.map { [format($0.start, timestampFormat), "\($0.canonicalValue)", "H10"] },
            "daily-time-in-zones": zonesRows,
            "morning-rmssd": mornings,
        ])
}

@Suite("docs/schema.md: the example queries run and return the expected rows")
struct SchemaDocTests {
    @Test("every example is there for both backends")
    func examplesPresent() throws {
        let queries = try docQueries()
        for name in ["workout-heart-rate", "daily-time-in-zones", "morning-rmssd"] {
            #expect(queries.filter { $0.name == name }.map(\.backend).sorted() == ["postgresql", "sqlite"], "\(name)")
        }
    }

    @Test("PostgreSQL: each query through psql (PGTZ=UTC), as a reader of the docs runs it")
    func postgresql() async throws {
        let queries = try docQueries().filter { $0.backend == "postgresql" }
        #expect(queries.count == 3)
        try await withPostgres { server in
            let backend = try await PostgresStore.open(
                try PostgresStoreLocation(url: server.url()), stateDirectory: server.directory.path,
                logger: Logger(label: "test.store"))
            let seeded = try await seed(
                WorkoutStore(backend: backend), zone: TimeZone(identifier: "UTC")!, now: Date(),
                timestampFormat: "yyyy-MM-dd HH:mm:ss'+00'")
            for query in queries {
                // An id as the API prints it (lowercase): the queries take either.
                let rows = try await server.runScript(
                    query.sql, variables: ["workout": seeded.workout.uuidString.lowercased()],
                    environment: ["PGTZ": "UTC"])
                let expected = try #require(seeded.expected[query.name], "\(query.name)")
                #expect(same(rows, expected), "\(query.name): \(rows) instead of \(expected)")
            }
        }
    }

    @Test("SQLite: each query through GRDB on the store file ('localtime' is this process's time zone)")
    func sqlite() async throws {
        let queries = try docQueries().filter { $0.backend == "sqlite" }
        #expect(queries.count == 3)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("store.sqlite").path
        let seeded = try await seed(
            try WorkoutStore(path: path), zone: .current, now: Date(), timestampFormat: "yyyy-MM-dd HH:mm:ss.SSS")
        var configuration = Configuration()
        configuration.readonly = true
        let database = try DatabaseQueue(path: path, configuration: configuration)
        for query in queries {
            let arguments: StatementArguments =
                query.sql.contains(":workout") ? ["workout": seeded.workout.uuidString.lowercased()] : [:]
            let rows = try await database.read { db in
                try Row.fetchAll(db, sql: query.sql, arguments: arguments).map { row in
                    row.databaseValues.map { value -> String in
                        switch value.storage {
                        case .null: ""
                        case .int64(let number): "\(number)"
                        case .double(let number): "\(number)"
                        case .string(let text): text
                        case .blob(let data): data.base64EncodedString()
                        }
                    }.joined(separator: "|")
                }
            }
            let expected = try #require(seeded.expected[query.name], "\(query.name)")
            #expect(same(rows, expected), "\(query.name): \(rows) instead of \(expected)")
        }
    }
}
