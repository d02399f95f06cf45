public import Foundation
import GATT
import GRDB
import Metrics
public import Samples
public import Sensors
import Synchronization
import Workouts

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded store: workouts, samples, rollups, schedule and the recovery journal in one SQLite file (GRDB).
///
/// WAL mode; the file (and its WAL and shared-memory files) is created with mode 0600. Every
/// method is async: writes run on GRDB's one writer queue, reads on its reader pool beside it, and
/// no thread of Swift concurrency's pool waits for the disk.
public final class SQLiteStore: StoreBackend {
    /// How long each write transaction takes.
    static let writeLatency = Metrics.Timer(label: "hrbridge_store_write_seconds")

    private let reader: any DatabaseReader
    private let writer: (any DatabaseWriter)?
    /// Sources found stored, with their names as stored: learnt once the transaction that found
    /// them committed, so a session's batch does not look its strap up in every write. Sources
    /// are never deleted; at ``knownSourceLimit`` the map starts again.
    private let knownSources = Mutex<[SampleSource: Int64]>([:])
    static let knownSourceLimit = 4_096
    /// The database file.
    public let path: String
    /// `<file>.lock`: every process that writes the file sees the same lock.
    public var lockPath: String { path + ".lock" }
    /// The file's directory.
    public var spillDirectory: String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }
    /// The database file, for messages.
    public var location: String { path }
    /// Whether this is a guest's view: reads work, every write throws ``StoreError/notPermissibleForGuestUser``.
    public var isGuest: Bool { writer == nil }

    /// `$XDG_DATA_HOME/hrbridge/store.sqlite` (or `~/.local/share/hrbridge/store.sqlite`).
    public static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return base + "/hrbridge/store.sqlite"
    }

    /// Opens (or creates) the store at `path` and migrates it to the current schema. A guest opens
    /// an existing store read-only and never changes the file.
    public init(path: String = SQLiteStore.defaultPath, guest: Bool = false) throws(StoreError) {
        self.path = path
        if guest {
            do {
                let queue = try Self.openReadOnly(path: path)
                // A guest never migrates: a file an older hrbridge wrote (times since 2001, say)
                // would be misread.
                guard try queue.read({ try SQLiteSchema.migrator.hasCompletedMigrations($0) }) else {
                    throw StoreError.cannotOpen(
                        path: path, reason: "written by an older hrbridge: open it once without --guest to upgrade it")
                }
                reader = queue
                writer = nil
                return
            } catch let error as StoreError {
                throw error
            } catch {
                throw .cannotOpen(path: path, reason: "\(error)")
            }
        }
        // A bare file name ("store.sqlite") lives in the current directory, which exists.
        let directory = (path as NSString).deletingLastPathComponent
        do {
            if !directory.isEmpty {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            throw .cannotOpen(path: path, reason: "cannot create \(directory): \(error.localizedDescription)")
        }
        // Files created from here on are private to the user.
        let previousMask = umask(0o077)
        defer { umask(previousMask) }
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = true
            configuration.busyMode = .timeout(10)
            // Statement journals and sorts in memory: on disk each was a file in /var/tmp
            // created and unlinked per batch.
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
            let pool = try DatabasePool(path: path, configuration: configuration)
            try SQLiteSchema.migrator.migrate(pool)
            reader = pool
            writer = pool
        } catch {
            throw .cannotOpen(path: path, reason: "\(error)")
        }
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            chmod(file, 0o600)
        }
    }

    /// Opens `path` read-only. A store in WAL mode opens so only where its `-shm` file exists or
    /// can be made; a store closed cleanly has neither `-wal` nor `-shm`, so a copy on read-only
    /// media (a mounted backup, a card) failed. With no `-wal` (nothing waits to be checkpointed)
    /// the file is opened immutable, which needs neither; with one, it cannot be read safely there.
    static func openReadOnly(path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            // SQLite opens lazily: the first read is where a missing `-shm` shows.
            try queue.read { db in _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") }
            return queue
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CANTOPEN {
            let log = path + "-wal"
            let size = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
            guard size == 0, FileManager.default.fileExists(atPath: path),
                let escaped = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
            else {
                if size > 0, !FileManager.default.fileExists(atPath: path + "-shm") {
                    throw StoreError.cannotOpen(
                        path: path,
                        reason: "it can only be read where its \(log) can be checkpointed or its -shm file made: "
                            + "open it once where it can be written, or copy it with its -wal and -shm files")
                }
                throw error
            }
            return try DatabaseQueue(path: "file:\(escaped)?immutable=1", configuration: configuration)
        }
    }

    /// Runs `PRAGMA integrity_check`; `"ok"` when the file is sound.
    public func integrityCheck() async throws(StoreError) -> String {
        try await read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "" }
    }

    /// Moves the `-wal`'s pages into the file (and empties it), then closes every connection.
    /// Without it the checkpoint waited for the pool's deinit, which a process exiting while a
    /// finished task still held the store never ran: the file alone (a copy, a backup) missed them.
    /// The empty `-wal` and the `-shm` stay (GRDB closes its read-only readers last).
    public func close() async {
        guard let pool = writer as? DatabasePool else {
            try? (reader as? DatabaseQueue)?.close()
            return
        }
        do {
            _ = try await pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        } catch {
            // A reader still open keeps a checkpoint from finishing; the close below still ends ours.
        }
        try? pool.close()
    }

    /// The schema migrations applied, in order.
    public func appliedMigrations() async throws(StoreError) -> [String] {
        try await read { db in try SQLiteSchema.migrator.appliedMigrations(db) }
    }

    /// One write transaction on GRDB's writer queue; the caller's task waits without holding a thread.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        guard let writer else { throw .notPermissibleForGuestUser }
        let started = ContinuousClock.now
        defer { Self.writeLatency.record(duration: ContinuousClock.now - started) }
        do {
            return try await writer.write(body)
        } catch {
            throw storeError(error)
        }
    }

    /// One read on one of GRDB's reader connections (reads run beside the writer).
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do {
            return try await reader.read(body)
        } catch {
            throw storeError(error)
        }
    }

    /// SQLite's and GRDB's errors as the store's: a full disk and an unreadable value have their own cases.
    private func storeError(_ error: any Error) -> StoreError {
        switch error {
        case let error as StoreError: return error
        case let error as DatabaseError where error.resultCode == .SQLITE_FULL: return .diskFull(path: path)
        case let error as DatabaseError where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB:
            return .corrupt("\(path): \(error.message ?? "\(error)")")
        case let error as RowDecodingError: return .corrupt("\(error)")
        default: return .database("\(error)")
        }
    }

    // MARK: Sources

    func sourceID(_ source: SampleSource, _ db: Database) throws -> Int64 {
        if let known = knownSources.withLock({ $0[source] }) { return known }
        let id = try storedSourceID(source, db)
        db.afterNextTransaction { [weak self] _ in
            self?.knownSources.withLock { known in
                if known.count >= Self.knownSourceLimit { known.removeAll() }
                known[source] = id
            }
        }
        return id
    }

    private func storedSourceID(_ source: SampleSource, _ db: Database) throws -> Int64 {
        // Cached statements: this runs in every batch of every session, and compiling SQL is
        // what cost the most in a recording gateway's store (Benchmarks/README.md).
        if let id = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM source WHERE adapter = ? AND address = ?"),
            arguments: [source.adapter, source.address])
        {
            if let name = source.name {
                try db.cachedStatement(sql: "UPDATE source SET name = ? WHERE id = ? AND name IS NOT ?")
                    .execute(arguments: [name, id, name])
            }
            return id
        }
        try db.cachedStatement(sql: "INSERT INTO source (adapter, address, name) VALUES (?, ?, ?)")
            .execute(arguments: [source.adapter, source.address, source.name])
        return db.lastInsertedRowID
    }

    /// Records a sensor's model and firmware (from Device Information).
    public func updateSource(_ source: SampleSource, model: String?, firmware: String?) async throws(StoreError) {
        try await write { db in
            let id = try self.sourceID(source, db)
            try db.execute(
                sql: "UPDATE source SET model = coalesce(?, model), firmware = coalesce(?, firmware) WHERE id = ?",
                arguments: [model, firmware, id])
        }
    }

    /// A sensor's model and firmware, when known.
    public func sourceDetails(_ source: SampleSource) async throws(StoreError) -> (model: String?, firmware: String?) {
        try await read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT model, firmware FROM source WHERE adapter = ? AND address = ?",
                arguments: [source.adapter, source.address])
            return (try row?.value("model"), try row?.value("firmware"))
        }
    }

    /// Every sensor that contributed samples.
    public func sources() async throws(StoreError) -> [SampleSource] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT adapter, address, name FROM source ORDER BY id").map {
                SampleSource(adapter: $0["adapter"], address: $0["address"], name: $0["name"])
            }
        }
    }

    // MARK: Samples

    /// Stores the samples not stored yet, in one transaction, attributed to `workout` when given;
    /// returns how many were new. A sample stored already (same source, type, start, end and
    /// value) is skipped and not counted twice in the rollups.
    ///
    /// Rows go in cached multi-row statements of up to ``insertChunk`` rows (`INSERT … ON CONFLICT
    /// DO NOTHING`); the rollups take the new ones (see ``insertRows(_:workouts:sourceIDs:_:inserted:)``).
    @discardableResult
    public func append(_ samples: [QuantitySample], workout: UUID?) async throws(StoreError) -> Int {
        guard !samples.isEmpty else { return 0 }
        return try await append(batches: [SampleBatch(workout: workout, samples: samples)])[0]
    }

    /// Stores several workouts' samples in one transaction (a second of every session at once):
    /// one commit instead of one per workout. Returns how many of each batch were new. Batches of
    /// distinct workouts share the same statements; otherwise each batch has its own, in order.
    public func append(batches: [SampleBatch]) async throws(StoreError) -> [Int] {
        guard batches.contains(where: { !$0.samples.isEmpty }) else { return batches.map { _ in 0 } }
        let distinct = Set(batches.map(\.workout)).count == batches.count
        return try await write { [self] db in
            var sourceIDs: [SampleSource: Int64] = [:]
            var rollups: [HourKey: HourAggregate] = [:]
            var counts = batches.map { _ in 0 }
            let groups = distinct ? [Array(batches.indices)] : batches.indices.map { [$0] }
            // Formatted once per batch: `uuidString` goes through `sprintf`.
            let workouts = batches.map { $0.workout?.uuidString }
            for group in groups {
                let rows = group.flatMap { index in batches[index].samples.map { NewRow(batch: index, sample: $0) } }
                try insertRows(rows, workouts: workouts, sourceIDs: &sourceIDs, db) {
                    batch, type, source, start, value in
                    rollups[
                        HourKey(type: type, source: source, hour: Int64((start / 3600).rounded(.down))),
                        default: HourAggregate()
                    ]
                    .add(value)
                    counts[batch] += 1
                }
            }
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO hourly (type, sourceId, hour, count, sum, minimum, maximum) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (type, hour, sourceId) DO UPDATE SET count = count + excluded.count,
                    sum = sum + excluded.sum, minimum = min(minimum, excluded.minimum), maximum = max(maximum, excluded.maximum)
                    """)
            for (key, aggregate) in rollups {
                try upsert.execute(arguments: [
                    key.type, key.source, key.hour, aggregate.count, aggregate.sum, aggregate.minimum,
                    aggregate.maximum,
                ])
            }
            return counts
        }
    }

    /// A row to insert: the batch it came in (whose workout it belongs to) and its sample.
    struct NewRow {
        let batch: Int
        let sample: QuantitySample
    }

    /// Inserts rows in cached power-of-two statements, handing each new row (its batch, type,
    /// source, start and value) to `inserted`.
    ///
    /// A statement that stored every row it was given (the steady state: a live stream's samples
    /// are new) hands them over from memory. Only one that skipped some (a retried batch, a
    /// gateway's backfill) reads its new rows back: the sample ids only grow (AUTOINCREMENT), so
    /// they are the ones past the largest id before it. Reading every row back (`RETURNING`) took a
    /// sixth of the store's CPU per sample (Benchmarks/README.md, eleventh round).
    private func insertRows(
        _ rows: [NewRow], workouts: [String?], sourceIDs: inout [SampleSource: Int64], _ db: Database,
        inserted: (_ batch: Int, _ type: String, _ source: Int64, _ start: Double, _ value: Double) -> Void
    ) throws {
        var values: [(any DatabaseValueConvertible)?] = []
        values.reserveCapacity(min(rows.count, Self.insertChunk) * 9)
        var rowSources: [Int64] = []
        rowSources.reserveCapacity(min(rows.count, Self.insertChunk))
        var largestID: Int64?
        var index = rows.startIndex
        while index < rows.endIndex {
            let count = Self.chunk(remaining: rows.endIndex - index)
            let statement = try db.cachedStatement(sql: Self.insertSQL(rows: count))
            values.removeAll(keepingCapacity: true)
            rowSources.removeAll(keepingCapacity: true)
            let chunk = rows[index..<(index + count)]
            for row in chunk {
                let sample = row.sample
                let source: Int64
                if let known = sourceIDs[sample.source] {
                    source = known
                } else {
                    source = try self.sourceID(sample.source, db)
                    sourceIDs[sample.source] = source
                }
                rowSources.append(source)
                values.append(workouts[row.batch])
                values.append(sample.type.rawValue)
                values.append(sample.canonicalValue)
                values.append(sample.start.timeIntervalSince1970)
                values.append(sample.end.timeIntervalSince1970)
                values.append(source)
                values.append(sample.metadata.sensorContact?.rawValue)
                values.append(sample.metadata.rawRRInterval.map { Int64($0) })
                values.append(StoreRows.viaCode(sample.metadata.via))
            }
            let before: Int64
            if let largestID {
                before = largestID
            } else {
                before = try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(id), 0) FROM sample")) ?? 0
            }
            try statement.execute(arguments: StatementArguments(values))
            let stored = db.changesCount
            if stored == count {
                for (row, source) in zip(chunk, rowSources) {
                    let sample = row.sample
                    inserted(
                        row.batch, sample.type.rawValue, source, sample.start.timeIntervalSince1970,
                        sample.canonicalValue)
                }
                largestID = db.lastInsertedRowID
            } else if stored > 0 {
                largestID = try readBack(after: before, chunk: chunk, workouts: workouts, db, inserted: inserted)
            } else {
                largestID = before
            }
            index += count
        }
    }

    /// The rows a statement stored past sample id `after`, handed to `inserted`; the largest id.
    private func readBack(
        after: Int64, chunk: ArraySlice<NewRow>, workouts: [String?], _ db: Database,
        inserted: (_ batch: Int, _ type: String, _ source: Int64, _ start: Double, _ value: Double) -> Void
    ) throws -> Int64 {
        // Within a statement every row is of a batch of its own workout (see `append(batches:)`).
        var batchOfWorkout: [String?: Int] = [:]
        for row in chunk { batchOfWorkout[workouts[row.batch]] = row.batch }
        var largest = after
        let cursor = try Row.fetchCursor(
            db.cachedStatement(sql: "SELECT id, type, sourceId, start, value, workoutId FROM sample WHERE id > ?"),
            arguments: [after])
        while let row = try cursor.next() {
            let id: Int64 = row[0]
            largest = max(largest, id)
            guard let batch = batchOfWorkout[row[5] as String?] else {
                throw StoreError.database("sample \(id) read back with a workout its statement did not write")
            }
            inserted(batch, row[1], row[2], row[3], row[4])
        }
        return largest
    }

    /// Rows per `INSERT` statement (9 values each, far below SQLite's 32,766 variables).
    static let insertChunk = 256

    /// Rows for the next statement: a power of two, so nine cached statements serve every batch
    /// (a gateway's batch of 11 is 8 + 2 + 1) and none is compiled per batch.
    static func chunk(remaining: Int) -> Int {
        guard remaining < insertChunk else { return insertChunk }
        var rows = 1
        while rows * 2 <= remaining { rows *= 2 }
        return rows
    }

    static func insertSQL(rows: Int) -> String {
        "INSERT INTO sample (workoutId, type, value, start, end, sourceId, contact, rawRR, via) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
            + " ON CONFLICT (type, start, sourceId, end, value) DO NOTHING"
    }
}

struct HourKey: Hashable {
    let type: String
    let source: Int64
    let hour: Int64
}

struct HourAggregate {
    var count = 0
    var sum = 0.0
    var minimum = Double.infinity
    var maximum = -Double.infinity

    mutating func add(_ value: Double) {
        count += 1
        sum += value
        minimum = min(minimum, value)
        maximum = max(maximum, value)
    }
}

extension Row {
    /// The column's value; a missing column, a NULL where a value is required or a value of
    /// another type throws (GRDB's subscript traps instead).
    func value<Value: DatabaseValueConvertible>(_ column: String, as type: Value.Type = Value.self) throws -> Value {
        try decode(type, forColumn: column)
    }
}
