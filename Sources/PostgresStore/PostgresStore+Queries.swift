public import Foundation
import PostgresNIO
public import Samples
import Sensors
public import WorkoutStore
public import Workouts

extension PostgresStore {
    private static let sampleColumns = """
        s.id, s.type, s.value, s.start_time, s.end_time, s.contact, s.raw_rr, src.adapter, src.address, src.name,
        s.via
        """

    private static func sample(_ row: PostgresRandomAccessRow) throws -> QuantitySample? {
        try StoreRows.sample(
            id: try row.int(0), type: try row.text(1), value: try row.double(2), start: try row.date(3),
            end: try row.date(4), contact: try row.optionalText(5), rawRR: try row.optionalInt(6),
            via: try row.optionalInt(10),
            source: SampleSource(adapter: try row.text(7), address: try row.text(8), name: try row.optionalText(9)))
    }

    /// Samples matching the query.
    public func samples(_ query: SampleQuery) async throws(StoreError) -> [QuantitySample] {
        try await read { session in
            let order = query.ascending ? "ASC" : "DESC"
            let limit = query.limit.map { " LIMIT \(max($0, 0))" } ?? ""
            return try await session.rows(
                """
                SELECT \(unescaped: Self.sampleColumns) FROM sample s JOIN source src ON src.id = s.source_id
                WHERE s.type = \(query.type.rawValue) AND s.start_time >= to_timestamp(\(query.from.timeIntervalSince1970))
                AND s.start_time < to_timestamp(\(query.to.timeIntervalSince1970))
                AND (\(query.source?.adapter)::text IS NULL OR (src.adapter = \(query.source?.adapter)
                AND src.address = \(query.source?.address)))
                AND (\(query.workout?.uuidString)::text IS NULL OR s.workout_id = \(query.workout?.uuidString))
                ORDER BY s.start_time \(unescaped: order), s.id \(unescaped: order)\(unescaped: limit)
                """
            ).compactMap(Self.sample)
        }
    }

    /// Statistics of `type` over `[from, to)`, per source too with `separateBySource`.
    public func statistics(type: QuantityType, from: Date, to: Date, separateBySource: Bool) async throws(StoreError)
        -> Statistics
    {
        let (start, end) = (from.timeIntervalSince1970, to.timeIntervalSince1970)
        return try await read { session in
            func aggregate(source: Int64?) async throws -> Statistics {
                var statistics = Statistics(type: type)
                guard
                    let row = try await session.rows(
                        """
                        SELECT COUNT(*), MIN(value), MAX(value), AVG(value), SUM(value), MIN(start_time), MAX(end_time)
                        FROM sample WHERE type = \(type.rawValue) AND start_time >= to_timestamp(\(start))
                        AND start_time < to_timestamp(\(end))
                        AND (\(source)::int8 IS NULL OR source_id = \(source))
                        """
                    ).first
                else { return statistics }
                statistics.sampleCount = Int(try row.int(0))
                guard statistics.sampleCount > 0 else { return statistics }
                statistics.startDate = try row.optionalDate(5)
                statistics.endDate = try row.optionalDate(6)
                switch type.aggregationStyle {
                case .cumulative:
                    statistics.sum = try row.optionalDouble(4)
                case .discrete:
                    statistics.minimum = try row.optionalDouble(1)
                    statistics.maximum = try row.optionalDouble(2)
                    statistics.average = try row.optionalDouble(3)
                    let recent = try await session.rows(
                        """
                        SELECT value, start_time FROM sample WHERE type = \(type.rawValue)
                        AND start_time >= to_timestamp(\(start)) AND start_time < to_timestamp(\(end)) AND (\(source)::int8 IS NULL OR source_id = \(source))
                        ORDER BY start_time DESC, id DESC LIMIT 1
                        """
                    ).first
                    statistics.mostRecent = try recent?.double(0)
                    statistics.mostRecentDate = try recent?.date(1)
                }
                return statistics
            }
            var result = try await aggregate(source: nil)
            if separateBySource {
                let sources = try await session.rows(
                    """
                    SELECT DISTINCT src.id, src.adapter, src.address, src.name FROM sample s
                    JOIN source src ON src.id = s.source_id
                    WHERE s.type = \(type.rawValue) AND s.start_time >= to_timestamp(\(start))
                    AND s.start_time < to_timestamp(\(end))
                    """)
                for source in sources {
                    let identity = SampleSource(
                        adapter: try source.text(1), address: try source.text(2), name: try source.optionalText(3))
                    result.bySource[identity] = try await aggregate(source: try source.int(0))
                }
            }
            return result
        }
    }

    /// Fixed-interval buckets from `anchor` over `[from, to)`; hour-aligned hour, day and week
    /// buckets read the hourly rollups, the rest the samples.
    public func statisticsCollection(
        type: QuantityType, from: Date, to: Date, anchor: Date, interval: StatisticsInterval
    ) async throws(StoreError) -> [StatisticsBucket] {
        let width = interval.seconds
        let anchorSeconds = anchor.timeIntervalSince1970
        let (start, end) = (from.timeIntervalSince1970, to.timeIntervalSince1970)
        let useRollups = StoreRows.readsRollups(interval, anchor: anchor, from: from, to: to)
        return try await read { session in
            let rows: [PostgresRandomAccessRow]
            if useRollups {
                rows = try await session.rows(
                    """
                    SELECT floor((extract(epoch FROM hour)::float8 - \(anchorSeconds)) / \(width))::int8 AS bucket,
                    SUM(count)::int8, SUM(sum), MIN(minimum), MAX(maximum) FROM hourly
                    WHERE type = \(type.rawValue) AND hour >= to_timestamp(\(start)) AND hour < to_timestamp(\(end))
                    GROUP BY bucket ORDER BY bucket
                    """)
            } else {
                rows = try await session.rows(
                    """
                    SELECT floor((extract(epoch FROM start_time)::float8 - \(anchorSeconds)) / \(width))::int8 AS bucket,
                    COUNT(*), SUM(value), MIN(value), MAX(value) FROM sample
                    WHERE type = \(type.rawValue) AND start_time >= to_timestamp(\(start))
                    AND start_time < to_timestamp(\(end))
                    GROUP BY bucket ORDER BY bucket
                    """)
            }
            return try rows.map { row in
                StoreRows.bucket(
                    try row.int(0), of: interval, from: anchor, type: type, count: Int(try row.int(1)),
                    sum: try row.double(2), minimum: try row.double(3), maximum: try row.double(4))
            }
        }
    }

    /// Additions and deletions of `type` since `anchor`, at most `limit` of them together; anchors are
    /// values of the sample id sequence, shared by additions and tombstones.
    ///
    /// Ids are taken when a row is written and become visible when its transaction commits, not
    /// in their order: a write that took id 5 may commit after one that took 6. So the query
    /// reads the sequence, then waits for the transactions in flight (``sampleIDsLock``,
    /// exclusively, for a moment): every id up to that horizon is committed or will never be,
    /// and nothing past it is returned. An anchor never passes a change it did not return. When
    /// writes stay in flight past ``sampleIDsWait``, nothing is certain yet: no changes, the
    /// anchor as it was.
    public func changes(type: QuantityType, since anchor: Int64?, limit: Int) async throws(StoreError) -> SampleChanges
    {
        let start = anchor ?? 0
        let limit = max(limit, 0)
        guard limit > 0 else { return SampleChanges(added: [], deleted: [], anchor: start) }
        guard let horizon = try await sampleIDHorizon() else {
            logger.info("anchored query: writes still in flight after \(Self.sampleIDsWait), no changes returned yet")
            return SampleChanges(added: [], deleted: [], anchor: start)
        }
        return try await read { session in
            let rows = try await session.rows(
                """
                SELECT \(unescaped: Self.sampleColumns) FROM sample s JOIN source src ON src.id = s.source_id
                WHERE s.type = \(type.rawValue) AND s.id > \(start) AND s.id <= \(horizon)
                ORDER BY s.id LIMIT \(Int64(limit))
                """)
            // Every row read counts for the anchor, decoded or not.
            var added: [(id: Int64, sample: QuantitySample?)] = []
            for row in rows { added.append((id: try row.int(0), sample: try Self.sample(row))) }
            var tombstones: [(anchor: Int64, sampleID: Int64)] = []
            for row in try await session.rows(
                """
                SELECT anchor, sample_id FROM tombstone WHERE type = \(type.rawValue) AND anchor > \(start)
                AND anchor <= \(horizon) ORDER BY anchor LIMIT \(Int64(limit))
                """)
            {
                tombstones.append((anchor: try row.int(0), sampleID: try row.int(1)))
            }
            return SampleChanges.page(
                added: added, tombstones: tombstones, limit: limit, start: start, horizon: horizon)
        }
    }

    /// The sample id sequence's value once every transaction that took ids up to it has ended
    /// (each took them holding ``sampleIDsLock`` shared); nil when one is still in flight after
    /// ``sampleIDsWait``.
    private func sampleIDHorizon() async throws(StoreError) -> Int64? {
        try await read { session in
            let value =
                try await session.rows("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM sample_id_seq")
                .first?.int(0) ?? 0
            try await session.execute("SELECT set_config('lock_timeout', \(Self.sampleIDsWait), true)")
            do {
                try await session.execute("SELECT pg_advisory_xact_lock(\(Self.sampleIDsLock))")
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
                // lock_not_available: the transaction is spoilt and its COMMIT rolls it back.
                return nil
            }
            return value
        }
    }

    // MARK: Schedule

    /// Stores a schedule entry unless `limit` upcoming entries exist (the table is locked for the check).
    public func insertScheduled(_ entry: ScheduledPlan, limit: Int, now: Date) async throws(StoreError) {
        try await write { session in
            try await session.execute("LOCK TABLE schedule IN SHARE ROW EXCLUSIVE MODE")
            let upcoming =
                try await session.rows(
                    """
                    SELECT COUNT(*) FROM schedule WHERE completed_at IS NULL
                    AND date >= to_timestamp(\(now.timeIntervalSince1970))
                    """
                ).first?.int(0) ?? 0
            guard upcoming < limit else { throw StoreError.scheduleFull(limit) }
            try await session.execute(
                """
                INSERT INTO schedule (id, name, plan, date) VALUES (\(entry.id.uuidString), \(entry.name),
                \(String(decoding: entry.plan, as: UTF8.self)), to_timestamp(\(entry.date.timeIntervalSince1970)))
                """)
        }
    }

    /// Entries dated within `[from, to)`, by date.
    public func scheduledPlans(from: Date, to: Date) async throws(StoreError) -> [ScheduledPlan] {
        try await read { session in
            try await session.rows(
                """
                SELECT id, name, plan, date, completed_at, workout_id FROM schedule
                WHERE date >= to_timestamp(\(from.timeIntervalSince1970)) AND date < to_timestamp(\(to.timeIntervalSince1970))
                ORDER BY date
                """
            ).compactMap { row in
                guard let id = UUID(uuidString: try row.text(0)) else { return nil }
                return ScheduledPlan(
                    id: id, name: try row.text(1), plan: Data(try row.text(2).utf8),
                    date: try row.date(3), completedAt: try row.optionalDate(4),
                    workoutID: try row.optionalText(5).flatMap(UUID.init(uuidString:)))
            }
        }
    }

    /// Removes an entry; false when there is none with that id.
    public func deleteScheduled(_ id: UUID) async throws(StoreError) -> Bool {
        try await write { session in
            try await session.rows("DELETE FROM schedule WHERE id = \(id.uuidString) RETURNING id").isEmpty == false
        }
    }

    /// Marks an entry complete with the workout that ran it.
    public func markScheduled(_ id: UUID, completedAt date: Date, workout: UUID) async throws(StoreError) {
        try await write { session in
            try await session.execute(
                """
                UPDATE schedule SET completed_at = to_timestamp(\(date.timeIntervalSince1970)),
                workout_id = \(workout.uuidString) WHERE id = \(id.uuidString)
                """)
        }
    }
}
