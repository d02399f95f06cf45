import Foundation
import GRDB
import Samples
import Sensors
import Testing
import Workouts

@testable import WorkoutStore

private let sourceA = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "A")
private let sourceB = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:02", name: "B")
private let origin = Date(timeIntervalSinceReferenceDate: 800_006_400)  // hour-aligned

private func temporaryStorePath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)/store.sqlite").path
}

private func sample(_ type: QuantityType, _ value: Double, _ seconds: Double, _ source: SampleSource) -> QuantitySample
{
    try! QuantitySample(
        type: type, quantity: Quantity(unit: type.canonicalUnit, value: value),
        start: origin.addingTimeInterval(seconds),
        end: origin.addingTimeInterval(seconds + (type.aggregationStyle == .cumulative ? 10 : 0)), source: source)
}

@Suite("Workout store (SQLite through GRDB)")
struct StoreTests {
    static let migrations = [
        "v1", "v2-hourly-rollups", "v3-plan-schedule", "v4-sample-key", "v5-unix-time", "v6-alpha1-windows",
        "v7-sample-via", "v8-waveforms", "v9-no-source-index", "v10-journal-sensors",
    ]

    @Test("samples keep two indexes, and a source's statistics read the key, not the table")
    func sampleIndexes() async throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try #require(try WorkoutStore(path: path).sqlite)
        let (indexes, plan) = try await store.read { db in
            let indexes = try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sample' AND sql IS NOT NULL")
            let plan = try Row.fetchAll(
                db,
                sql: """
                    EXPLAIN QUERY PLAN SELECT COUNT(*), MIN(value), MAX(value) FROM sample
                    WHERE type = ? AND start >= ? AND start < ? AND sourceId = ?
                    """, arguments: ["heartRate", 0, 1, 1]
            ).map { $0["detail"] as String }
            return (indexes.sorted(), plan)
        }
        #expect(indexes == ["sample_key", "sample_workout"])
        #expect(
            plan.contains { $0.contains("USING INDEX sample_key") || $0.contains("USING COVERING INDEX sample_key") })
    }

    @Test(
        "closed while still held (a task not yet ended as the process exits): the file alone holds every write, the -wal is empty or gone, and later calls fail"
    )
    func closeCheckpoints() async throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try WorkoutStore(path: path)
        #expect(try await store.append([sample(.heartRate, 120, 0, sourceA)], workout: nil) == 1)
        await store.close()
        // Gone when the writer closed last, empty when a reader did.
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int
        #expect(walSize == nil || walSize == 0)
        // What a backup of the file alone (no -wal, no -shm) reads.
        let copy = (path as NSString).deletingLastPathComponent + "/copy.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let copied = try WorkoutStore(path: copy, guest: true)
        #expect(try await copied.sources() == [sourceA])
        await #expect(throws: StoreError.self) { try await store.sources() }
        withExtendedLifetime(store) {}
    }

    @Test("a new store: WAL, mode 0600, migrated, integrity ok")
    func newStore() async throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try WorkoutStore(path: path)
        #expect(try await store.sqlite?.integrityCheck() == "ok")
        #expect(try await store.appliedMigrations() == Self.migrations)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let mode = try await DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }

    @Test("migrating from the first schema keeps samples and builds the rollups from them")
    func migrationFromV1() async throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try SQLiteSchema.migrator.migrate(queue, upTo: "v1")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO source (adapter, address) VALUES ('mock', 'X')")
            for minute in 0..<180 {
                try db.execute(
                    sql: "INSERT INTO sample (type, value, start, end, sourceId) VALUES ('heartRate', ?, ?, ?, 1)",
                    arguments: [
                        Double(100 + minute % 7), origin.timeIntervalSinceReferenceDate + Double(minute * 60),
                        origin.timeIntervalSinceReferenceDate + Double(minute * 60),
                    ])
            }
        }
        try queue.close()
        let store = try WorkoutStore(path: path)
        #expect(try await store.appliedMigrations() == Self.migrations)
        let hours = try await store.statisticsCollection(
            type: .heartRate, from: origin, to: origin.addingTimeInterval(3 * 3600), anchor: origin, interval: .hour)
        #expect(hours.map(\.count) == [60, 60, 60])
        let samples = try await store.samples(type: .heartRate)
        #expect(samples.count == 180)
        #expect(samples.first?.start == origin && samples.last?.start == origin.addingTimeInterval(179 * 60))
        // The file itself now speaks Unix time, which any SQLite client reads.
        let (first, hour) = try await DatabaseQueue(path: path).read { db in
            (
                try String.fetchOne(db, sql: "SELECT datetime(MIN(start), 'unixepoch') FROM sample"),
                try Int64.fetchOne(db, sql: "SELECT MIN(hour) FROM hourly")
            )
        }
        #expect(first == "2026-05-09 08:00:00")
        #expect(hour == Int64(origin.timeIntervalSince1970 / 3600))
    }

    @Test(
        "migrating to Unix time: every date column moves from Foundation's 2001 epoch to 1970's; the store reads the same dates, a sample sent again is still a duplicate"
    )
    func migrationToUnixTime() async throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try SQLiteSchema.migrator.migrate(queue, upTo: "v4-sample-key")
        let workout = UUID()
        let activity = UUID()
        let schedule = UUID()
        // A fraction that does not survive a careless conversion.
        let start = origin.addingTimeInterval(0.123_456_789)
        let seconds = start.timeIntervalSinceReferenceDate
        let configuration = String(
            decoding: try JSONEncoder().encode(WorkoutConfiguration(activityType: .running)), as: UTF8.self)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO source (adapter, address) VALUES ('mock', 'X')")
            try db.execute(
                sql: """
                    INSERT INTO workout (id, activityType, location, athlete, start, end, state)
                    VALUES (?, 'running', 'unknown', 'default', ?, NULL, 'active')
                    """, arguments: [workout.uuidString, seconds])
            try db.execute(
                sql:
                    "INSERT INTO activity (id, workoutId, activityType, location, start, end) VALUES (?, ?, 'running', 'unknown', ?, ?)",
                arguments: [activity.uuidString, workout.uuidString, seconds, seconds + 60])
            try db.execute(
                sql: "INSERT INTO event (workoutId, kind, start, end) VALUES (?, 'lap', ?, ?)",
                arguments: [workout.uuidString, seconds + 30, seconds + 30])
            try db.execute(
                sql: """
                    INSERT INTO journal (workoutId, sessionState, configuration, updatedAt)
                    VALUES (?, 'running', ?, ?)
                    """, arguments: [workout.uuidString, configuration, seconds])
            try db.execute(
                sql: "INSERT INTO schedule (id, name, plan, date, completedAt) VALUES (?, 'plan', '{}', ?, NULL)",
                arguments: [schedule.uuidString, seconds + 3600])
            try db.execute(
                sql: """
                    INSERT INTO sample (workoutId, type, value, start, end, sourceId) VALUES (?, 'heartRate', 120, ?, ?, 1)
                    """, arguments: [workout.uuidString, seconds, seconds])
            try db.execute(
                sql:
                    "INSERT INTO hourly (type, sourceId, hour, count, sum, minimum, maximum) VALUES ('heartRate', 1, ?, 1, 120, 120, 120)",
                arguments: [Int64((seconds / 3600).rounded(.down))])
        }
        try queue.close()
        // A guest never migrates, so it refuses the old file rather than misread its times.
        do {
            _ = try WorkoutStore(path: path, guest: true)
            Issue.record("a guest opened a store written before v5-unix-time")
        } catch {
            guard case .cannotOpen(_, let reason) = error else { throw error }
            #expect(reason.contains("older hrbridge"))
        }

        let store = try WorkoutStore(path: path)
        #expect(try await store.appliedMigrations() == Self.migrations)
        // The same dates, to well under a microsecond (a REAL addition rounds the last bit).
        try await expectMigratedDates(store, workout: workout, start: start, hour: origin, tolerance: 1e-6)
        let rows = try await DatabaseQueue(path: path).read { db in
            try [
                "SELECT datetime(start, 'unixepoch') FROM workout", "SELECT datetime(end, 'unixepoch') FROM activity",
                "SELECT datetime(start, 'unixepoch') FROM event",
                "SELECT datetime(updatedAt, 'unixepoch') FROM journal",
                "SELECT datetime(date, 'unixepoch') FROM schedule", "SELECT datetime(start, 'unixepoch') FROM sample",
                "SELECT datetime(hour * 3600, 'unixepoch') FROM hourly",
            ].map { try String.fetchOne(db, sql: $0) }
        }
        #expect(
            rows == [
                "2026-05-09 08:00:00", "2026-05-09 08:01:00", "2026-05-09 08:00:30", "2026-05-09 08:00:00",
                "2026-05-09 09:00:00", "2026-05-09 08:00:00", "2026-05-09 08:00:00",
            ])
        let stored = try await DatabaseQueue(path: path).read { db in
            try Double.fetchOne(db, sql: "SELECT start FROM sample")
        }
        #expect(stored == start.timeIntervalSince1970)
    }
}
