public import Foundation
import GRDB

extension SQLiteStore {
    /// Stores a schedule entry unless `limit` upcoming entries exist (one transaction).
    public func insertScheduled(_ entry: ScheduledPlan, limit: Int, now: Date) async throws(StoreError) {
        try await write { db in
            let upcoming =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM schedule WHERE completedAt IS NULL AND date >= ?",
                    arguments: [now.timeIntervalSince1970]) ?? 0
            guard upcoming < limit else { throw StoreError.scheduleFull(limit) }
            try db.execute(
                sql: "INSERT INTO schedule (id, name, plan, date) VALUES (?, ?, ?, ?)",
                arguments: [
                    entry.id.uuidString, entry.name, String(decoding: entry.plan, as: UTF8.self),
                    entry.date.timeIntervalSince1970,
                ])
        }
    }

    /// Entries dated within `[from, to)`, by date.
    public func scheduledPlans(from: Date, to: Date) async throws(StoreError) -> [ScheduledPlan] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM schedule WHERE date >= ? AND date < ? ORDER BY date",
                arguments: [from.timeIntervalSince1970, to.timeIntervalSince1970]
            ).compactMap { row in
                guard let id = UUID(uuidString: try row.value("id")) else { return nil }
                let completed: Double? = try row.value("completedAt")
                let workout: String? = try row.value("workoutId")
                return ScheduledPlan(
                    id: id, name: try row.value("name"), plan: Data((try row.value("plan") as String).utf8),
                    date: Date(timeIntervalSince1970: try row.value("date")),
                    completedAt: completed.map { Date(timeIntervalSince1970: $0) },
                    workoutID: workout.flatMap(UUID.init(uuidString:)))
            }
        }
    }

    /// Removes an entry; false when there is none with that id.
    public func deleteScheduled(_ id: UUID) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM schedule WHERE id = ?", arguments: [id.uuidString])
            return db.changesCount > 0
        }
    }

    /// Marks an entry complete with the workout that ran it.
    public func markScheduled(_ id: UUID, completedAt date: Date, workout: UUID) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE schedule SET completedAt = ?, workoutId = ? WHERE id = ?",
                arguments: [date.timeIntervalSince1970, workout.uuidString, id.uuidString])
        }
    }
}
