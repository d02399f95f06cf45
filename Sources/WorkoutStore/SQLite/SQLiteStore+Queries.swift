public import Foundation
import GATT
import GRDB
public import Samples
import Sensors
public import Workouts

extension SQLiteStore {
    private static let sampleColumns = """
        s.id, s.type, s.value, s.start, s.end, s.contact, s.rawRR, s.via, src.adapter, src.address, src.name
        """

    /// The sample a row holds; nil for a type this version does not know (a newer writer's), an
    /// error for a value of the wrong type.
    static func sample(_ row: Row) throws -> QuantitySample? {
        guard let type = QuantityType(rawValue: try row.value("type")) else { return nil }
        let raw: Int64? = try row.value("rawRR")
        let contact: String? = try row.value("contact")
        let id: Int64 = try row.value("id")
        let via = try StoreRows.via(code: try row.value("via"), sample: id)
        do {
            return try QuantitySample(
                type: type, quantity: Quantity(unit: type.canonicalUnit, value: try row.value("value")),
                start: Date(timeIntervalSince1970: try row.value("start")),
                end: Date(timeIntervalSince1970: try row.value("end")),
                source: SampleSource(
                    adapter: try row.value("adapter"), address: try row.value("address"), name: try row.value("name")),
                metadata: SampleMetadata(
                    sensorContact: contact.flatMap(SensorContact.init(rawValue:)),
                    rawRRInterval: raw.map { UInt16(clamping: $0) }, via: via))
        } catch let error as RowDecodingError {
            throw error
        } catch {
            throw StoreError.corrupt("sample \(id): \(error)")
        }
    }

    /// Samples of a type starting in `[from, to)`, optionally from one source and one workout.
    public func samples(_ query: SampleQuery) async throws(StoreError) -> [QuantitySample] {
        let (type, from, to, source, workout, limit, ascending) = (
            query.type, query.from, query.to, query.source, query.workout, query.limit, query.ascending
        )
        return try await read { db in
            var sql = """
                SELECT \(Self.sampleColumns) FROM sample s JOIN source src ON src.id = s.sourceId
                WHERE s.type = ? AND s.start >= ? AND s.start < ?
                """
            var arguments: StatementArguments = [
                type.rawValue, from.timeIntervalSince1970, to.timeIntervalSince1970,
            ]
            if let source {
                sql += " AND src.adapter = ? AND src.address = ?"
                arguments += [source.adapter, source.address]
            }
            if let workout {
                sql += " AND s.workoutId = ?"
                arguments += [workout.uuidString]
            }
            sql += " ORDER BY s.start \(ascending ? "ASC" : "DESC"), s.id \(ascending ? "ASC" : "DESC")"
            if let limit { sql += " LIMIT \(max(limit, 0))" }
            return try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap(Self.sample)
        }
    }

    /// Statistics of `type` over `[from, to)`: discrete → min, max, average, most recent; cumulative →
    /// sum; always the span (duration) covered; with `separateBySource`, per source too.
    public func statistics(
        type: QuantityType, from: Date, to: Date, separateBySource: Bool
    ) async throws(StoreError) -> Statistics {
        try await read { db in
            let range: StatementArguments = [
                type.rawValue, from.timeIntervalSince1970, to.timeIntervalSince1970,
            ]
            func aggregate(_ filter: String, _ arguments: StatementArguments) throws -> Statistics {
                var statistics = Statistics(type: type)
                guard
                    let row = try Row.fetchOne(
                        db,
                        sql: """
                            SELECT COUNT(*) AS count, MIN(value) AS minimum, MAX(value) AS maximum, AVG(value) AS average,
                            SUM(value) AS sum, MIN(start) AS first, MAX(end) AS last FROM sample
                            WHERE type = ? AND start >= ? AND start < ? \(filter)
                            """, arguments: arguments)
                else { return statistics }
                statistics.sampleCount = try row.value("count")
                guard statistics.sampleCount > 0 else { return statistics }
                statistics.startDate = (try row.value("first") as Double?).map {
                    Date(timeIntervalSince1970: $0)
                }
                statistics.endDate = (try row.value("last") as Double?).map { Date(timeIntervalSince1970: $0) }
                switch type.aggregationStyle {
                case .cumulative:
                    statistics.sum = try row.value("sum")
                case .discrete:
                    statistics.minimum = try row.value("minimum")
                    statistics.maximum = try row.value("maximum")
                    statistics.average = try row.value("average")
                    let recent = try Row.fetchOne(
                        db,
                        sql: """
                            SELECT value, start FROM sample WHERE type = ? AND start >= ? AND start < ? \(filter)
                            ORDER BY start DESC, id DESC LIMIT 1
                            """, arguments: arguments)
                    statistics.mostRecent = try recent?.value("value")
                    statistics.mostRecentDate = (try recent?.value("start") as Double?).map {
                        Date(timeIntervalSince1970: $0)
                    }
                }
                return statistics
            }
            var result = try aggregate("", range)
            if separateBySource {
                let sources = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT src.id, src.adapter, src.address, src.name FROM sample s JOIN source src ON src.id = s.sourceId
                        WHERE s.type = ? AND s.start >= ? AND s.start < ?
                        """, arguments: range)
                for source in sources {
                    let identity = SampleSource(
                        adapter: try source.value("adapter"), address: try source.value("address"),
                        name: try source.value("name"))
                    result.bySource[identity] = try aggregate(
                        "AND sourceId = ?", range + [try source.value("id") as Int64])
                }
            }
            return result
        }
    }

    /// Fixed-interval buckets from `anchor` over `[from, to)`. Hour-aligned hour, day and week buckets
    /// read the hourly rollups; minutes and unaligned anchors read the samples.
    public func statisticsCollection(
        type: QuantityType, from: Date, to: Date, anchor: Date, interval: StatisticsInterval
    ) async throws(StoreError) -> [StatisticsBucket] {
        let width = interval.seconds
        let anchorSeconds = anchor.timeIntervalSince1970
        let useRollups = StoreRows.readsRollups(interval, anchor: anchor, from: from, to: to)
        return try await read { db in
            let rows: [Row]
            if useRollups {
                rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT CAST((hour * 3600.0 - ?) / ? AS INTEGER) AS bucket, SUM(count) AS count, SUM(sum) AS sum,
                        MIN(minimum) AS minimum, MAX(maximum) AS maximum FROM hourly
                        WHERE type = ? AND hour * 3600.0 >= ? AND hour * 3600.0 < ? GROUP BY bucket ORDER BY bucket
                        """,
                    arguments: [
                        anchorSeconds, width, type.rawValue, from.timeIntervalSince1970,
                        to.timeIntervalSince1970,
                    ])
            } else {
                rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT CAST((start - ?) / ? AS INTEGER) - ((start - ?) < 0) AS bucket, COUNT(*) AS count,
                        SUM(value) AS sum, MIN(value) AS minimum, MAX(value) AS maximum FROM sample
                        WHERE type = ? AND start >= ? AND start < ? GROUP BY bucket ORDER BY bucket
                        """,
                    arguments: [
                        anchorSeconds, width, anchorSeconds, type.rawValue, from.timeIntervalSince1970,
                        to.timeIntervalSince1970,
                    ])
            }
            return try rows.map { row in
                StoreRows.bucket(
                    try row.value("bucket"), of: interval, from: anchor, type: type, count: try row.value("count"),
                    sum: try row.value("sum"), minimum: try row.value("minimum"), maximum: try row.value("maximum"))
            }
        }
    }

    /// Additions and deletions of `type` since `anchor` (nil: from the beginning), at most `limit`
    /// of them together. One writer commits at a time, in id order, and the read is one snapshot:
    /// an anchor never passes a change it did not return.
    public func changes(type: QuantityType, since anchor: Int64?, limit: Int) async throws(StoreError)
        -> SampleChanges
    {
        let start = anchor ?? 0
        let limit = max(limit, 0)
        guard limit > 0 else { return SampleChanges(added: [], deleted: [], anchor: start) }
        return try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.sampleColumns) FROM sample s JOIN source src ON src.id = s.sourceId
                    WHERE s.type = ? AND s.id > ? ORDER BY s.id LIMIT ?
                    """, arguments: [type.rawValue, start, limit])
            // Every row read counts for the anchor, decoded or not.
            let added = try rows.map { row -> (id: Int64, sample: QuantitySample?) in
                (id: try row.value("id"), sample: try Self.sample(row))
            }
            let tombstones = try Row.fetchAll(
                db,
                sql: "SELECT anchor, sampleId FROM tombstone WHERE type = ? AND anchor > ? ORDER BY anchor LIMIT ?",
                arguments: [type.rawValue, start, limit]
            ).map { row -> (anchor: Int64, sampleID: Int64) in (anchor: row[0], sampleID: row[1]) }
            let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'sample'")
            return SampleChanges.page(
                added: added, tombstones: tombstones, limit: limit, start: start, horizon: sequence ?? start)
        }
    }
}
