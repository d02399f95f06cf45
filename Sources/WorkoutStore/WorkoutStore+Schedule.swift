public import Foundation
import GRDB

/// A structured workout scheduled for a day.
public struct ScheduledPlan: Hashable, Sendable {
    /// The entry's identifier.
    public var id: UUID
    /// The plan's name.
    public var name: String
    /// The plan file's JSON.
    public var plan: Data
    /// When it is planned.
    public var date: Date
    /// When a workout run from it finished.
    public var completedAt: Date?
    /// That workout.
    public var workoutID: UUID?
}

extension WorkoutStore {
    /// Upcoming, not completed entries the schedule holds at most (WorkoutKit syncs 15).
    public static let maximumScheduledPlans = 15

    /// Schedules a plan; refuses a 16th upcoming entry.
    public func schedule(name: String, plan: Data, at date: Date, now: Date = Date()) throws(StoreError)
        -> ScheduledPlan
    {
        let entry = ScheduledPlan(id: UUID(), name: name, plan: plan, date: date)
        try write { db in
            let upcoming =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM schedule WHERE completedAt IS NULL AND date >= ?",
                    arguments: [now.timeIntervalSinceReferenceDate]) ?? 0
            guard upcoming < Self.maximumScheduledPlans else {
                throw StoreError.scheduleFull(Self.maximumScheduledPlans)
            }
            try db.execute(
                sql: "INSERT INTO schedule (id, name, plan, date) VALUES (?, ?, ?, ?)",
                arguments: [
                    entry.id.uuidString, name, String(decoding: plan, as: UTF8.self),
                    date.timeIntervalSinceReferenceDate,
                ])
        }
        return entry
    }

    /// Entries from 7 days before `now` to 7 days after, by date.
    public func scheduledPlans(around now: Date = Date()) throws(StoreError) -> [ScheduledPlan] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM schedule WHERE date >= ? AND date < ? ORDER BY date",
                arguments: [
                    now.timeIntervalSinceReferenceDate - 7 * 86_400, now.timeIntervalSinceReferenceDate + 7 * 86_400,
                ]
            ).compactMap { row in
                guard let id = UUID(uuidString: try row.value("id")) else { return nil }
                let completed: Double? = try row.value("completedAt")
                let workout: String? = try row.value("workoutId")
                return ScheduledPlan(
                    id: id, name: try row.value("name"), plan: Data((try row.value("plan") as String).utf8),
                    date: Date(timeIntervalSinceReferenceDate: try row.value("date")),
                    completedAt: completed.map { Date(timeIntervalSinceReferenceDate: $0) },
                    workoutID: workout.flatMap(UUID.init(uuidString:)))
            }
        }
    }

    /// Marks the open entry of this plan nearest to `date` (within the window) complete, with the
    /// workout that ran it.
    @discardableResult
    public func completeScheduledPlan(plan: Data, workout: UUID, at date: Date) throws(StoreError) -> ScheduledPlan? {
        let candidates = try scheduledPlans(around: date).filter { $0.completedAt == nil && $0.plan == plan }
        guard
            var entry = candidates.min(by: {
                abs($0.date.timeIntervalSince(date)) < abs($1.date.timeIntervalSince(date))
            })
        else { return nil }
        try write { db in
            try db.execute(
                sql: "UPDATE schedule SET completedAt = ?, workoutId = ? WHERE id = ?",
                arguments: [date.timeIntervalSinceReferenceDate, workout.uuidString, entry.id.uuidString])
        }
        entry.completedAt = date
        entry.workoutID = workout
        return entry
    }
}
