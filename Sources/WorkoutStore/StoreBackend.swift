public import Foundation
public import Samples
public import Sensors
public import Workouts

/// A place where ``WorkoutStore`` keeps workouts, samples, rollups, the schedule and the recovery
/// journal: ``SQLiteStore`` (embedded, the default) or a database server (the PostgresStore module).
///
/// Every implementation passes the same conformance suite. Every method is async and never blocks
/// a thread of Swift concurrency's pool (SQLite runs on GRDB's own queues, PostgreSQL on
/// postgres-nio's event loops); a write is one transaction. Samples are keyed by source, type, start, end and
/// value: appending a sample that is stored already changes nothing, so a writer that is not sure
/// a batch landed sends it again.
public protocol StoreBackend: Sendable {
    /// Where the store is, for messages: a file path, or a server URL without its password.
    var location: String { get }
    /// The recording lock's file: beside an SQLite file (every process writing it sees the same
    /// lock), or under the state directory, named by the server and database.
    var lockPath: String { get }
    /// Where spill files go when no RAM-backed directory is at hand: the SQLite file's directory, or
    /// the state directory.
    var spillDirectory: String { get }
    /// Whether this is a guest's view: reads work, every write throws ``StoreError/notPermissibleForGuestUser``.
    var isGuest: Bool { get }
    /// The schema migrations applied, in order.
    func appliedMigrations() async throws(StoreError) -> [String]
    /// Ends the store's connections, last, once nothing writes any more: an SQLite file is
    /// checkpointed first, so the file alone holds everything even if a task still holds the store
    /// as the process exits. Calls after it fail.
    func close() async

    /// Records a sensor's model and firmware.
    func updateSource(_ source: SampleSource, model: String?, firmware: String?) async throws(StoreError)
    /// A sensor's model and firmware, when known.
    func sourceDetails(_ source: SampleSource) async throws(StoreError) -> (model: String?, firmware: String?)
    /// Every sensor that contributed samples.
    func sources() async throws(StoreError) -> [SampleSource]
    /// Stores the samples not stored yet, in one transaction; returns how many were new.
    @discardableResult
    func append(_ samples: [QuantitySample], workout: UUID?) async throws(StoreError) -> Int
    /// Stores several workouts' samples in one transaction (all or none); returns how many of each
    /// batch were new.
    func append(batches: [SampleBatch]) async throws(StoreError) -> [Int]

    /// Journals a session that starts collecting.
    func beginWorkout(_ record: ActiveSessionRecord) async throws(StoreError)
    /// Updates the journal of an active session.
    func updateJournal(_ record: ActiveSessionRecord) async throws(StoreError)
    /// Every session that was active when its process stopped.
    func activeSessions() async throws(StoreError) -> [ActiveSessionRecord]
    /// Journal rows that cannot be read back, one line each.
    func unreadableJournalRows() async throws(StoreError) -> [String]
    /// Stores an event of an active workout.
    func append(event: WorkoutEvent, workout: UUID) async throws(StoreError)
    /// Stores an activity (begun or ended) of an active workout.
    func upsert(activity: WorkoutActivity, workout: UUID) async throws(StoreError)
    /// Stores DFA α1 windows of an active workout (a window sent again replaces itself).
    func upsert(alpha1Windows: [HRVWindow], workout: UUID) async throws(StoreError)
    /// The DFA α1 windows stored for an active workout, in time order.
    func alpha1Windows(of workout: UUID) async throws(StoreError) -> [HRVWindow]
    /// The events of a workout, in date order.
    func events(of workout: UUID) async throws(StoreError) -> [WorkoutEvent]
    /// The activities of a workout, in order.
    func activityIntervals(of workout: UUID) async throws(StoreError) -> [(WorkoutConfiguration, Date, Date?)]
    /// Stores the finished workout and closes its journal.
    func finish(_ workout: Workout) async throws(StoreError)
    /// Throws a workout away with its samples.
    func deleteWorkout(_ id: UUID) async throws(StoreError)
    /// The workouts the query selects, newest first (filters and the limit are applied by the database).
    func workouts(_ query: WorkoutQuery) async throws(StoreError) -> [StoredWorkout]
    /// One workout.
    func workout(_ id: UUID) async throws(StoreError) -> StoredWorkout

    /// Stores a schedule entry unless `limit` upcoming (after `now`, not completed) entries exist.
    func insertScheduled(_ entry: ScheduledPlan, limit: Int, now: Date) async throws(StoreError)
    /// Schedule entries dated within `[from, to)`, by date.
    func scheduledPlans(from: Date, to: Date) async throws(StoreError) -> [ScheduledPlan]
    /// Marks a schedule entry complete with the workout that ran it.
    func markScheduled(_ id: UUID, completedAt date: Date, workout: UUID) async throws(StoreError)
    /// Removes a schedule entry; false when there is none with that id.
    func deleteScheduled(_ id: UUID) async throws(StoreError) -> Bool

    /// Stores raw-signal frames of a workout not stored yet (a frame is keyed by workout, strap,
    /// signal and first sample's time), in one transaction; returns how many were new.
    @discardableResult
    func append(waveforms: [SensorWaveform], workout: UUID) async throws(StoreError) -> Int
    /// A workout's raw-signal frames matching the query, in time order (page with one strap and signal).
    func waveforms(_ query: WaveformQuery) async throws(StoreError) -> [SensorWaveform]
    /// What a workout holds of each strap's raw signals, by strap and signal.
    func waveformSummaries(of workout: UUID) async throws(StoreError) -> [WaveformSummary]

    /// Samples matching the query.
    func samples(_ query: SampleQuery) async throws(StoreError) -> [QuantitySample]
    /// Statistics of `type` over `[from, to)`.
    func statistics(type: QuantityType, from: Date, to: Date, separateBySource: Bool) async throws(StoreError)
        -> Statistics
    /// Fixed-interval buckets from `anchor` over `[from, to)`.
    func statisticsCollection(
        type: QuantityType, from: Date, to: Date, anchor: Date, interval: StatisticsInterval
    ) async throws(StoreError) -> [StatisticsBucket]
    /// Additions and deletions of `type` since `anchor`, at most `limit` of them together.
    func changes(type: QuantityType, since anchor: Int64?, limit: Int) async throws(StoreError) -> SampleChanges
}

/// Which samples ``StoreBackend/samples(_:)`` returns.
public struct SampleQuery: Hashable, Sendable {
    /// The type.
    public var type: QuantityType
    /// Earliest start (inclusive).
    public var from: Date
    /// Latest start (exclusive).
    public var to: Date
    /// Only this sensor's.
    public var source: SampleSource?
    /// Only this workout's.
    public var workout: UUID?
    /// At most this many.
    public var limit: Int?
    /// Oldest first (else newest first).
    public var ascending: Bool

    /// A query; every filter but the type is optional.
    public init(
        type: QuantityType, from: Date = .distantPast, to: Date = .distantFuture, source: SampleSource? = nil,
        workout: UUID? = nil, limit: Int? = nil, ascending: Bool = true
    ) {
        self.type = type
        self.from = from
        self.to = to
        self.source = source
        self.workout = workout
        self.limit = limit
        self.ascending = ascending
    }
}

/// Which workouts ``StoreBackend/workouts(_:)`` returns, newest first.
public struct WorkoutQuery: Hashable, Sendable {
    /// Earliest start (inclusive).
    public var from: Date
    /// Latest start (exclusive): a page ends before the oldest start of the page before it.
    public var to: Date
    /// Only this activity's.
    public var activityType: WorkoutActivityType?
    /// Only this athlete's.
    public var athlete: String?
    /// At most this many (nil: all).
    public var limit: Int?

    /// A query; every filter is optional.
    public init(
        from: Date = .distantPast, to: Date = .distantFuture, activityType: WorkoutActivityType? = nil,
        athlete: String? = nil, limit: Int? = nil
    ) {
        self.from = from
        self.to = to
        self.activityType = activityType
        self.athlete = athlete
        self.limit = limit
    }
}
