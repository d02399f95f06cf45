/// The PostgreSQL schema as numbered migrations: never edit a shipped one, add a new one.
///
/// Times are `timestamptz` (since `v2-timestamptz`; `v1` stored seconds since 2001-01-01 UTC,
/// Foundation's reference date, as `double precision`). The store writes them as
/// `to_timestamp(<Unix seconds>)`, rounded to the microsecond, and reads them back as they are,
/// so a sample sent again matches the one stored. `hourly.hour` is the start of the hour.
/// Samples are unique by type, start, source, end and value; led by type and start, that key
/// also serves the range queries. docs/schema.md describes the tables for people who query them.
enum PostgresSchema {
    /// What an operator should know while a migration runs, logged before it starts.
    static let notes = [
        "v2-timestamptz":
            "times become timestamptz: every table with times is rewritten, the samples too (minutes on a large database); every hrbridge on this database must run this version or newer",
        "v7-sample-checks-per-transaction":
            "a deleted workout's samples are now deleted by hrbridge, not by a cascade: every hrbridge on this database must run this version or newer",
        "v9-sample-id-lock":
            "writers of samples hold an advisory lock that anchored queries wait on: every hrbridge on this database must run this version or newer",
    ]

    /// Name and SQL statements of each migration, in order.
    static let migrations: [(name: String, statements: [String])] = [
        (
            "v1",
            [
                """
                CREATE TABLE source (id bigserial PRIMARY KEY, adapter text NOT NULL, address text NOT NULL,
                name text, model text, firmware text, UNIQUE (adapter, address))
                """,
                "CREATE TABLE profile (id text PRIMARY KEY, json text NOT NULL)",
                """
                CREATE TABLE workout (id text PRIMARY KEY, activity_type text NOT NULL, location text NOT NULL,
                athlete text NOT NULL, start_time double precision NOT NULL, end_time double precision,
                elapsed_time double precision, state text NOT NULL, summary text, metadata text NOT NULL DEFAULT '{}')
                """,
                "CREATE INDEX workout_start ON workout (start_time)",
                """
                CREATE TABLE activity (id text PRIMARY KEY, workout_id text NOT NULL REFERENCES workout ON DELETE CASCADE,
                activity_type text NOT NULL, location text NOT NULL, start_time double precision NOT NULL,
                end_time double precision)
                """,
                """
                CREATE TABLE event (id bigserial PRIMARY KEY, workout_id text NOT NULL REFERENCES workout ON DELETE CASCADE,
                kind text NOT NULL, start_time double precision NOT NULL, end_time double precision NOT NULL,
                metadata text NOT NULL DEFAULT '{}')
                """,
                """
                CREATE TABLE zone_group (id bigserial PRIMARY KEY,
                workout_id text NOT NULL REFERENCES workout ON DELETE CASCADE, activity_id text,
                quantity_type text NOT NULL, boundaries text NOT NULL, durations text NOT NULL)
                """,
                """
                CREATE TABLE sample (id bigserial PRIMARY KEY, workout_id text REFERENCES workout ON DELETE CASCADE,
                type text NOT NULL, value double precision NOT NULL, start_time double precision NOT NULL,
                end_time double precision NOT NULL, source_id bigint NOT NULL REFERENCES source, contact text,
                raw_rr bigint, UNIQUE (type, start_time, source_id, end_time, value))
                """,
                "CREATE INDEX sample_workout ON sample (workout_id)",
                "CREATE TABLE tombstone (anchor bigint PRIMARY KEY, sample_id bigint NOT NULL, type text NOT NULL)",
                """
                CREATE TABLE hourly (type text NOT NULL, source_id bigint NOT NULL, hour bigint NOT NULL,
                count bigint NOT NULL, sum double precision NOT NULL, minimum double precision NOT NULL,
                maximum double precision NOT NULL, PRIMARY KEY (type, hour, source_id))
                """,
                """
                CREATE TABLE journal (workout_id text PRIMARY KEY REFERENCES workout ON DELETE CASCADE,
                session_state text NOT NULL, configuration text NOT NULL, profile text,
                custom_zones text NOT NULL DEFAULT '[]', primary_sources text NOT NULL DEFAULT '{}',
                updated_at double precision NOT NULL)
                """,
                """
                CREATE TABLE schedule (id text PRIMARY KEY, name text NOT NULL, plan text NOT NULL,
                date double precision NOT NULL, completed_at double precision, workout_id text)
                """,
                "CREATE INDEX schedule_date ON schedule (date)",
            ]
        ),
        (
            // Seconds since 2001 become timestamptz (978,307,200 s = 271,752 h from 1970 to 2001).
            // Rewrites every table with times, the samples' too: minutes on a large database.
            "v2-timestamptz",
            [
                """
                ALTER TABLE workout ALTER COLUMN start_time TYPE timestamptz USING to_timestamp(start_time + 978307200),
                ALTER COLUMN end_time TYPE timestamptz USING to_timestamp(end_time + 978307200)
                """,
                """
                ALTER TABLE activity ALTER COLUMN start_time TYPE timestamptz USING to_timestamp(start_time + 978307200),
                ALTER COLUMN end_time TYPE timestamptz USING to_timestamp(end_time + 978307200)
                """,
                """
                ALTER TABLE event ALTER COLUMN start_time TYPE timestamptz USING to_timestamp(start_time + 978307200),
                ALTER COLUMN end_time TYPE timestamptz USING to_timestamp(end_time + 978307200)
                """,
                """
                ALTER TABLE sample ALTER COLUMN start_time TYPE timestamptz USING to_timestamp(start_time + 978307200),
                ALTER COLUMN end_time TYPE timestamptz USING to_timestamp(end_time + 978307200)
                """,
                """
                ALTER TABLE hourly ALTER COLUMN hour TYPE timestamptz USING to_timestamp((hour + 271752) * 3600)
                """,
                """
                ALTER TABLE journal ALTER COLUMN updated_at TYPE timestamptz USING to_timestamp(updated_at + 978307200)
                """,
                """
                ALTER TABLE schedule ALTER COLUMN date TYPE timestamptz USING to_timestamp(date + 978307200),
                ALTER COLUMN completed_at TYPE timestamptz USING to_timestamp(completed_at + 978307200)
                """,
            ]
        ),
        (
            // An active workout's DFA α1 windows, until its summary takes them.
            "v3-alpha1-windows",
            [
                """
                CREATE TABLE alpha1_window (workout_id text NOT NULL REFERENCES workout ON DELETE CASCADE,
                window_end double precision NOT NULL, json text NOT NULL, PRIMARY KEY (workout_id, window_end))
                """
            ]
        ),
        (
            // Who records each active session: hubs sharing a database recover only their own.
            "v4-journal-owner",
            ["ALTER TABLE journal ADD COLUMN owner text"]
        ),
        (
            // How each sample's frame came: 0 a link, 1 a broadcast (NULL: stored before this was kept).
            "v5-sample-via",
            ["ALTER TABLE sample ADD COLUMN via smallint"]
        ),
        (
            // Raw signals (a Polar H10's ECG and acceleration) a frame a row, its values a compact
            // blob (WaveformBlob), keyed by workout, strap, signal and first sample's time.
            "v6-waveforms",
            [
                """
                CREATE TABLE waveform (workout_id text NOT NULL REFERENCES workout ON DELETE CASCADE,
                source_id bigint NOT NULL REFERENCES source, kind text NOT NULL, start_time timestamptz NOT NULL,
                sample_interval double precision NOT NULL, rate integer NOT NULL, sample_count integer NOT NULL,
                continuous boolean NOT NULL, sensor_time bigint NOT NULL, received_at timestamptz NOT NULL,
                data bytea NOT NULL, PRIMARY KEY (workout_id, source_id, kind, start_time))
                """,
                // What each workout holds of each strap's signal, kept as frames arrive.
                """
                CREATE TABLE waveform_stream (workout_id text NOT NULL REFERENCES workout ON DELETE CASCADE,
                source_id bigint NOT NULL REFERENCES source, kind text NOT NULL, rate integer NOT NULL,
                frames bigint NOT NULL, samples bigint NOT NULL, runs bigint NOT NULL,
                first_time timestamptz NOT NULL, last_time timestamptz NOT NULL,
                PRIMARY KEY (workout_id, source_id, kind))
                """,
            ]
        ),
        (
            // A sample's workout and strap are checked once per transaction, not once per row:
            // PostgreSQL's per-row foreign-key triggers were a third of a sample's insert and
            // two fifths with a workout (Benchmarks/README.md). The store locks each batch's
            // workouts (FOR KEY SHARE) and upserts its straps in the same transaction, and
            // deletes a workout's samples itself.
            "v7-sample-checks-per-transaction",
            [
                """
                ALTER TABLE sample DROP CONSTRAINT IF EXISTS sample_source_id_fkey,
                DROP CONSTRAINT IF EXISTS sample_workout_id_fkey
                """
            ]
        ),
        (
            // Every sensor of an active session, so recovery follows them all (older versions
            // sharing the database still write their rows: they get the empty list).
            "v8-journal-sensors",
            ["ALTER TABLE journal ADD COLUMN sensors text NOT NULL DEFAULT '[]'"]
        ),
        (
            // Writers of sample ids hold an advisory lock that anchored queries wait on
            // (PostgresStore.sampleIDsLock); the horizon they read assumes ids handed out one at a time.
            "v9-sample-id-lock",
            ["ALTER SEQUENCE sample_id_seq CACHE 1"]
        ),
    ]
}
