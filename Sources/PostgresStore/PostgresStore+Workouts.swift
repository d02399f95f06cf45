public import Foundation
import PostgresNIO
import Samples
public import WorkoutStore
public import Workouts

extension PostgresStore {
    /// Journals a session that starts collecting.
    public func beginWorkout(_ record: ActiveSessionRecord) async throws(StoreError) {
        try await write { session in
            try await session.execute(
                """
                INSERT INTO workout (id, activity_type, location, athlete, start_time, state)
                VALUES (\(record.workoutID.uuidString), \(record.configuration.activityType.rawValue),
                \(record.configuration.location.rawValue), \(record.profile?.id ?? UserProfile.anonymousID),
                to_timestamp(\(record.start.timeIntervalSince1970)), 'active')
                ON CONFLICT (id) DO NOTHING
                """)
            try await self.journal(record, session)
            if let profile = record.profile {
                try await session.execute(
                    """
                    INSERT INTO profile (id, json) VALUES (\(profile.id), \(try StoreRows.json(profile)))
                    ON CONFLICT (id) DO UPDATE SET json = excluded.json
                    """)
            }
        }
    }

    /// Updates the journal of an active session.
    public func updateJournal(_ record: ActiveSessionRecord) async throws(StoreError) {
        try await write { session in try await self.journal(record, session) }
    }

    private func journal(_ record: ActiveSessionRecord, _ session: PostgresSession) async throws {
        try await session.execute(
            """
            INSERT INTO journal (workout_id, session_state, configuration, profile, custom_zones, primary_sources, sensors,
            updated_at, owner)
            VALUES (\(record.workoutID.uuidString), \(record.state.rawValue), \(try StoreRows.json(record.configuration)),
            \(try record.profile.map(StoreRows.json)), \(try StoreRows.json(record.customZones)),
            \(try StoreRows.json(record.primarySources)), \(try StoreRows.json(record.sensors)), to_timestamp(\(Date().timeIntervalSince1970)), \(owner))
            ON CONFLICT (workout_id) DO UPDATE SET session_state = excluded.session_state,
            configuration = excluded.configuration, profile = excluded.profile, custom_zones = excluded.custom_zones,
            primary_sources = excluded.primary_sources, sensors = excluded.sensors, updated_at = excluded.updated_at
            """)
    }

    /// Every session of this owner (``owner``) that was active when its process stopped.
    public func activeSessions() async throws(StoreError) -> [ActiveSessionRecord] {
        try await read { session in
            try await session.rows(
                """
                SELECT j.workout_id, j.configuration, j.profile, w.start_time, j.session_state, j.custom_zones,
                j.primary_sources, j.sensors FROM journal j JOIN workout w ON w.id = j.workout_id
                WHERE j.owner IS NULL OR j.owner = \(self.owner) ORDER BY w.start_time
                """
            ).compactMap { row in
                StoreRows.journal(
                    workoutID: try row.text(0), configuration: try row.text(1), profile: try row.optionalText(2),
                    start: try row.date(3), state: try row.text(4), customZones: try row.text(5),
                    primarySources: try row.text(6), sensors: try row.text(7))
            }
        }
    }

    /// Journal rows that cannot be read back, one line each.
    public func unreadableJournalRows() async throws(StoreError) -> [String] {
        try await read { session in
            try await session.rows(
                """
                SELECT j.workout_id, j.configuration, w.start_time, j.session_state
                FROM journal j LEFT JOIN workout w ON w.id = j.workout_id WHERE j.owner IS NULL OR j.owner = \(self.owner)
                """
            ).compactMap { row in
                StoreRows.journalProblem(
                    workoutID: try row.optionalText(0), configuration: try row.optionalText(1),
                    start: try row.optionalDate(2), state: try row.optionalText(3))
            }
        }
    }

    /// Stores an event of an active workout. Writing it again adds nothing (a
    /// write retried after its reply was lost): an event is its kind, interval and metadata.
    public func append(event: WorkoutEvent, workout: UUID) async throws(StoreError) {
        try await write { session in
            let metadata = try StoreRows.json(event.metadata)
            try await session.execute(
                """
                INSERT INTO event (workout_id, kind, start_time, end_time, metadata)
                SELECT \(workout.uuidString), \(event.kind.rawValue),
                to_timestamp(\(event.dateInterval.start.timeIntervalSince1970)),
                to_timestamp(\(event.dateInterval.end.timeIntervalSince1970)), \(metadata)
                WHERE NOT EXISTS (SELECT 1 FROM event WHERE workout_id = \(workout.uuidString)
                AND kind = \(event.kind.rawValue)
                AND start_time = to_timestamp(\(event.dateInterval.start.timeIntervalSince1970))
                AND end_time = to_timestamp(\(event.dateInterval.end.timeIntervalSince1970))
                AND metadata = \(metadata))
                """)
        }
    }

    /// Stores DFA α1 windows of an active workout.
    public func upsert(alpha1Windows: [HRVWindow], workout: UUID) async throws(StoreError) {
        try await write { session in
            for window in alpha1Windows {
                try await session.execute(
                    """
                    INSERT INTO alpha1_window (workout_id, window_end, json)
                    VALUES (\(workout.uuidString), \(window.end), \(try StoreRows.json(window)))
                    ON CONFLICT (workout_id, window_end) DO UPDATE SET json = EXCLUDED.json
                    """)
            }
        }
    }

    /// The DFA α1 windows stored for an active workout, in time order.
    public func alpha1Windows(of workout: UUID) async throws(StoreError) -> [HRVWindow] {
        try await read { session in
            try await session.rows(
                "SELECT json FROM alpha1_window WHERE workout_id = \(workout.uuidString) ORDER BY window_end"
            ).compactMap { row in StoreRows.decode(HRVWindow.self, try row.text(0)) }
        }
    }

    /// Stores an activity (begun or ended) of an active workout.
    public func upsert(activity: WorkoutActivity, workout: UUID) async throws(StoreError) {
        try await write { session in try await self.upsert(activity, workout: workout, session) }
    }

    private func upsert(_ activity: WorkoutActivity, workout: UUID, _ session: PostgresSession) async throws {
        try await session.execute(
            """
            INSERT INTO activity (id, workout_id, activity_type, location, start_time, end_time)
            VALUES (\(activity.id.uuidString), \(workout.uuidString), \(activity.configuration.activityType.rawValue),
            \(activity.configuration.location.rawValue), to_timestamp(\(activity.start.timeIntervalSince1970)),
            to_timestamp(\(activity.end?.timeIntervalSince1970)::float8))
            ON CONFLICT (id) DO UPDATE SET activity_type = excluded.activity_type, location = excluded.location,
            start_time = excluded.start_time, end_time = excluded.end_time
            """)
    }

    /// The events of a workout, in date order.
    public func events(of workout: UUID) async throws(StoreError) -> [WorkoutEvent] {
        try await read { session in
            try await session.rows(
                """
                SELECT kind, start_time, end_time, metadata FROM event WHERE workout_id = \(workout.uuidString)
                ORDER BY start_time, id
                """
            ).compactMap { row in
                StoreRows.event(
                    kind: try row.text(0), start: try row.date(1), end: try row.date(2),
                    metadata: try row.optionalText(3))
            }
        }
    }

    /// The activities of a workout, in order.
    public func activityIntervals(of workout: UUID) async throws(StoreError) -> [(WorkoutConfiguration, Date, Date?)] {
        try await read { session in
            try await session.rows(
                """
                SELECT activity_type, location, start_time, end_time FROM activity
                WHERE workout_id = \(workout.uuidString) ORDER BY start_time
                """
            ).compactMap { row in
                guard let type = WorkoutActivityType(rawValue: try row.text(0)),
                    let location = WorkoutLocation(rawValue: try row.text(1))
                else { return nil }
                return (
                    WorkoutConfiguration(activityType: type, location: location),
                    try row.date(2),
                    try row.optionalDate(3)
                )
            }
        }
    }

    /// Stores the finished workout and closes its journal.
    public func finish(_ workout: Workout) async throws(StoreError) {
        try await write { session in
            let changed = try await session.execute(
                """
                UPDATE workout SET end_time = to_timestamp(\(workout.end.timeIntervalSince1970)),
                elapsed_time = \(workout.elapsedTime), state = 'finished', summary = \(try StoreRows.json(workout)),
                metadata = \(try StoreRows.json(workout.metadata)) WHERE id = \(workout.id.uuidString)
                """)
            guard changed > 0 else { throw StoreError.unknownWorkout(workout.id) }
            // A retried finish replaces the zones it wrote.
            try await session.execute("DELETE FROM zone_group WHERE workout_id = \(workout.id.uuidString)")
            for activity in workout.activities {
                try await self.upsert(activity, workout: workout.id, session)
                for group in activity.zoneGroups {
                    try await self.insert(group, workout: workout.id, activity: activity.id, session)
                }
            }
            for group in workout.zoneGroups {
                try await self.insert(group, workout: workout.id, activity: nil, session)
            }
            try await session.execute("DELETE FROM journal WHERE workout_id = \(workout.id.uuidString)")
            try await session.execute("DELETE FROM alpha1_window WHERE workout_id = \(workout.id.uuidString)")
        }
    }

    private func insert(_ group: ZoneGroup, workout: UUID, activity: UUID?, _ session: PostgresSession) async throws {
        try await session.execute(
            """
            INSERT INTO zone_group (workout_id, activity_id, quantity_type, boundaries, durations)
            VALUES (\(workout.uuidString), \(activity?.uuidString), \(group.configuration.quantityType.rawValue),
            \(try StoreRows.json(group.configuration.boundaries)), \(try StoreRows.json(group.durations.map(\.duration))))
            """)
    }

    /// Throws a workout away with its samples; tombstones keep anchored queries right and the
    /// touched hourly rollups are recomputed from what is left.
    public func deleteWorkout(_ id: UUID) async throws(StoreError) {
        try await write { session in
            // Its tombstones take sample ids: held as a sample write holds them, before any row lock.
            try await Self.holdSampleIDs(session)
            // Then the workout's row: a sample write holding it (KEY SHARE) finishes before
            // its samples are read, and none starts until this transaction ends.
            let locked = try await session.rows("SELECT id FROM workout WHERE id = \(id.uuidString) FOR UPDATE")
            guard !locked.isEmpty else { throw StoreError.unknownWorkout(id) }
            let hours = try await session.rows(
                """
                SELECT DISTINCT type, source_id, floor(extract(epoch FROM start_time) / 3600)::int8 FROM sample
                WHERE workout_id = \(id.uuidString)
                """)
            // No foreign key cascades to the samples (v7): they go here, each leaving a tombstone
            // in one statement, not a round trip per sample (an hour with RR intervals is over 10,000).
            try await session.execute(
                """
                WITH gone AS (DELETE FROM sample WHERE workout_id = \(id.uuidString) RETURNING id, type)
                INSERT INTO tombstone (anchor, sample_id, type)
                SELECT nextval(pg_get_serial_sequence('sample', 'id')), id, type FROM (SELECT id, type FROM gone ORDER BY id) AS ordered
                """)
            try await session.execute("DELETE FROM workout WHERE id = \(id.uuidString)")
            for hour in hours {
                let (type, source, index) = (try hour.text(0), try hour.int(1), try hour.int(2))
                try await session.execute(
                    """
                    DELETE FROM hourly WHERE type = \(type) AND source_id = \(source)
                    AND hour = to_timestamp(\(index) * 3600)
                    """)
                try await session.execute(
                    """
                    INSERT INTO hourly (type, source_id, hour, count, sum, minimum, maximum)
                    SELECT type, source_id, to_timestamp(\(index) * 3600), COUNT(*), SUM(value), MIN(value), MAX(value)
                    FROM sample WHERE type = \(type) AND source_id = \(source)
                    AND start_time >= to_timestamp(\(index) * 3600) AND start_time < to_timestamp((\(index) + 1) * 3600)
                    GROUP BY type, source_id
                    """)
            }
        }
    }

    /// The workouts the query selects, newest first.
    public func workouts(_ query: WorkoutQuery) async throws(StoreError) -> [StoredWorkout] {
        let limit = query.limit.map { Int64(max(0, $0)) }
        return try await read { session in
            try await session.rows(
                """
                SELECT \(unescaped: Self.workoutColumns) FROM workout
                WHERE start_time >= to_timestamp(\(query.from.timeIntervalSince1970))
                AND start_time < to_timestamp(\(query.to.timeIntervalSince1970))
                AND (\(query.activityType?.rawValue)::text IS NULL OR activity_type = \(query.activityType?.rawValue))
                AND (\(query.athlete)::text IS NULL OR athlete = \(query.athlete))
                ORDER BY start_time DESC, id LIMIT \(limit)
                """
            ).compactMap(Self.workout)
        }
    }

    /// One workout.
    public func workout(_ id: UUID) async throws(StoreError) -> StoredWorkout {
        let workout = try await read { session in
            try await session.rows("SELECT \(unescaped: Self.workoutColumns) FROM workout WHERE id = \(id.uuidString)")
                .first.flatMap(Self.workout)
        }
        guard let workout else { throw .unknownWorkout(id) }
        return workout
    }

    private static let workoutColumns =
        "id, activity_type, location, athlete, start_time, end_time, elapsed_time, state, summary"

    private static func workout(_ row: PostgresRandomAccessRow) throws -> StoredWorkout? {
        StoreRows.workout(
            id: try row.text(0), activityType: try row.text(1), location: try row.text(2), athlete: try row.text(3),
            start: try row.date(4), end: try row.optionalDate(5), elapsedTime: try row.optionalDouble(6),
            state: try row.text(7), summary: try row.optionalText(8))
    }
}
