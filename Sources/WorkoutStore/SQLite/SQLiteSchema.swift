import GRDB

/// The store's schema, as GRDB migrations: never edit a shipped migration, add a new one.
///
/// Times are REAL Unix seconds (since `v5-unix-time`; before, seconds since 2001-01-01 UTC,
/// Foundation's reference date) and `hourly.hour` counts hours since 1970. docs/schema.md
/// describes the tables for people who query them.
enum SQLiteSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "source") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("adapter", .text).notNull()
                table.column("address", .text).notNull()
                table.column("name", .text)
                table.column("model", .text)
                table.column("firmware", .text)
                table.uniqueKey(["adapter", "address"])
            }
            try db.create(table: "profile") { table in
                table.primaryKey("id", .text)
                // The UserProfile with its preferred zones, as JSON.
                table.column("json", .text).notNull()
            }
            try db.create(table: "workout") { table in
                table.primaryKey("id", .text)
                table.column("activityType", .text).notNull()
                table.column("location", .text).notNull()
                table.column("athlete", .text).notNull()
                table.column("start", .double).notNull()
                table.column("end", .double)
                table.column("elapsedTime", .double)
                // "active" while it runs (the recovery journal points here), then "finished".
                table.column("state", .text).notNull()
                // The finished Workout value (statistics, zones, HRV, energy) as JSON.
                table.column("summary", .text)
                table.column("metadata", .text).notNull().defaults(to: "{}")
            }
            try db.create(index: "workout_start", on: "workout", columns: ["start"])
            try db.create(table: "activity") { table in
                table.primaryKey("id", .text)
                table.belongsTo("workout", onDelete: .cascade).notNull()
                table.column("activityType", .text).notNull()
                table.column("location", .text).notNull()
                table.column("start", .double).notNull()
                table.column("end", .double)
            }
            try db.create(table: "event") { table in
                table.autoIncrementedPrimaryKey("id")
                table.belongsTo("workout", onDelete: .cascade).notNull()
                table.column("kind", .text).notNull()
                table.column("start", .double).notNull()
                table.column("end", .double).notNull()
                table.column("metadata", .text).notNull().defaults(to: "{}")
            }
            try db.create(table: "zoneGroup") { table in
                table.autoIncrementedPrimaryKey("id")
                table.belongsTo("workout", onDelete: .cascade).notNull()
                table.column("activityId", .text)
                table.column("quantityType", .text).notNull()
                table.column("boundaries", .text).notNull()
                table.column("durations", .text).notNull()
            }
            // Quantity samples, the heartbeat (RR) series included (type heartbeatSeries, raw value kept).
            try db.create(table: "sample") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("workoutId", .text).references("workout", onDelete: .cascade)
                table.column("type", .text).notNull()
                table.column("value", .double).notNull()
                table.column("start", .double).notNull()
                table.column("end", .double).notNull()
                table.belongsTo("source").notNull()
                table.column("contact", .text)
                table.column("rawRR", .integer)
            }
            try db.create(index: "sample_type_start", on: "sample", columns: ["type", "start"])
            try db.create(index: "sample_workout", on: "sample", columns: ["workoutId"])
            // Deleted samples, for anchored queries: their anchors share the sample id sequence.
            try db.create(table: "tombstone") { table in
                table.primaryKey("anchor", .integer)
                table.column("sampleId", .integer).notNull()
                table.column("type", .text).notNull()
            }
            // The recovery journal: one row per active session.
            try db.create(table: "journal") { table in
                table.primaryKey("workoutId", .text).references("workout", onDelete: .cascade)
                table.column("sessionState", .text).notNull()
                table.column("configuration", .text).notNull()
                table.column("profile", .text)
                table.column("customZones", .text).notNull().defaults(to: "[]")
                table.column("primarySources", .text).notNull().defaults(to: "{}")
                table.column("updatedAt", .double).notNull()
            }
        }
        migrator.registerMigration("v2-hourly-rollups") { db in
            // Hourly aggregates per type and source, so day and week buckets over a year read
            // 8,760 rows instead of 31.5 million.
            try db.create(table: "hourly") { table in
                table.column("type", .text).notNull()
                table.column("sourceId", .integer).notNull()
                table.column("hour", .integer).notNull()
                table.column("count", .integer).notNull()
                table.column("sum", .double).notNull()
                table.column("minimum", .double).notNull()
                table.column("maximum", .double).notNull()
                table.primaryKey(["type", "hour", "sourceId"])
            }
            try db.execute(
                sql: """
                    INSERT INTO hourly (type, sourceId, hour, count, sum, minimum, maximum)
                    SELECT type, sourceId, CAST(start / 3600.0 AS INTEGER), COUNT(*), SUM(value), MIN(value), MAX(value)
                    FROM sample GROUP BY type, sourceId, CAST(start / 3600.0 AS INTEGER)
                    """)
        }
        migrator.registerMigration("v3-plan-schedule") { db in
            // Scheduled structured workouts (the plan file's JSON), with their completion.
            try db.create(table: "schedule") { table in
                table.primaryKey("id", .text)
                table.column("name", .text).notNull()
                table.column("plan", .text).notNull()
                table.column("date", .double).notNull()
                table.column("completedAt", .double)
                table.column("workoutId", .text)
            }
            try db.create(index: "schedule_date", on: "schedule", columns: ["date"])
        }
        migrator.registerMigration("v4-sample-key") { db in
            // A sample is stored once: a writer that retries a batch (a gateway catching up, a
            // retried transaction) adds nothing twice. Exact copies stored before are merged.
            try db.execute(
                sql: """
                    DELETE FROM sample WHERE id NOT IN
                    (SELECT MIN(id) FROM sample GROUP BY type, start, sourceId, end, value)
                    """)
            if db.changesCount > 0 {
                try db.execute(sql: "DELETE FROM hourly")
                try db.execute(
                    sql: """
                        INSERT INTO hourly (type, sourceId, hour, count, sum, minimum, maximum)
                        SELECT type, sourceId, CAST(start / 3600.0 AS INTEGER), COUNT(*), SUM(value), MIN(value), MAX(value)
                        FROM sample GROUP BY type, sourceId, CAST(start / 3600.0 AS INTEGER)
                        """)
            }
            // Led by type and start, the key also serves every range query: it replaces that index.
            try db.create(
                index: "sample_key", on: "sample", columns: ["type", "start", "sourceId", "end", "value"], unique: true)
            try db.drop(index: "sample_type_start")
        }
        migrator.registerMigration("v5-unix-time") { db in
            // Seconds since 2001 become Unix seconds (978,307,200 s = 271,752 h from 1970 to
            // 2001); adding in REAL gives what Date.timeIntervalSince1970 gives, so a sample sent
            // again still matches its key. The key is rebuilt once rather than on every row.
            try db.drop(index: "sample_key")
            try db.execute(sql: "UPDATE sample SET start = start + 978307200, end = end + 978307200")
            try db.create(
                index: "sample_key", on: "sample", columns: ["type", "start", "sourceId", "end", "value"], unique: true)
            try db.execute(sql: "UPDATE hourly SET hour = hour + 271752")
            try db.execute(sql: "UPDATE workout SET start = start + 978307200, end = end + 978307200")
            try db.execute(sql: "UPDATE activity SET start = start + 978307200, end = end + 978307200")
            try db.execute(sql: "UPDATE event SET start = start + 978307200, end = end + 978307200")
            try db.execute(sql: "UPDATE journal SET updatedAt = updatedAt + 978307200")
            try db.execute(sql: "UPDATE schedule SET date = date + 978307200, completedAt = completedAt + 978307200")
        }
        migrator.registerMigration("v6-alpha1-windows") { db in
            // An active workout's DFA α1 windows, until its summary takes them.
            try db.create(table: "alpha1Window") { table in
                table.belongsTo("workout", onDelete: .cascade).notNull()
                table.column("windowEnd", .double).notNull()
                table.column("json", .text).notNull()
                table.primaryKey(["workoutId", "windowEnd"])
            }
        }
        migrator.registerMigration("v7-sample-via") { db in
            // How each sample's frame came: 0 a link, 1 a broadcast (NULL: stored before this was kept).
            try db.alter(table: "sample") { table in table.add(column: "via", .integer) }
        }
        migrator.registerMigration("v8-waveforms") { db in
            // Raw signals (a Polar H10's ECG and acceleration) a frame a row, its values a compact
            // blob (WaveformBlob): an hour of ECG is 6,400 rows, not 468,000. Clustered by workout,
            // strap and signal, so an export reads one range and the sample table is untouched.
            try db.create(table: "waveform", options: [.withoutRowID]) { table in
                table.column("workoutId", .text).notNull().references("workout", onDelete: .cascade)
                table.column("sourceId", .integer).notNull().references("source")
                table.column("kind", .text).notNull()
                table.column("start", .double).notNull()
                table.column("interval", .double).notNull()
                table.column("rate", .integer).notNull()
                table.column("count", .integer).notNull()
                table.column("continuous", .boolean).notNull()
                table.column("sensorTime", .integer).notNull()
                table.column("receivedAt", .double).notNull()
                table.column("data", .blob).notNull()
                table.primaryKey(["workoutId", "sourceId", "kind", "start"])
            }
            // What each workout holds of each strap's signal, kept as frames arrive: listing a
            // workout's raw signals reads a row per stream, not every frame (an hour of 10 straps'
            // ECG and acceleration is 114,000 of them).
            try db.create(table: "waveformStream", options: [.withoutRowID]) { table in
                table.column("workoutId", .text).notNull().references("workout", onDelete: .cascade)
                table.column("sourceId", .integer).notNull().references("source")
                table.column("kind", .text).notNull()
                table.column("rate", .integer).notNull()
                table.column("frames", .integer).notNull()
                table.column("samples", .integer).notNull()
                table.column("runs", .integer).notNull()
                table.column("first", .double).notNull()
                table.column("last", .double).notNull()
                table.primaryKey(["workoutId", "sourceId", "kind"])
            }
        }
        migrator.registerMigration("v9-no-source-index") { db in
            // The index GRDB made for `sample.sourceId` serves no query (a source's samples are read
            // by type and time through `sample_key`; sources are never deleted), and keeping it cost
            // a recording gateway a fifth of its SQLite time: a leaf page per strap per commit.
            try db.drop(index: "sample_on_sourceId")
        }
        migrator.registerMigration("v10-journal-sensors") { db in
            // Every sensor of an active session, so recovery follows them all.
            try db.alter(table: "journal") { table in
                table.add(column: "sensors", .text).notNull().defaults(to: "[]")
            }
        }
        return migrator
    }
}
