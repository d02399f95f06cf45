public import Foundation
import GATT
public import Logging
import Metrics
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
public import Samples
public import Sensors
import Synchronization
public import WorkoutStore

/// The shared store on a PostgreSQL server (postgres-nio): workouts, samples, rollups, the plan
/// schedule and the recovery journal of every hrbridge that points at the same database.
///
/// Async like every ``StoreBackend``: a call leases a connection from postgres-nio's
/// `PostgresClient` pool (its `run()` runs in a task the store owns from ``open(_:guest:stateDirectory:connectTimeout:migrationTimeout:owner:logger:)``
/// to ``close()``) and no thread waits for the server. A lost connection (a server restart, a
/// partition) is retried twice on a new connection, then reported as ``StoreError/unreachable(_:)``,
/// which callers treat as passing (the sample streamer keeps the samples and writes them once the
/// server is back). A call the server does not answer within ``callTimeout`` (a stopped server,
/// a partition that keeps the socket open) closes its connection and fails.
public final class PostgresStore: StoreBackend {
    /// The server URL without its password.
    public let location: String
    /// The recording lock's file: `<state directory>/postgresql-<host>-<port>-<database>.lock`.
    public let lockPath: String
    /// The state directory.
    public let spillDirectory: String
    /// Whether this is a guest's view: reads work, writes throw.
    public let isGuest: Bool
    /// Who records through this store: its journal rows carry this name, and recovery takes only
    /// those (and rows from before owners were kept), so hubs sharing a database never recover
    /// each other's sessions.
    public let owner: String
    let client: PostgresClient
    private let running: Task<Void, Never>
    let logger: Logger
    /// While the server does not answer, one caller at a time tries again (at most every
    /// ``retryInterval``) and the others fail at once: during a partition callers must not all
    /// wait for connection timeouts.
    private let outage = Mutex<Outage?>(nil)
    static let retryInterval: Duration = .seconds(2)
    /// How long one call may wait for a connection and the server's answers.
    static let callTimeout: Duration = .seconds(15)
    /// How long opening may spend migrating the schema once the server answered: a large
    /// database's rewrite takes minutes, and another hrbridge migrating first holds the lock.
    public static let migrationTimeout: Duration = .seconds(3600)

    private struct Outage {
        var retryAt: ContinuousClock.Instant
        var probing = false
    }
    /// Attempts per call when the connection fails.
    static let attempts = 3
    static let writeLatency = Metrics.Timer(label: "hrbridge_store_write_seconds")
    /// The advisory lock every transaction that takes values of the sample id sequence holds
    /// shared, first (before any row lock, so that it never waits behind one): an anchored
    /// query takes it exclusively for a moment, and then no id up to the sequence's value is
    /// still in flight (``changes(type:since:limit:)``).
    static let sampleIDsLock: Int64 = 7_170_601_523
    /// How long an anchored query waits for the writes in flight: while it waits, new writes
    /// queue behind it.
    static let sampleIDsWait = "2s"

    /// This machine's host name (its first label, at most 64 characters): the default owner, as
    /// the recording lock is one per host.
    public static var defaultOwner: String {
        String((ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "hrbridge").prefix(64))
    }

    /// `$XDG_STATE_HOME/hrbridge` (or `~/.local/state/hrbridge`): where a client's lock files go.
    public static var defaultStateDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        let state =
            environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        return state + "/hrbridge"
    }

    private init(
        _ location: PostgresStoreLocation, guest: Bool, stateDirectory: String, owner: String, client: PostgresClient,
        logger: Logger
    ) {
        self.location = location.redacted
        self.isGuest = guest
        self.owner = owner
        self.logger = logger
        self.client = client
        let name = "\(location.host ?? "socket")-\(location.port)-\(location.database)".map {
            $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_"
        }
        spillDirectory = stateDirectory
        lockPath = stateDirectory + "/postgresql-" + String(name) + ".lock"
        running = Task { await client.run() }
    }

    /// Connects (trying again for up to `connectTimeout` while the server starts) and migrates the
    /// schema (for up to `migrationTimeout`); two hrbridge processes migrating at once take turns
    /// (an advisory lock). Lock files go under `stateDirectory`.
    public static func open(
        _ location: PostgresStoreLocation, guest: Bool = false,
        stateDirectory: String = PostgresStore.defaultStateDirectory, connectTimeout: Duration = .seconds(10),
        migrationTimeout: Duration = PostgresStore.migrationTimeout, owner: String = PostgresStore.defaultOwner,
        logger: Logger
    ) async throws(StoreError) -> PostgresStore {
        try? FileManager.default.createDirectory(
            atPath: stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let configuration = try clientConfiguration(location)
        let store = PostgresStore(
            location, guest: guest, stateDirectory: stateDirectory, owner: owner,
            client: PostgresClient(configuration: configuration, backgroundLogger: logger), logger: logger)
        let deadline = ContinuousClock.now + connectTimeout
        while true {
            do {
                // Reaching the server is bounded by connectTimeout; migrating is not (a large
                // database's rewrite takes minutes), only by migrationTimeout.
                try await store.probe(timeout: max(.milliseconds(500), ContinuousClock.now.duration(to: deadline)))
                try await store.migrate(timeout: migrationTimeout)
                return store
            } catch {
                if case .unreachable = error, ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(250))
                    store.outage.withLock { $0 = nil }
                    continue
                }
                await store.close()
                throw .cannotOpen(path: location.redacted, reason: "\(error)")
            }
        }
    }

    private static func clientConfiguration(_ location: PostgresStoreLocation) throws(StoreError)
        -> PostgresClient.Configuration
    {
        var configuration: PostgresClient.Configuration
        if let socket = location.socketPath {
            configuration = PostgresClient.Configuration(
                unixSocketPath: socket, username: location.username, password: location.password,
                database: location.database)
        } else {
            if location.password != nil, let refusal = location.passwordRefusal {
                throw .cannotOpen(path: location.redacted, reason: refusal)
            }
            // Full verification: the chain (to sslrootcert, or the system's CAs) and the host name.
            var verified = TLSConfiguration.makeClientConfiguration()
            verified.certificateVerification = .fullVerification
            if let root = location.rootCertificate { verified.trustRoots = .file(root) }
            let tls: PostgresClient.Configuration.TLS
            switch location.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(verified)
            case .require, .verifyFull: tls = .require(verified)
            }
            configuration = PostgresClient.Configuration(
                host: location.host ?? "localhost", port: location.port, username: location.username,
                password: location.password, database: location.database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.maximumConnections = location.poolSize
        configuration.options.minimumConnections = 0
        return configuration
    }

    /// Ends the client's pool (its connections close); later calls fail with ``StoreError/unreachable(_:)``.
    public func close() async {
        running.cancel()
        await running.value
    }

    /// One round trip: the server answers.
    private func probe(timeout: Duration) async throws(StoreError) {
        _ = try await transaction(readOnly: true, timeout: timeout) { session in try await session.execute("SELECT 1") }
    }

    private func migrate(timeout: Duration) async throws(StoreError) {
        try await transaction(readOnly: false, timeout: timeout) { session in
            // A constant key: every hrbridge migrating this database waits for the one before it.
            try await session.execute("SELECT pg_advisory_xact_lock(7170601522)")
            try await session.execute(
                "CREATE TABLE IF NOT EXISTS hrbridge_migration (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            let applied = Set(try await session.rows("SELECT name FROM hrbridge_migration").map { try $0.text(0) })
            for migration in PostgresSchema.migrations where !applied.contains(migration.name) {
                // A new database has nothing to rewrite; an existing one may take a while.
                if !applied.isEmpty, let note = PostgresSchema.notes[migration.name] {
                    self.logger.notice(
                        "store schema migrating", metadata: ["migration": "\(migration.name)", "note": "\(note)"])
                }
                for statement in migration.statements {
                    try await session.execute(PostgresQuery(unsafeSQL: statement))
                }
                try await session.execute("INSERT INTO hrbridge_migration (name) VALUES (\(migration.name))")
                self.logger.info("store schema migrated", metadata: ["migration": "\(migration.name)"])
            }
        }
    }

    /// The schema migrations applied, in order.
    public func appliedMigrations() async throws(StoreError) -> [String] {
        try await read { session in
            try await session.rows("SELECT name FROM hrbridge_migration ORDER BY applied_at, name").map {
                try $0.text(0)
            }
        }
    }

    // MARK: Transactions

    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (PostgresSession) async throws -> T) async throws(StoreError)
        -> T
    {
        guard !isGuest else { throw .notPermissibleForGuestUser }
        let started = ContinuousClock.now
        defer { Self.writeLatency.record(duration: ContinuousClock.now - started) }
        return try await transaction(readOnly: false, body)
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (PostgresSession) async throws -> T) async throws(StoreError)
        -> T
    {
        try await transaction(readOnly: true, body)
    }

    /// One transaction on a leased connection; a lost connection is retried on a new one (a
    /// retried write is safe: samples are keyed, every other write is an upsert or keyed by id).
    private func transaction<T: Sendable>(
        readOnly: Bool, timeout: Duration = PostgresStore.callTimeout,
        _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws(StoreError) -> T {
        let mayTry = outage.withLock { outage -> Bool in
            guard var current = outage else { return true }
            guard ContinuousClock.now >= current.retryAt, !current.probing else { return false }
            current.probing = true
            outage = current
            return true
        }
        guard mayTry else { throw .unreachable("\(location): not answering; tried again every 2 s") }
        do {
            let result = try await attempts(readOnly: readOnly, timeout: timeout, body)
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
    private func attempts<T: Sendable>(
        readOnly: Bool, timeout: Duration, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws(StoreError) -> T {
        var attempt = 1
        while true {
            do {
                return try await withinCallTimeout(readOnly: readOnly, timeout: timeout, body)
            } catch {
                let storeError = PostgresErrors.storeError(error, location: location)
                guard case .unreachable = storeError, !(error is CallTimedOut),
                    attempt < Self.attempts
                else { throw storeError }
                logger.debug(
                    "store call retried", metadata: ["attempt": "\(attempt)", "error": "\(storeError)"])
                try? await Task.sleep(for: .milliseconds(100 * attempt * attempt))
                attempt += 1
            }
        }
    }

    /// The server did not answer one call in time.
    struct CallTimedOut: Error, CustomStringConvertible {
        let timeout: Duration
        var description: String { "no answer within \(timeout)" }
    }

    /// Leases a connection and runs the transaction on it, racing ``callTimeout``: when the time
    /// is up first, the lease is cancelled, or the connection closed under its query (a query in
    /// flight ends only so), and the call fails at once, whether or not the cancelled call ends.
    private func withinCallTimeout<T: Sendable>(
        readOnly: Bool, timeout: Duration, _ body: @escaping @Sendable (PostgresSession) async throws -> T
    ) async throws -> T {
        let client = client
        let logger = logger
        return try await DeadlineRace.run(
            {
                try await client.withConnection { connection in
                    try await withTaskCancellationHandler {
                        let session = PostgresSession(connection: connection, logger: logger)
                        try await session.execute(readOnly ? "BEGIN READ ONLY" : "BEGIN")
                        do {
                            let result = try await body(session)
                            try await session.execute("COMMIT")
                            return result
                        } catch {
                            if !connection.isClosed { _ = try? await session.execute("ROLLBACK") }
                            throw error
                        }
                    } onCancel: {
                        let closing: EventLoopFuture<Void> = connection.close()
                        closing.whenComplete { _ in }
                    }
                }
            }, deadline: { try? await Task.sleep(for: timeout) }, expired: { CallTimedOut(timeout: timeout) })
    }

    // MARK: Sources

    func sourceID(_ source: SampleSource, _ session: PostgresSession) async throws -> Int64 {
        let row = try await session.rows(
            """
            INSERT INTO source (adapter, address, name) VALUES (\(source.adapter), \(source.address), \(source.name))
            ON CONFLICT (adapter, address) DO UPDATE SET name = coalesce(excluded.name, source.name) RETURNING id
            """)
        guard let id = try row.first?.int(0) else { throw StoreError.database("no id for source \(source.address)") }
        return id
    }

    /// Records a sensor's model and firmware.
    public func updateSource(_ source: SampleSource, model: String?, firmware: String?) async throws(StoreError) {
        try await write { session in
            let id = try await self.sourceID(source, session)
            try await session.execute(
                """
                UPDATE source SET model = coalesce(\(model), model), firmware = coalesce(\(firmware), firmware)
                WHERE id = \(id)
                """)
        }
    }

    /// A sensor's model and firmware, when known.
    public func sourceDetails(_ source: SampleSource) async throws(StoreError) -> (model: String?, firmware: String?) {
        try await read { session in
            let row = try await session.rows(
                "SELECT model, firmware FROM source WHERE adapter = \(source.adapter) AND address = \(source.address)"
            ).first
            return (try row?.optionalText(0), try row?.optionalText(1))
        }
    }

    /// Every sensor that contributed samples.
    public func sources() async throws(StoreError) -> [SampleSource] {
        try await read { session in
            try await session.rows("SELECT adapter, address, name FROM source ORDER BY id").map {
                SampleSource(adapter: try $0.text(0), address: try $0.text(1), name: try $0.optionalText(2))
            }
        }
    }

    // MARK: Samples

    /// Stores the samples not stored yet in one transaction (one statement for the samples, one
    /// for the rollups of those that were new); returns how many were new.
    @discardableResult
    public func append(_ samples: [QuantitySample], workout: UUID?) async throws(StoreError) -> Int {
        guard !samples.isEmpty else { return 0 }
        return try await append(batches: [SampleBatch(workout: workout, samples: samples)])[0]
    }

    /// Stores several workouts' samples in one transaction (a second of every session at once);
    /// returns how many of each batch were new. Batches of distinct workouts share one statement
    /// (each new row's workout says whose it was); otherwise each batch has its own.
    public func append(batches: [SampleBatch]) async throws(StoreError) -> [Int] {
        guard batches.contains(where: { !$0.samples.isEmpty }) else { return batches.map { _ in 0 } }
        let distinct = Set(batches.map(\.workout)).count == batches.count
        return try await write { session in
            try await Self.holdSampleIDs(session)
            try await Self.lockWorkouts(Set(batches.compactMap(\.workout)), session)
            var sourceIDs: [SampleSource: Int64] = [:]
            for source in Set(batches.flatMap { $0.samples.map(\.source) }) {
                sourceIDs[source] = try await self.sourceID(source, session)
            }
            var counts = batches.map { _ in 0 }
            var rollups: [PostgresHourKey: (count: Int64, sum: Double, minimum: Double, maximum: Double)] = [:]
            let groups = distinct ? [Array(batches.indices)] : batches.indices.map { [$0] }
            for group in groups {
                let inserted = try await Self.insert(group.map { batches[$0] }, sourceIDs: sourceIDs, session)
                let ordinal = Dictionary(
                    uniqueKeysWithValues: group.map { (batches[$0].workout?.uuidString ?? "", $0) })
                for row in inserted {
                    let value = try row.double(3)
                    let key = PostgresHourKey(type: try row.text(0), source: try row.int(1), hour: try row.int(2))
                    let old = rollups[key] ?? (0, 0, .infinity, -.infinity)
                    rollups[key] = (old.count + 1, old.sum + value, min(old.minimum, value), max(old.maximum, value))
                    if let index = ordinal[try row.optionalText(4) ?? ""] { counts[index] += 1 }
                }
            }
            guard !rollups.isEmpty else { return counts }
            let keys = Array(rollups.keys)
            let aggregates = keys.map { rollups[$0]! }
            try await session.execute(
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
            return counts
        }
    }

    /// Takes ``sampleIDsLock`` shared until the transaction ends: ids this transaction takes are
    /// not passed by an anchored query while it runs. A transaction left idle (its client gone
    /// in a partition) is ended by the server after 30 s instead of holding the lock for hours.
    static func holdSampleIDs(_ session: PostgresSession) async throws {
        try await session.execute(
            """
            SELECT set_config('idle_in_transaction_session_timeout', '30s', true),
            pg_advisory_xact_lock_shared(\(sampleIDsLock))
            """)
    }

    /// What the sample table's foreign keys checked per row (migration v7), once per
    /// transaction: every workout exists, and stays until the transaction ends (KEY SHARE: a
    /// ``deleteWorkout(_:)`` waits for it). A missing one refuses the write, naming it.
    private static func lockWorkouts(_ workouts: Set<UUID>, _ session: PostgresSession) async throws {
        guard !workouts.isEmpty else { return }
        let ids = workouts.map(\.uuidString)
        let found = Set(
            try await session.rows("SELECT id FROM workout WHERE id = ANY(\(ids)::text[]) FOR KEY SHARE").map {
                try $0.text(0)
            })
        if let missing = workouts.first(where: { !found.contains($0.uuidString) }) {
            throw StoreError.unknownWorkout(missing)
        }
    }

    /// One statement inserting `batches`' samples, the new rows returned as (type, source,
    /// hour, value, workout).
    private static func insert(
        _ batches: [SampleBatch], sourceIDs: [SampleSource: Int64], _ session: PostgresSession
    ) async throws -> [PostgresRandomAccessRow] {
        let total = batches.reduce(0) { $0 + $1.samples.count }
        guard total > 0 else { return [] }
        var workouts: [String] = []
        var types: [String] = []
        var values: [Double] = []
        var starts: [Double] = []
        var ends: [Double] = []
        var sources: [Int64] = []
        var contacts: [String] = []
        var rawRR: [Int64] = []
        var vias: [Int64] = []
        do {
            workouts.reserveCapacity(total)
            types.reserveCapacity(total)
            values.reserveCapacity(total)
            starts.reserveCapacity(total)
            ends.reserveCapacity(total)
            sources.reserveCapacity(total)
            contacts.reserveCapacity(total)
            rawRR.reserveCapacity(total)
            vias.reserveCapacity(total)
        }
        for batch in batches {
            let workout = batch.workout?.uuidString ?? ""
            for sample in batch.samples {
                workouts.append(workout)
                types.append(sample.type.rawValue)
                values.append(sample.canonicalValue)
                starts.append(sample.start.timeIntervalSince1970)
                ends.append(sample.end.timeIntervalSince1970)
                sources.append(sourceIDs[sample.source] ?? 0)
                // Arrays carry no NULLs here: '' and -1 stand for "none" and are turned back below.
                contacts.append(sample.metadata.sensorContact?.rawValue ?? "")
                rawRR.append(sample.metadata.rawRRInterval.map { Int64($0) } ?? -1)
                vias.append(StoreRows.viaCode(sample.metadata.via) ?? -1)
            }
        }
        return try await session.rows(
            """
            INSERT INTO sample (workout_id, type, value, start_time, end_time, source_id, contact, raw_rr, via)
            SELECT NULLIF(t.workout_id, ''), t.type, t.value, to_timestamp(t.start_time), to_timestamp(t.end_time),
            t.source_id, NULLIF(t.contact, ''), NULLIF(t.raw_rr, -1), NULLIF(t.via, -1)
            FROM unnest(\(workouts)::text[], \(types)::text[], \(values)::float8[], \(starts)::float8[],
            \(ends)::float8[], \(sources)::int8[], \(contacts)::text[], \(rawRR)::int8[], \(vias)::int8[])
            AS t(workout_id, type, value, start_time, end_time, source_id, contact, raw_rr, via)
            ON CONFLICT (type, start_time, source_id, end_time, value) DO NOTHING
            RETURNING type, source_id, floor(extract(epoch FROM start_time) / 3600)::int8, value, workout_id
            """)
    }
}

struct PostgresHourKey: Hashable {
    let type: String
    let source: Int64
    /// Hours since 1970 (Unix time / 3600, rounded down).
    let hour: Int64
}
