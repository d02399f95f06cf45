public import Foundation
import GATT
public import Logging
import Metrics
import NIOCore
import NIOPosix
import PostgresNIO
public import Samples
public import Sensors
import Synchronization
public import WorkoutStore

/// The shared store on a PostgreSQL server (postgres-nio): workouts, samples, rollups, the plan
/// schedule and the recovery journal of every hrbridge that points at the same database.
///
/// Synchronous like every ``StoreBackend``: a call borrows a connection from a small pool and
/// waits for the server. A lost connection (a server restart, a partition) is retried twice on
/// a new connection, then reported as ``StoreError/unreachable(_:)``, which callers treat as
/// passing (the sample streamer keeps the samples and writes them once the server is back).
public final class PostgresStore: StoreBackend {
    /// The server URL without its password.
    public let location: String
    /// A local path under the user's state directory named after the database; the recording
    /// lock and spill files are named after it.
    public let path: String
    /// Whether this is a guest's view: reads work, writes throw.
    public let isGuest: Bool
    let pool: PostgresConnectionPool
    let logger: Logger
    /// While the server does not answer, one caller at a time tries again (at most every
    /// ``retryInterval``) and the others fail at once: callers on the daemon's few threads must
    /// not all wait for connection timeouts during a partition.
    private let outage = Mutex<Outage?>(nil)
    static let retryInterval: Duration = .seconds(2)

    private struct Outage {
        var retryAt: ContinuousClock.Instant
        var probing = false
    }
    /// Attempts per call when the connection fails.
    static let attempts = 3
    static let writeLatency = Metrics.Timer(label: "hrbridge_store_write_seconds")

    /// Connects (retrying for up to `connectTimeout` while the server starts) and migrates the
    /// schema; two hrbridge processes migrating at once take turns (an advisory lock).
    public init(
        _ location: PostgresStoreLocation, guest: Bool = false, connectTimeout: Duration = .seconds(10),
        logger: Logger
    ) throws(StoreError) {
        self.location = location.redacted
        self.isGuest = guest
        self.logger = logger
        let environment = ProcessInfo.processInfo.environment
        let state =
            environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        let name = "\(location.host ?? "socket")-\(location.port)-\(location.database)".map {
            $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_"
        }
        path = state + "/hrbridge/postgresql-" + String(name)
        try? FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        pool = try PostgresConnectionPool(
            location: location, group: MultiThreadedEventLoopGroup.singleton, logger: logger)
        let deadline = ContinuousClock.now + connectTimeout
        while true {
            do {
                try migrate()
                return
            } catch {
                if case .unreachable = error, ContinuousClock.now < deadline {
                    Thread.sleep(forTimeInterval: 0.25)
                    continue
                }
                pool.close()
                throw .cannotOpen(path: location.redacted, reason: "\(error)")
            }
        }
    }

    deinit {
        pool.close()
    }

    private func migrate() throws(StoreError) {
        try transaction(readOnly: false) { session in
            // A constant key: every hrbridge migrating this database waits for the one before it.
            try session.execute("SELECT pg_advisory_xact_lock(7170601522)")
            try session.execute(
                "CREATE TABLE IF NOT EXISTS hrbridge_migration (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            let applied = Set(try session.rows("SELECT name FROM hrbridge_migration").map { try $0.text(0) })
            for migration in PostgresSchema.migrations where !applied.contains(migration.name) {
                // A new database has nothing to rewrite; an existing one may take a while.
                if !applied.isEmpty, let note = PostgresSchema.notes[migration.name] {
                    logger.notice(
                        "store schema migrating", metadata: ["migration": "\(migration.name)", "note": "\(note)"])
                }
                for statement in migration.statements { try session.execute(PostgresQuery(unsafeSQL: statement)) }
                try session.execute("INSERT INTO hrbridge_migration (name) VALUES (\(migration.name))")
                logger.info("store schema migrated", metadata: ["migration": "\(migration.name)"])
            }
        }
    }

    /// The schema migrations applied, in order.
    public func appliedMigrations() throws(StoreError) -> [String] {
        try read { session in
            try session.rows("SELECT name FROM hrbridge_migration ORDER BY applied_at, name").map { try $0.text(0) }
        }
    }

    // MARK: Transactions

    @discardableResult
    func write<T>(_ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        guard !isGuest else { throw .notPermissibleForGuestUser }
        let started = ContinuousClock.now
        defer { Self.writeLatency.record(duration: ContinuousClock.now - started) }
        return try transaction(readOnly: false, body)
    }

    func read<T>(_ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        try transaction(readOnly: true, body)
    }

    /// One transaction on a borrowed connection; a lost connection is retried on a new one (a
    /// retried write is safe: samples are keyed, every other write is an upsert or keyed by id).
    private func transaction<T>(readOnly: Bool, _ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        let mayTry = outage.withLock { outage -> Bool in
            guard var current = outage else { return true }
            guard ContinuousClock.now >= current.retryAt, !current.probing else { return false }
            current.probing = true
            outage = current
            return true
        }
        guard mayTry else { throw .unreachable("\(location): not answering; tried again every 2 s") }
        do {
            let result = try attempts(readOnly: readOnly, body)
            outage.withLock { $0 = nil }
            return result
        } catch {
            if case .unreachable = error {
                outage.withLock { $0 = Outage(retryAt: ContinuousClock.now + Self.retryInterval) }
            } else {
                outage.withLock { $0 = nil }
            }
            throw error
        }
    }

    /// The transaction, again on a new connection when the one it used broke (a server restart
    /// ends every open connection, and a new one then works); a failed connect is not retried.
    private func attempts<T>(readOnly: Bool, _ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        var attempt = 1
        while true {
            do {
                return try pool.withConnection { connection in
                    let session = PostgresSession(connection: connection, logger: logger)
                    try session.execute(readOnly ? "BEGIN READ ONLY" : "BEGIN")
                    do {
                        let result = try body(session)
                        try session.execute("COMMIT")
                        return result
                    } catch {
                        if !connection.isClosed { _ = try? session.execute("ROLLBACK") }
                        throw error
                    }
                }
            } catch {
                let storeError = PostgresErrors.storeError(error, location: location)
                guard case .unreachable = storeError, !(error is PostgresConnectFailure), attempt < Self.attempts
                else { throw storeError }
                logger.debug(
                    "store call retried", metadata: ["attempt": "\(attempt)", "error": "\(storeError)"])
                Thread.sleep(forTimeInterval: 0.1 * Double(attempt * attempt))
                attempt += 1
            }
        }
    }

    // MARK: Sources

    func sourceID(_ source: SampleSource, _ session: PostgresSession) throws -> Int64 {
        let row = try session.rows(
            """
            INSERT INTO source (adapter, address, name) VALUES (\(source.adapter), \(source.address), \(source.name))
            ON CONFLICT (adapter, address) DO UPDATE SET name = coalesce(excluded.name, source.name) RETURNING id
            """)
        guard let id = try row.first?.int(0) else { throw StoreError.database("no id for source \(source.address)") }
        return id
    }

    /// Records a sensor's model and firmware.
    public func updateSource(_ source: SampleSource, model: String?, firmware: String?) throws(StoreError) {
        try write { session in
            let id = try sourceID(source, session)
            try session.execute(
                """
                UPDATE source SET model = coalesce(\(model), model), firmware = coalesce(\(firmware), firmware)
                WHERE id = \(id)
                """)
        }
    }

    /// A sensor's model and firmware, when known.
    public func sourceDetails(_ source: SampleSource) throws(StoreError) -> (model: String?, firmware: String?) {
        try read { session in
            let row = try session.rows(
                "SELECT model, firmware FROM source WHERE adapter = \(source.adapter) AND address = \(source.address)"
            ).first
            return (try row?.optionalText(0), try row?.optionalText(1))
        }
    }

    /// Every sensor that contributed samples.
    public func sources() throws(StoreError) -> [SampleSource] {
        try read { session in
            try session.rows("SELECT adapter, address, name FROM source ORDER BY id").map {
                SampleSource(adapter: try $0.text(0), address: try $0.text(1), name: try $0.optionalText(2))
            }
        }
    }

    // MARK: Samples

    /// Stores the samples not stored yet in one transaction (one statement for the samples, one
    /// for the rollups of those that were new); returns how many were new.
    @discardableResult
    public func append(_ samples: [QuantitySample], workout: UUID?) throws(StoreError) -> Int {
        guard !samples.isEmpty else { return 0 }
        return try write { session in
            var sourceIDs: [SampleSource: Int64] = [:]
            for source in Set(samples.map(\.source)) { sourceIDs[source] = try sourceID(source, session) }
            var types: [String] = []
            var values: [Double] = []
            var starts: [Double] = []
            var ends: [Double] = []
            var sources: [Int64] = []
            var contacts: [String] = []
            var rawRR: [Int64] = []
            do {
                types.reserveCapacity(samples.count)
                values.reserveCapacity(samples.count)
                starts.reserveCapacity(samples.count)
                ends.reserveCapacity(samples.count)
                sources.reserveCapacity(samples.count)
                contacts.reserveCapacity(samples.count)
                rawRR.reserveCapacity(samples.count)
            }
            for sample in samples {
                types.append(sample.type.rawValue)
                values.append(sample.canonicalValue)
                starts.append(sample.start.timeIntervalSince1970)
                ends.append(sample.end.timeIntervalSince1970)
                sources.append(sourceIDs[sample.source] ?? 0)
                // Arrays carry no NULLs here: '' and -1 stand for "none" and are turned back below.
                contacts.append(sample.metadata.sensorContact?.rawValue ?? "")
                rawRR.append(sample.metadata.rawRRInterval.map { Int64($0) } ?? -1)
            }
            let inserted = try session.rows(
                """
                INSERT INTO sample (workout_id, type, value, start_time, end_time, source_id, contact, raw_rr)
                SELECT \(workout?.uuidString), t.type, t.value, to_timestamp(t.start_time), to_timestamp(t.end_time),
                t.source_id, NULLIF(t.contact, ''), NULLIF(t.raw_rr, -1)
                FROM unnest(\(types)::text[], \(values)::float8[], \(starts)::float8[], \(ends)::float8[],
                \(sources)::int8[], \(contacts)::text[], \(rawRR)::int8[])
                AS t(type, value, start_time, end_time, source_id, contact, raw_rr)
                ON CONFLICT (type, start_time, source_id, end_time, value) DO NOTHING
                RETURNING type, source_id, floor(extract(epoch FROM start_time) / 3600)::int8, value
                """)
            var rollups: [PostgresHourKey: (count: Int64, sum: Double, minimum: Double, maximum: Double)] = [:]
            for row in inserted {
                let value = try row.double(3)
                let key = PostgresHourKey(type: try row.text(0), source: try row.int(1), hour: try row.int(2))
                let old = rollups[key] ?? (0, 0, .infinity, -.infinity)
                rollups[key] = (old.count + 1, old.sum + value, min(old.minimum, value), max(old.maximum, value))
            }
            guard !rollups.isEmpty else { return 0 }
            let keys = Array(rollups.keys)
            let aggregates = keys.map { rollups[$0]! }
            try session.execute(
                """
                INSERT INTO hourly (type, source_id, hour, count, sum, minimum, maximum)
                SELECT t.type, t.source_id, to_timestamp(t.hour * 3600), t.count, t.sum, t.minimum, t.maximum
                FROM unnest(\(keys.map(\.type))::text[], \(keys.map(\.source))::int8[],
                \(keys.map(\.hour))::int8[], \(aggregates.map(\.count))::int8[], \(aggregates.map(\.sum))::float8[],
                \(aggregates.map(\.minimum))::float8[], \(aggregates.map(\.maximum))::float8[])
                AS t(type, source_id, hour, count, sum, minimum, maximum)
                ON CONFLICT (type, hour, source_id) DO UPDATE SET count = hourly.count + excluded.count,
                sum = hourly.sum + excluded.sum, minimum = LEAST(hourly.minimum, excluded.minimum),
                maximum = GREATEST(hourly.maximum, excluded.maximum)
                """)
            return inserted.count
        }
    }
}

struct PostgresHourKey: Hashable {
    let type: String
    let source: Int64
    /// Hours since 1970 (Unix time / 3600, rounded down).
    let hour: Int64
}

extension PostgresStore {
    /// Closes the pool's connections; later calls fail with ``StoreError/unreachable(_:)``.
    public func close() { pool.close() }
}
