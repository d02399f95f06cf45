public import Foundation
import GRDB
import Samples
import Sensors
public import Workouts

extension SQLiteStore {
    /// Journals a session that starts collecting: after a crash, ``activeSessions()`` finds it.
    public func beginWorkout(_ record: ActiveSessionRecord) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO workout (id, activityType, location, athlete, start, state)
                    VALUES (?, ?, ?, ?, ?, 'active')
                    """,
                arguments: [
                    record.workoutID.uuidString, record.configuration.activityType.rawValue,
                    record.configuration.location.rawValue, record.profile?.id ?? UserProfile.anonymousID,
                    record.start.timeIntervalSince1970,
                ])
            try self.journal(record, db)
            if let profile = record.profile {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO profile (id, json) VALUES (?, ?)",
                    arguments: [profile.id, try StoreRows.json(profile)])
            }
        }
    }

    /// Updates the journal (state, zones, primary sources) of an active session.
    public func updateJournal(_ record: ActiveSessionRecord) async throws(StoreError) {
        try await write { db in try self.journal(record, db) }
    }

    private func journal(_ record: ActiveSessionRecord, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO journal (workoutId, sessionState, configuration, profile, customZones, primarySources,
                sensors, updatedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                record.workoutID.uuidString, record.state.rawValue, try StoreRows.json(record.configuration),
                try record.profile.map(StoreRows.json), try StoreRows.json(record.customZones),
                try StoreRows.json(record.primarySources), try StoreRows.json(record.sensors),
                Date().timeIntervalSince1970,
            ])
    }

    /// Every session that was active when the process stopped (one per athlete at most).
    public func activeSessions() async throws(StoreError) -> [ActiveSessionRecord] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT j.*, w.start FROM journal j JOIN workout w ON w.id = j.workoutId ORDER BY w.start
                    """
            ).compactMap { row -> ActiveSessionRecord? in
                guard let id = UUID(uuidString: try row.value("workoutId")),
                    let configuration = StoreRows.decode(WorkoutConfiguration.self, try row.value("configuration")),
                    let state = WorkoutSessionState(rawValue: try row.value("sessionState"))
                else { return nil }
                return ActiveSessionRecord(
                    workoutID: id, configuration: configuration,
                    profile: StoreRows.decode(UserProfile.self, try row.value("profile")),
                    start: Date(timeIntervalSince1970: try row.value("start")), state: state,
                    customZones: StoreRows.decode([ZoneConfiguration].self, try row.value("customZones")) ?? [],
                    primarySources: StoreRows.decode([String: SampleSource].self, try row.value("primarySources"))
                        ?? [:],
                    sensors: StoreRows.decode([SampleSource].self, try row.value("sensors")) ?? [])
            }
        }
    }

    /// Journal rows that cannot be read back (a foreign or damaged row): one line each naming the
    /// workout and what is wrong, so a recovery can report them rather than skip them silently.
    public func unreadableJournalRows() async throws(StoreError) -> [String] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT j.*, w.start FROM journal j LEFT JOIN workout w ON w.id = j.workoutId"
            ).compactMap { row -> String? in
                let id: String? = try? row.value("workoutId")
                guard let id, UUID(uuidString: id) != nil else { return "a journal row without a valid workout id" }
                var wrong: [String] = []
                let start: Double? = try? row.value("start")
                if start == nil { wrong.append("its workout row is missing") }
                if StoreRows.decode(WorkoutConfiguration.self, try? row.value("configuration")) == nil {
                    wrong.append("configuration")
                }
                let state: String? = try? row.value("sessionState")
                if state.flatMap(WorkoutSessionState.init(rawValue:)) == nil { wrong.append("session state") }
                return wrong.isEmpty ? nil : "workout \(id): unreadable \(wrong.joined(separator: ", "))"
            }
        }
    }

    /// Stores an event of an active workout as it happens. Writing it again adds nothing (a
    /// write retried after its reply was lost): an event is its kind, interval and metadata.
    public func append(event: WorkoutEvent, workout: UUID) async throws(StoreError) {
        try await write { db in
            let (start, end) = (
                event.dateInterval.start.timeIntervalSince1970, event.dateInterval.end.timeIntervalSince1970
            )
            let metadata = try StoreRows.json(event.metadata)
            try db.execute(
                sql: """
                    INSERT INTO event (workoutId, kind, start, end, metadata) SELECT ?, ?, ?, ?, ?
                    WHERE NOT EXISTS (SELECT 1 FROM event
                    WHERE workoutId = ? AND kind = ? AND start = ? AND end = ? AND metadata = ?)
                    """,
                arguments: [
                    workout.uuidString, event.kind.rawValue, start, end, metadata,
                    workout.uuidString, event.kind.rawValue, start, end, metadata,
                ])
        }
    }

    /// Stores an activity (begun or ended) of an active workout.
    public func upsert(activity: WorkoutActivity, workout: UUID) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql:
                    "INSERT OR REPLACE INTO activity (id, workoutId, activityType, location, start, end) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [
                    activity.id.uuidString, workout.uuidString, activity.configuration.activityType.rawValue,
                    activity.configuration.location.rawValue, activity.start.timeIntervalSince1970,
                    activity.end?.timeIntervalSince1970,
                ])
        }
    }

    /// Stores DFA α1 windows of an active workout.
    public func upsert(alpha1Windows: [HRVWindow], workout: UUID) async throws(StoreError) {
        try await write { db in
            let statement = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO alpha1Window (workoutId, windowEnd, json) VALUES (?, ?, ?)")
            for window in alpha1Windows {
                try statement.execute(arguments: [workout.uuidString, window.end, try StoreRows.json(window)])
            }
        }
    }

    /// The DFA α1 windows stored for an active workout, in time order.
    public func alpha1Windows(of workout: UUID) async throws(StoreError) -> [HRVWindow] {
        try await read { db in
            try String.fetchAll(
                db, sql: "SELECT json FROM alpha1Window WHERE workoutId = ? ORDER BY windowEnd",
                arguments: [workout.uuidString]
            ).compactMap { StoreRows.decode(HRVWindow.self, $0) }
        }
    }

    /// The events stored for a workout, in date order.
    public func events(of workout: UUID) async throws(StoreError) -> [WorkoutEvent] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM event WHERE workoutId = ? ORDER BY start, id", arguments: [workout.uuidString]
            ).compactMap { row in
                guard let kind = WorkoutEvent.Kind(rawValue: try row.value("kind")) else { return nil }
                return WorkoutEvent(
                    kind: kind,
                    dateInterval: DateInterval(
                        start: Date(timeIntervalSince1970: try row.value("start")),
                        end: Date(timeIntervalSince1970: try row.value("end"))),
                    metadata: StoreRows.decode([String: String].self, try row.value("metadata")) ?? [:])
            }
        }
    }

    /// The activities stored for a workout (configuration, start, end), in order.
    public func activityIntervals(of workout: UUID) async throws(StoreError) -> [(WorkoutConfiguration, Date, Date?)] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM activity WHERE workoutId = ? ORDER BY start", arguments: [workout.uuidString]
            ).compactMap { row in
                guard let type = WorkoutActivityType(rawValue: try row.value("activityType")),
                    let location = WorkoutLocation(rawValue: try row.value("location"))
                else { return nil }
                let end: Double? = try row.value("end")
                return (
                    WorkoutConfiguration(activityType: type, location: location),
                    Date(timeIntervalSince1970: try row.value("start")),
                    end.map { Date(timeIntervalSince1970: $0) }
                )
            }
        }
    }

    /// Stores the finished workout (summary, activities, zones) and closes its journal.
    public func finish(_ workout: Workout) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE workout SET end = ?, elapsedTime = ?, state = 'finished', summary = ?, metadata = ? WHERE id = ?
                    """,
                arguments: [
                    workout.end.timeIntervalSince1970, workout.elapsedTime, try StoreRows.json(workout),
                    try StoreRows.json(workout.metadata), workout.id.uuidString,
                ])
            guard db.changesCount > 0 else { throw StoreError.unknownWorkout(workout.id) }
            for activity in workout.activities {
                try db.execute(
                    sql:
                        "INSERT OR REPLACE INTO activity (id, workoutId, activityType, location, start, end) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [
                        activity.id.uuidString, workout.id.uuidString, activity.configuration.activityType.rawValue,
                        activity.configuration.location.rawValue, activity.start.timeIntervalSince1970,
                        activity.end?.timeIntervalSince1970,
                    ])
                for group in activity.zoneGroups {
                    try self.insert(group, workout: workout.id, activity: activity.id, db)
                }
            }
            for group in workout.zoneGroups { try self.insert(group, workout: workout.id, activity: nil, db) }
            try db.execute(sql: "DELETE FROM journal WHERE workoutId = ?", arguments: [workout.id.uuidString])
            try db.execute(sql: "DELETE FROM alpha1Window WHERE workoutId = ?", arguments: [workout.id.uuidString])
        }
    }

    private func insert(_ group: ZoneGroup, workout: UUID, activity: UUID?, _ db: Database) throws {
        try db.execute(
            sql:
                "INSERT INTO zoneGroup (workoutId, activityId, quantityType, boundaries, durations) VALUES (?, ?, ?, ?, ?)",
            arguments: [
                workout.uuidString, activity?.uuidString, group.configuration.quantityType.rawValue,
                try StoreRows.json(group.configuration.boundaries), try StoreRows.json(group.durations.map(\.duration)),
            ])
    }

    /// Throws a workout away with its samples (a discarded or abandoned session).
    public func deleteWorkout(_ id: UUID) async throws(StoreError) {
        try await write { db in
            // Tombstones first, so anchored queries report the deletions: anchors from the sample
            // id sequence, taken for all of them at once, in sample order.
            let deleted =
                try Int64.fetchOne(
                    db, sql: "SELECT count(*) FROM sample WHERE workoutId = ?", arguments: [id.uuidString]) ?? 0
            if deleted > 0 {
                try db.execute(
                    sql: "UPDATE sqlite_sequence SET seq = seq + ? WHERE name = 'sample'", arguments: [deleted])
                let last = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'sample'") ?? 0
                try db.execute(
                    sql: """
                        INSERT INTO tombstone (anchor, sampleId, type)
                        SELECT ? + ROW_NUMBER() OVER (ORDER BY id), id, type FROM sample WHERE workoutId = ?
                        """, arguments: [last - deleted, id.uuidString])
            }
            let hours = try Row.fetchAll(
                db,
                sql:
                    "SELECT DISTINCT type, sourceId, CAST(start / 3600.0 AS INTEGER) AS hour FROM sample WHERE workoutId = ?",
                arguments: [id.uuidString])
            try db.execute(sql: "DELETE FROM workout WHERE id = ?", arguments: [id.uuidString])
            guard db.changesCount > 0 else { throw StoreError.unknownWorkout(id) }
            // Minima and maxima cannot be subtracted: recompute the touched hours from what is left.
            // The range around the hour lets the sample key find its rows (the CAST alone read
            // every sample of the type); the CAST keeps the hour exactly as ingest counted it.
            for hour in hours {
                let (type, source, index) =
                    (
                        try hour.value("type") as String, try hour.value("sourceId") as Int64,
                        try hour.value("hour") as Int64
                    )
                try db.execute(
                    sql: "DELETE FROM hourly WHERE type = ? AND sourceId = ? AND hour = ?",
                    arguments: [type, source, index])
                try db.execute(
                    sql: """
                        INSERT INTO hourly (type, sourceId, hour, count, sum, minimum, maximum)
                        SELECT type, sourceId, CAST(start / 3600.0 AS INTEGER), COUNT(*), SUM(value), MIN(value), MAX(value)
                        FROM sample WHERE type = ? AND start >= ? AND start < ? AND sourceId = ?
                        AND CAST(start / 3600.0 AS INTEGER) = ?
                        GROUP BY type, sourceId HAVING COUNT(*) > 0
                        """,
                    arguments: [type, Double(index - 1) * 3600, Double(index + 2) * 3600, source, index])
            }
        }
    }

    /// The workouts the query selects, newest first.
    public func workouts(_ query: WorkoutQuery) async throws(StoreError) -> [StoredWorkout] {
        try await read { db in
            var sql = "SELECT * FROM workout WHERE start >= ? AND start < ?"
            var arguments: StatementArguments = [query.from.timeIntervalSince1970, query.to.timeIntervalSince1970]
            if let activityType = query.activityType {
                sql += " AND activityType = ?"
                arguments += [activityType.rawValue]
            }
            if let athlete = query.athlete {
                sql += " AND athlete = ?"
                arguments += [athlete]
            }
            sql += " ORDER BY start DESC, id"
            if let limit = query.limit {
                sql += " LIMIT ?"
                arguments += [max(0, limit)]
            }
            return try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap(Self.workout)
        }
    }

    /// One workout.
    public func workout(_ id: UUID) async throws(StoreError) -> StoredWorkout {
        let workout = try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM workout WHERE id = ?", arguments: [id.uuidString]).flatMap(
                Self.workout)
        }
        guard let workout else { throw .unknownWorkout(id) }
        return workout
    }

    private static func workout(_ row: Row) throws -> StoredWorkout? {
        guard let id = UUID(uuidString: try row.value("id")),
            let type = WorkoutActivityType(rawValue: try row.value("activityType")),
            let location = WorkoutLocation(rawValue: try row.value("location"))
        else { return nil }
        let end: Double? = try row.value("end")
        return StoredWorkout(
            id: id, configuration: WorkoutConfiguration(activityType: type, location: location),
            athlete: try row.value("athlete"),
            start: Date(timeIntervalSince1970: try row.value("start")),
            end: end.map { Date(timeIntervalSince1970: $0) },
            elapsedTime: try row.value("elapsedTime"), isActive: try row.value("state") == "active",
            summary: StoreRows.decode(Workout.self, try row.value("summary")))
    }
}
