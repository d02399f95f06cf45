import BusHarness
import Foundation
import Logging
import Samples
import Sensors
import Testing
import WorkoutStore
import Workouts

@testable import PostgresStore

@Suite("PostgreSQL store: URL, migrations, a server that restarts")
struct PostgresStoreTests {
    @Test("store URLs: every part checked, the password never shown")
    func urls() throws {
        let tcp = try PostgresStoreLocation(url: "postgresql://hub:secret@db.example:6543/gym?sslmode=require&pool=8")
        #expect(tcp.host == "db.example" && tcp.port == 6543 && tcp.database == "gym" && tcp.username == "hub")
        #expect(tcp.password == "secret" && tcp.tls == .require && tcp.poolSize == 8)
        #expect(!tcp.redacted.contains("secret"))
        let socket = try PostgresStoreLocation(url: "postgresql://hub@/gym?host=/run/postgresql&port=5433")
        #expect(socket.socketPath == "/run/postgresql/.s.PGSQL.5433" && socket.host == nil)
        for (url, reason) in [
            ("postgresql://db/gym", "no user"),
            ("postgresql://hub@db", "no database"),
            ("postgresql://hub@db/gym?sslmode=maybe", "sslmode"),
            ("postgresql://hub@db/gym?pool=500", "pool"),
            ("postgresql://hub@db/gym?host=relative", "socket directory"),
            ("postgresql://hub@db/gym?options=-c", "unknown parameter"),
            ("mysql://hub@db/gym", "expected postgresql://"),
        ] {
            #expect(throws: PostgresStoreLocation.Invalid.self, "\(url)") { try PostgresStoreLocation(url: url) }
            do {
                _ = try PostgresStoreLocation(url: url)
            } catch {
                #expect(error.reason.contains(reason), "\(url): \(error.reason)")
            }
        }
    }

    @Test(
        "TLS: verify-full unless the server is on this machine; prefer refused over the network; a password never in the clear"
    )
    func tlsDefaults() throws {
        #expect(try PostgresStoreLocation(url: "postgresql://hub@db.lan/gym").tls == .verifyFull)
        #expect(try PostgresStoreLocation(url: "postgresql://hub@10.0.0.5/gym").tls == .verifyFull)
        for local in ["localhost", "127.0.0.1", "127.1.2.3", "[::1]"] {
            #expect(try PostgresStoreLocation(url: "postgresql://hub@\(local)/gym").tls == .disable, "\(local)")
        }
        // Names that only begin like a loopback address may be anywhere.
        for remote in ["127.db.example.net", "127.0.0.1.example.net", "127.0.0.256"] {
            let location = try PostgresStoreLocation(url: "postgresql://hub@\(remote)/gym")
            #expect(location.tls == .verifyFull, "\(remote)")
            let plain = try PostgresStoreLocation(url: "postgresql://hub@\(remote)/gym?sslmode=disable")
            #expect(plain.passwordRefusal?.contains("in the clear") == true, "\(remote)")
        }
        #expect(try PostgresStoreLocation(url: "postgresql://hub@/gym?host=/run/postgresql").tls == .disable)
        let pinned = try PostgresStoreLocation(
            url: "postgresql://hub@db.lan/gym?sslmode=verify-full&sslrootcert=/etc/ca.crt")
        #expect(pinned.rootCertificate == "/etc/ca.crt" && pinned.passwordRefusal == nil)
        let plain = try PostgresStoreLocation(url: "postgresql://hub@db.lan/gym?sslmode=disable")
        #expect(plain.passwordRefusal?.contains("in the clear") == true)
        #expect(try PostgresStoreLocation(url: "postgresql://hub@localhost/gym?sslmode=disable").passwordRefusal == nil)
        #expect(try PostgresStoreLocation(url: "postgresql://hub@localhost/gym?sslmode=prefer").tls == .prefer)
        for (url, reason) in [
            ("postgresql://hub@db.lan/gym?sslmode=prefer", "falls back to plain text"),
            ("postgresql://hub@db.lan/gym?sslmode=disable&sslrootcert=/ca.crt", "sslrootcert needs TLS"),
            (
                "postgresql://hub@/gym?host=/run/postgresql&sslmode=verify-full&sslrootcert=/ca.crt",
                "sslrootcert needs TLS"
            ),
            ("postgresql://hub@db.lan/gym?sslrootcert=ca.crt", "absolute"),
        ] {
            do {
                _ = try PostgresStoreLocation(url: url)
                Issue.record("\(url) was taken")
            } catch {
                #expect(error.reason.contains(reason), "\(url): \(error.reason)")
            }
        }
    }

    @Test(
        "a server that takes TLS only (hostssl): verify-full with its CA connects and stores; another CA, or no TLS, is refused with the reason; a password is never sent in the clear"
    )
    func tlsServer() async throws {
        let server = try await PostgresServer(tls: true)
        do {
            let logger = Logger(label: "test.store")
            let state = server.directory.path
            let verified = try PostgresStoreLocation(
                url:
                    "postgresql://hrbridge@localhost:\(server.tcpPort!)/hrbridge?sslmode=verify-full&sslrootcert=\(server.caFile)"
            )
            let store = try await PostgresStore.open(verified, stateDirectory: state, logger: logger)
            #expect(try await store.appliedMigrations().count >= 3)
            #expect(
                try await server.query("SELECT count(*) FROM pg_stat_ssl WHERE ssl").first.map { Int($0)! > 0 } == true)
            await store.close()

            let strangerCA = server.directory.appendingPathComponent("other-ca")
            try FileManager.default.createDirectory(at: strangerCA, withIntermediateDirectories: true)
            try await MosquittoBroker.makeCertificates(in: strangerCA)
            let wrongCA = try PostgresStoreLocation(
                url:
                    "postgresql://hrbridge@localhost:\(server.tcpPort!)/hrbridge?sslmode=verify-full&sslrootcert=\(strangerCA.path)/ca.crt"
            )
            await #expect(throws: StoreError.self) {
                try await PostgresStore.open(wrongCA, stateDirectory: state, logger: logger)
            }
            let cleartext = try PostgresStoreLocation(
                url: "postgresql://hrbridge@localhost:\(server.tcpPort!)/hrbridge")
            await #expect(throws: StoreError.self, "pg_hba takes hostssl only") {
                try await PostgresStore.open(cleartext, stateDirectory: state, logger: logger)
            }
            var overNetwork = try PostgresStoreLocation(
                url: "postgresql://hrbridge@db.lan:\(server.tcpPort!)/hrbridge?sslmode=disable")
            overNetwork.password = "secret"
            do {
                _ = try await PostgresStore.open(overNetwork, stateDirectory: state, logger: logger)
                Issue.record("a password was about to go out in the clear")
            } catch {
                #expect("\(error)".contains("in the clear"), "\(error)")
            }
        } catch {
            await server.remove()
            throw error
        }
        await server.remove()
    }

    @Test("hubs sharing one database recover only their own sessions (and those journaled before owners were kept)")
    func ownedRecovery() async throws {
        let server = try await PostgresServer()
        do {
            let location = try PostgresStoreLocation(url: server.url())
            let logger = Logger(label: "test.store")
            let hubA = WorkoutStore(
                backend: try await PostgresStore.open(
                    location, stateDirectory: server.directory.path + "/a", owner: "hub-a", logger: logger))
            let hubB = WorkoutStore(
                backend: try await PostgresStore.open(
                    location, stateDirectory: server.directory.path + "/b", owner: "hub-b", logger: logger))
            func record(_ id: UUID) -> ActiveSessionRecord {
                ActiveSessionRecord(
                    workoutID: id, configuration: WorkoutConfiguration(activityType: .cycling), profile: nil,
                    start: Date(timeIntervalSinceReferenceDate: 800_000_000), state: .running)
            }
            let (mine, theirs, legacy) = (UUID(), UUID(), UUID())
            try await hubA.beginWorkout(record(mine))
            try await hubB.beginWorkout(record(theirs))
            try await hubB.beginWorkout(record(legacy))
            _ = try await server.query("UPDATE journal SET owner = NULL WHERE workout_id = '\(legacy.uuidString)'")
            try await hubA.updateJournal(record(mine))
            #expect(try await hubA.activeSessions().map(\.workoutID).sorted() == [mine, legacy].sorted())
            #expect(try await hubB.activeSessions().map(\.workoutID).sorted() == [theirs, legacy].sorted())
            #expect(try await server.query("SELECT count(*) FROM journal WHERE owner = 'hub-a'") == ["1"])
        } catch {
            await server.remove()
            throw error
        }
        await server.remove()
    }

    @Test(
        "two stores opening one database migrate it once; a restarted server is reconnected, its downtime a passing error"
    )
    func restart() async throws {
        let server = try await PostgresServer()
        do {
            try await restartChecks(server)
        } catch {
            await server.remove()
            throw error
        }
        await server.remove()
    }

    private func restartChecks(_ server: PostgresServer) async throws {
        let location = try PostgresStoreLocation(url: server.url())
        let logger = Logger(label: "test.store")
        let state = server.directory.path
        async let first = PostgresStore.open(location, stateDirectory: state, logger: logger)
        async let second = PostgresStore.open(location, stateDirectory: state, logger: logger)
        let (one, two) = try await (first, second)
        #expect(
            try await one.appliedMigrations() == [
                "v1", "v2-timestamptz", "v3-alpha1-windows", "v4-journal-owner", "v5-sample-via", "v6-waveforms",
                "v7-sample-checks-per-transaction", "v8-journal-sensors", "v9-sample-id-lock",
            ])
        #expect(try await server.query("SELECT count(*) FROM hrbridge_migration") == ["9"])
        await two.close()
        let store = WorkoutStore(backend: one)
        let source = SampleSource(adapter: "mqtt", address: "C0:FF:EE:00:00:07", name: "Ana")
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
        func beats(_ range: Range<Int>) -> [QuantitySample] {
            range.map {
                try! QuantitySample(
                    type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 120),
                    start: start.addingTimeInterval(Double($0)),
                    end: start.addingTimeInterval(Double($0)), source: source)
            }
        }
        #expect(try await store.append(beats(0..<10), workout: nil) == 10)
        await server.stop()
        do {
            try await store.append(beats(10..<20), workout: nil)
            Issue.record("a write with the server stopped succeeded")
        } catch {
            guard case .unreachable = error else { throw error }
            #expect(error.isTransient)
        }
        try await server.start()
        // While it was down one caller retries every 2 s and the others fail at once; the same
        // batch again once the server answers: stored once.
        var stored = 0
        try await eventually("the store answers again") {
            guard let count = try? await store.append(beats(10..<20), workout: nil) else { return false }
            stored += count
            return true
        }
        #expect(stored == 10)
        #expect(try await store.append(beats(0..<20), workout: nil) == 0)
        #expect(try await store.samples(type: .heartRate).count == 20)
        await one.close()
    }

    @Test(
        "no per-row foreign keys on samples (v7): deleting a workout waits for a write holding it and takes that write's samples too; a later write to it is refused, naming it"
    )
    func deleteWaitsForWrites() async throws {
        try await withPostgres { server in
            let (backend, store) = try await Self.openStore(server)
            #expect(
                try await server.query(
                    "SELECT count(*) FROM pg_constraint WHERE conrelid = 'sample'::regclass AND contype = 'f'") == ["0"]
            )
            let workout = UUID()
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            try await store.beginWorkout(
                ActiveSessionRecord(
                    workoutID: workout, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                    start: start, state: .running))
            func beat(_ second: Double) -> QuantitySample { Self.beat(second, from: "C0:FF:EE:00:00:08", after: start) }
            #expect(try await store.append([beat(0)], workout: workout) == 1)
            // Another writer holds the workout as the store's writes do (KEY SHARE), and adds its
            // sample only once the delete waits for it: a delete that read the samples first
            // would leave this one behind.
            let id = workout.uuidString
            let writer = Task {
                try await server.runScript(
                    """
                    BEGIN;
                    SELECT 1 FROM workout WHERE id = '\(id)' FOR KEY SHARE;
                    \(Self.waitInTransaction(until: "EXISTS (SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock')"))
                    INSERT INTO sample (workout_id, type, value, start_time, end_time, source_id)
                    SELECT '\(id)', 'heartRate', 121, to_timestamp(1800000001), to_timestamp(1800000001), min(id) FROM source;
                    COMMIT;
                    """)
            }
            try await eventually("the other writer holding the workout") {
                try await server.query(
                    "SELECT count(*) FROM pg_locks WHERE relation = 'workout'::regclass AND mode = 'RowShareLock' AND granted"
                ) == ["1"]
            }
            try await store.deleteWorkout(workout)
            _ = try await writer.value
            #expect(try await server.query("SELECT count(*) FROM sample WHERE workout_id = '\(id)'") == ["0"])
            #expect(try await server.query("SELECT count(*) FROM tombstone") == ["2"])
            await #expect(throws: StoreError.unknownWorkout(workout)) {
                try await store.append([beat(2)], workout: workout)
            }
            #expect(try await server.query("SELECT count(*) FROM sample") == ["0"])
            await backend.close()
        }
    }

    @Test(
        "an anchored query waits for a write in flight: a sample whose id was taken before a later one's commits is not passed by the anchor"
    )
    func anchorWaitsForWritesInFlight() async throws {
        try await withPostgres { server in
            let (backend, store) = try await Self.openStore(server)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            func beat(_ second: Double) -> QuantitySample { Self.beat(second, from: "C0:FF:EE:00:00:09", after: start) }
            #expect(try await store.append([beat(0)], workout: nil) == 1)
            // Another writer takes id 2 the way the store's writes do and commits only once the
            // anchored query below waits for it (a minute at most: a query that does not wait gets
            // its answer first and fails below); the store's own write takes id 3 and commits first.
            let writer = Task {
                try await server.runScript(
                    """
                    BEGIN;
                    SELECT pg_advisory_xact_lock_shared(\(PostgresStore.sampleIDsLock));
                    INSERT INTO sample (type, value, start_time, end_time, source_id)
                    SELECT 'heartRate', 121, to_timestamp(1800000001), to_timestamp(1800000001), min(id) FROM source;
                    \(Self.waitInTransaction(until: "EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted)"))
                    COMMIT;
                    """)
            }
            try await eventually("the other writer holding id 2") {
                try await server.query("SELECT last_value FROM sample_id_seq") == ["2"]
            }
            #expect(try await store.append([beat(2)], workout: nil) == 1)
            let changes = try await store.changes(type: .heartRate, since: nil)
            _ = try await writer.value
            #expect(changes.added.map(\.id) == [1, 2, 3])
            #expect(changes.anchor == 3)
            #expect(try await store.changes(type: .heartRate, since: changes.anchor).added.isEmpty)
            await backend.close()
        }
    }

    @Test(
        "the store's sample writes and a workout's delete take the sample-id lock (shared) before anything else: with it held exclusively they wait, then go on"
    )
    func writesHoldTheSampleIDLock() async throws {
        try await withPostgres { server in
            let (backend, store) = try await Self.openStore(server)
            let workout = UUID()
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            try await store.beginWorkout(
                ActiveSessionRecord(
                    workoutID: workout, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                    start: start, state: .running))
            func beat(_ second: Double) -> QuantitySample { Self.beat(second, from: "C0:FF:EE:00:00:0A", after: start) }
            // An anchored query's side, held until two requests for the lock wait (a minute at most).
            let holder = Task {
                try await server.runScript(
                    """
                    BEGIN;
                    SELECT pg_advisory_xact_lock(\(PostgresStore.sampleIDsLock));
                    \(Self.waitInTransaction(until: "(SELECT count(*) FROM \(Self.waitingShareLocks)) = 2"))
                    SELECT count(*) FROM \(Self.waitingShareLocks);
                    COMMIT;
                    """)
            }
            try await eventually("the lock held exclusively") {
                try await server.query(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted"
                ) == ["1"]
            }
            let append = Task { try await store.append([beat(0)], workout: nil) }
            let delete = Task { try await store.deleteWorkout(workout) }
            #expect(try await holder.value.last == "2", "both waited for the lock")
            #expect(try await append.value == 1)
            try await delete.value
            #expect(try await server.query("SELECT count(*) FROM workout") == ["0"])
            await backend.close()
        }
    }

    @Test(
        "a write left in flight (its client gone) does not hold anchored queries or other writes for long: the query answers no changes, its anchor as it was, after 2 s; writes go on"
    )
    func anchorGivesUpOnAStuckWrite() async throws {
        try await withPostgres { server in
            let (backend, store) = try await Self.openStore(server)
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            func beat(_ second: Double) -> QuantitySample { Self.beat(second, from: "C0:FF:EE:00:00:0B", after: start) }
            #expect(try await store.append([beat(0)], workout: nil) == 1)
            let first = try await store.changes(type: .heartRate, since: nil)
            #expect(first.added.map(\.id) == [1])
            // A writer that holds the lock shared and goes quiet, until the store has written again.
            let stuck = Task {
                try await server.runScript(
                    """
                    BEGIN;
                    SELECT pg_advisory_xact_lock_shared(\(PostgresStore.sampleIDsLock));
                    \(Self.waitInTransaction(until: "(SELECT count(*) FROM sample) = 2"))
                    SELECT count(*) FROM sample;
                    COMMIT;
                    """)
            }
            try await eventually("the stuck writer holding the lock") {
                try await server.query(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ShareLock' AND granted"
                ) == ["1"]
            }
            let waiting = try await store.changes(type: .heartRate, since: first.anchor)
            #expect(waiting.added.isEmpty && waiting.deleted.isEmpty)
            #expect(waiting.anchor == first.anchor)
            #expect(try await store.append([beat(1)], workout: nil) == 1, "no request left queued before it")
            #expect(try await stuck.value.last == "2", "the store wrote while the writer was stuck")
            #expect(try await store.changes(type: .heartRate, since: first.anchor).added.map(\.id) == [2])
            await backend.close()
        }
    }

    /// A psql block that waits, inside the script's transaction, until `condition` holds — at
    /// most a minute, so a test whose other side never comes fails below instead of hanging.
    static func waitInTransaction(until condition: String) -> String {
        """
        DO $$ BEGIN
        FOR attempt IN 1..6000 LOOP
        EXIT WHEN \(condition);
        PERFORM pg_sleep(0.01);
        PERFORM pg_stat_clear_snapshot();
        END LOOP;
        END $$;
        """
    }

    /// Requests for the sample-id lock shared that wait.
    static let waitingShareLocks = "pg_locks WHERE locktype = 'advisory' AND mode = 'ShareLock' AND NOT granted"

    /// A store on `server`'s database, its state directory the server's.
    static func openStore(_ server: PostgresServer) async throws -> (PostgresStore, WorkoutStore) {
        let backend = try await PostgresStore.open(
            try PostgresStoreLocation(url: server.url()), stateDirectory: server.directory.path,
            logger: Logger(label: "test.store"))
        return (backend, WorkoutStore(backend: backend))
    }

    /// A heart rate of 120 `second` s after `start`, from the strap at `address`.
    static func beat(_ second: Double, from address: String, after start: Date) -> QuantitySample {
        try! QuantitySample(
            type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 120),
            start: start.addingTimeInterval(second), end: start.addingTimeInterval(second),
            source: SampleSource(adapter: "mock", address: address, name: nil))
    }

    @Test(
        "a database at v1 (seconds since 2001 as double precision) becomes timestamptz: the store reads the same dates, psql shows 2026, a sample sent again is still a duplicate"
    )
    func migrationToTimestamptz() async throws {
        try await withPostgres { server in
            let workout = UUID()
            // A fraction finer than PostgreSQL's microsecond: old and new rows must round alike.
            let start = Date(timeIntervalSinceReferenceDate: 800_006_400.123_456_789)
            func at(_ offset: Double) -> String { "\(start.timeIntervalSinceReferenceDate + offset)" }
            let configuration = String(
                decoding: try JSONEncoder().encode(WorkoutConfiguration(activityType: .running)), as: UTF8.self)
            let id = workout.uuidString
            let v1 = PostgresSchema.migrations[0]
            #expect(v1.name == "v1")
            let script =
                """
                CREATE TABLE hrbridge_migration (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
                \(v1.statements.joined(separator: ";\n"));
                INSERT INTO hrbridge_migration (name) VALUES ('v1');
                INSERT INTO source (adapter, address) VALUES ('mock', 'X');
                INSERT INTO workout (id, activity_type, location, athlete, start_time, state)
                VALUES ('\(id)', 'running', 'unknown', 'default', \(at(0)), 'active');
                INSERT INTO activity (id, workout_id, activity_type, location, start_time, end_time)
                VALUES ('\(UUID().uuidString)', '\(id)', 'running', 'unknown', \(at(0)), \(at(60)));
                INSERT INTO event (workout_id, kind, start_time, end_time) VALUES ('\(id)', 'lap', \(at(30)), \(at(30)));
                INSERT INTO journal (workout_id, session_state, configuration, updated_at)
                VALUES ('\(id)', 'running', '\(configuration)', \(at(0)));
                INSERT INTO schedule (id, name, plan, date) VALUES ('\(UUID().uuidString)', 'plan', '{}', \(at(3600)));
                INSERT INTO sample (workout_id, type, value, start_time, end_time, source_id)
                VALUES ('\(id)', 'heartRate', 120, \(at(0)), \(at(0)), 1);
                INSERT INTO hourly VALUES ('heartRate', 1, floor(\(at(0)) / 3600), 1, 120, 120, 120);
                """
            _ = try await server.runScript(script)

            let (backend, store) = try await Self.openStore(server)
            #expect(
                try await store.appliedMigrations() == [
                    "v1", "v2-timestamptz", "v3-alpha1-windows", "v4-journal-owner", "v5-sample-via", "v6-waveforms",
                    "v7-sample-checks-per-transaction", "v8-journal-sensors", "v9-sample-id-lock",
                ])
            // The same dates, to PostgreSQL's microsecond.
            try await expectMigratedDates(
                store, workout: workout, start: start, hour: Date(timeIntervalSinceReferenceDate: 800_006_400),
                tolerance: 0.5e-6 + 1e-9)

            // What psql, Grafana or a notebook sees: dates, in any time zone.
            let seen = try await server.runScript(
                """
                SELECT start_time FROM workout;
                SELECT end_time FROM activity;
                SELECT start_time FROM event;
                SELECT updated_at FROM journal;
                SELECT date FROM schedule;
                SELECT start_time FROM sample;
                SELECT hour FROM hourly;
                SELECT pg_typeof(start_time) FROM sample;
                """, environment: ["PGTZ": "UTC"])
            #expect(
                seen == [
                    "2026-05-09 08:00:00.123457+00", "2026-05-09 08:01:00.123457+00", "2026-05-09 08:00:30.123457+00",
                    "2026-05-09 08:00:00.123457+00", "2026-05-09 09:00:00.123457+00", "2026-05-09 08:00:00.123457+00",
                    "2026-05-09 08:00:00+00", "timestamp with time zone",
                ])
            await backend.close()
        }
    }
}
