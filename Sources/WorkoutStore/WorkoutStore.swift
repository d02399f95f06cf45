public import Foundation
public import Samples
public import Sensors
public import Workouts

/// hrbridge's health store: workouts, samples, hourly rollups, the plan schedule and the recovery
/// journal, kept by a ``StoreBackend`` (SQLite by default, or a PostgreSQL server).
///
/// Every method is async (never blocking Swift concurrency's threads) and throws a ``StoreError``
/// naming what went wrong.
public final class WorkoutStore: Sendable {
    /// Where the data lives.
    public let backend: any StoreBackend

    /// A store kept by `backend`.
    public init(backend: any StoreBackend) {
        self.backend = backend
        self.sampleWrites = SampleWriteGroup(backend: backend)
    }

    /// Appends that meet go in one transaction.
    private let sampleWrites: SampleWriteGroup

    /// Transactions the sample appends took so far (appends that meet share one).
    public var sampleTransactions: Int { sampleWrites.transactions }

    /// Holds sample appends back until ``releaseSampleAppends()`` (tests: a group formed on purpose).
    func holdSampleAppends() { sampleWrites.hold() }

    /// Writes the appends held back, together.
    func releaseSampleAppends() { sampleWrites.release() }

    /// Returns once `count` sample appends wait.
    func waitUntilSampleAppendsWait(_ count: Int) async { await sampleWrites.waitUntilWaiting(count) }

    /// Opens (or creates) the SQLite store at `path` and migrates it; a guest opens an existing
    /// store read-only and never changes the file.
    public convenience init(path: String = WorkoutStore.defaultPath, guest: Bool = false) throws(StoreError) {
        self.init(backend: try SQLiteStore(path: path, guest: guest))
    }

    /// `$XDG_DATA_HOME/hrbridge/store.sqlite` (or `~/.local/share/hrbridge/store.sqlite`).
    public static var defaultPath: String { SQLiteStore.defaultPath }

    /// Upcoming, not completed entries the schedule holds at most (WorkoutKit syncs 15).
    public static let maximumScheduledPlans = 15

    /// The recording lock's file (see ``StoreBackend/lockPath``).
    public var lockPath: String { backend.lockPath }
    /// Where spill files go when no RAM-backed directory is at hand.
    public var spillDirectory: String { backend.spillDirectory }
    /// Where the store is, for messages (a server URL is shown without its password).
    public var location: String { backend.location }
    /// Whether this is a guest's view: reads work, every write throws ``StoreError/notPermissibleForGuestUser``.
    public var isGuest: Bool { backend.isGuest }
    /// The SQLite backend, when that is where the data lives.
    public var sqlite: SQLiteStore? { backend as? SQLiteStore }

    /// Ends the store's connections once nothing writes any more (``StoreBackend/close()``).
    public func close() async { await backend.close() }

    /// The schema migrations applied, in order.
    public func appliedMigrations() async throws(StoreError) -> [String] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.appliedMigrations() }
    }

    // MARK: Sources and samples

    /// Records a sensor's model and firmware (from Device Information).
    public func updateSource(_ source: SampleSource, model: String?, firmware: String?) async throws(StoreError) {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.updateSource(source, model: model, firmware: firmware)
        }
    }

    /// A sensor's model and firmware, when known.
    public func sourceDetails(_ source: SampleSource) async throws(StoreError) -> (model: String?, firmware: String?) {
        try await uncancelled { () async throws(StoreError) in try await self.backend.sourceDetails(source) }
    }

    /// Every sensor that contributed samples.
    public func sources() async throws(StoreError) -> [SampleSource] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.sources() }
    }

    /// Stores samples, in one transaction, attributed to `workout` when given; samples stored
    /// already are skipped. Returns how many were new.
    ///
    /// Appends that arrive while another is being written share the next transaction (every
    /// session's streamer flushes on the same second); when that transaction is refused, each
    /// goes again alone, so one workout's refusal is only its own.
    @discardableResult
    public func append(_ samples: [QuantitySample], workout: UUID?) async throws(StoreError) -> Int {
        guard !samples.isEmpty else { return 0 }
        return try await sampleWrites.append(SampleBatch(workout: workout, samples: samples))
    }

    /// Samples of `type` starting in `[from, to)`, optionally from one source and one workout.
    public func samples(
        type: QuantityType, from: Date = .distantPast, to: Date = .distantFuture, source: SampleSource? = nil,
        workout: UUID? = nil, limit: Int? = nil, ascending: Bool = true
    ) async throws(StoreError) -> [QuantitySample] {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.samples(
                SampleQuery(
                    type: type, from: from, to: to, source: source, workout: workout, limit: limit, ascending: ascending
                ))
        }
    }

    /// Statistics of `type` over `[from, to)`: discrete → min, max, average, most recent; cumulative →
    /// sum; always the span covered; with `separateBySource`, per source too.
    public func statistics(
        type: QuantityType, from: Date = .distantPast, to: Date = .distantFuture, separateBySource: Bool = false
    ) async throws(StoreError) -> Statistics {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.statistics(type: type, from: from, to: to, separateBySource: separateBySource)
        }
    }

    /// Fixed-interval buckets from `anchor` over `[from, to)`; hour-aligned hour, day and week
    /// buckets read the hourly rollups.
    public func statisticsCollection(
        type: QuantityType, from: Date, to: Date, anchor: Date, interval: StatisticsInterval
    ) async throws(StoreError) -> [StatisticsBucket] {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.statisticsCollection(
                type: type, from: from, to: to, anchor: anchor, interval: interval)
        }
    }

    /// Additions and deletions of `type` since `anchor` (nil: from the beginning), at most `limit`
    /// of them together, the first in the store's order (none, the anchor as it was, when `limit`
    /// is not positive). The returned anchor never passes a change not returned, on either
    /// backend, however writes interleave.
    public func changes(type: QuantityType, since anchor: Int64?, limit: Int = 10_000) async throws(StoreError)
        -> SampleChanges
    {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.changes(type: type, since: anchor, limit: limit)
        }
    }

    // MARK: Raw signals

    /// Stores raw-signal frames (ECG, acceleration) of a workout, in one transaction; frames
    /// stored already are skipped. Returns how many were new.
    @discardableResult
    public func append(waveforms: [SensorWaveform], workout: UUID) async throws(StoreError) -> Int {
        guard !waveforms.isEmpty else { return 0 }
        return try await uncancelled { () async throws(StoreError) in
            try await self.backend.append(waveforms: waveforms, workout: workout)
        }
    }

    /// A workout's raw-signal frames, in time order, a page at a time.
    public func waveforms(_ query: WaveformQuery) async throws(StoreError) -> [SensorWaveform] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.waveforms(query) }
    }

    /// Every frame of one strap's signal in a workout, page by page, in time order.
    public func forEachWaveformPage(
        workout: UUID, sensor: SensorIdentity, kind: WaveformKind, pageSize: Int = 4_096,
        _ body: ([SensorWaveform]) async throws -> Void
    ) async throws {
        var after: Date?
        while true {
            let page = try await waveforms(
                WaveformQuery(workout: workout, sensor: sensor, kind: kind, after: after, limit: pageSize))
            guard let last = page.last else { return }
            try await body(page)
            after = last.start
            if page.count < min(max(pageSize, 1), WaveformQuery.maximumLimit) { return }
        }
    }

    /// What a workout holds of each strap's raw signals, by strap and signal.
    public func waveformSummaries(of workout: UUID) async throws(StoreError) -> [WaveformSummary] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.waveformSummaries(of: workout) }
            .sorted {
                ($0.sensor.address, $0.sensor.adapter, $0.kind) < ($1.sensor.address, $1.sensor.adapter, $1.kind)
            }
    }

    // MARK: Workouts and the recovery journal

    /// Journals a session that starts collecting: after a crash, ``activeSessions()`` finds it.
    public func beginWorkout(_ record: ActiveSessionRecord) async throws(StoreError) {
        try await uncancelled { () async throws(StoreError) in try await self.backend.beginWorkout(record) }
    }

    /// Updates the journal (state, zones, primary sources) of an active session.
    public func updateJournal(_ record: ActiveSessionRecord) async throws(StoreError) {
        try await uncancelled { () async throws(StoreError) in try await self.backend.updateJournal(record) }
    }

    /// Every session that was active when the process stopped (one per athlete at most).
    public func activeSessions() async throws(StoreError) -> [ActiveSessionRecord] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.activeSessions() }
    }

    /// Journal rows that cannot be read back (a foreign or damaged row): one line each naming the
    /// workout and what is wrong, so a recovery can report them rather than skip them silently.
    public func unreadableJournalRows() async throws(StoreError) -> [String] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.unreadableJournalRows() }
    }

    /// Stores an event of an active workout as it happens. Writing it again adds nothing (a
    /// write retried after its reply was lost): an event is its kind, interval and metadata.
    public func append(event: WorkoutEvent, workout: UUID) async throws(StoreError) {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.append(event: event, workout: workout)
        }
    }

    /// Stores an activity (begun or ended) of an active workout.
    public func upsert(activity: WorkoutActivity, workout: UUID) async throws(StoreError) {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.upsert(activity: activity, workout: workout)
        }
    }

    /// Stores DFA α1 windows of an active workout as they come, so a long workout's series waits
    /// in the store rather than in memory (a window sent again replaces itself).
    public func upsert(alpha1Windows: [HRVWindow], workout: UUID) async throws(StoreError) {
        guard !alpha1Windows.isEmpty else { return }
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.upsert(alpha1Windows: alpha1Windows, workout: workout)
        }
    }

    /// The DFA α1 windows stored for an active workout, in time order (none once it finished:
    /// the finished workout's summary holds them).
    public func alpha1Windows(of workout: UUID) async throws(StoreError) -> [HRVWindow] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.alpha1Windows(of: workout) }
    }

    /// The events stored for a workout, in date order.
    public func events(of workout: UUID) async throws(StoreError) -> [WorkoutEvent] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.events(of: workout) }
    }

    /// The activities stored for a workout (configuration, start, end), in order.
    public func activityIntervals(of workout: UUID) async throws(StoreError) -> [(WorkoutConfiguration, Date, Date?)] {
        try await uncancelled { () async throws(StoreError) in try await self.backend.activityIntervals(of: workout) }
    }

    /// Stores the finished workout (summary, activities, zones) and closes its journal.
    public func finish(_ workout: Workout) async throws(StoreError) {
        try await uncancelled { () async throws(StoreError) in try await self.backend.finish(workout) }
    }

    /// Throws a workout away with its samples (a discarded or abandoned session).
    public func deleteWorkout(_ id: UUID) async throws(StoreError) {
        try await uncancelled { () async throws(StoreError) in try await self.backend.deleteWorkout(id) }
    }

    /// Workouts starting within `[from, to)`, optionally of one activity type, newest first.
    public func workouts(
        from: Date = .distantPast, to: Date = .distantFuture, activityType: WorkoutActivityType? = nil,
        athlete: String? = nil, limit: Int? = nil
    ) async throws(StoreError) -> [StoredWorkout] {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.workouts(
                WorkoutQuery(from: from, to: to, activityType: activityType, athlete: athlete, limit: limit))
        }
    }

    /// One workout.
    public func workout(_ id: UUID) async throws(StoreError) -> StoredWorkout {
        try await uncancelled { () async throws(StoreError) in try await self.backend.workout(id) }
    }

    // MARK: Schedule

    /// Schedules a plan; refuses a 16th open entry from the start of `now`'s day on (one dated
    /// earlier today is still today's to do, and counts: else any number could be added).
    public func schedule(
        name: String, plan: Data, at date: Date, now: Date = Date(), calendar: Calendar = .current
    ) async throws(StoreError) -> ScheduledPlan {
        let entry = ScheduledPlan(id: UUID(), name: name, plan: plan, date: date)
        let today = calendar.startOfDay(for: now)
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.insertScheduled(entry, limit: Self.maximumScheduledPlans, now: today)
        }
        return entry
    }

    /// Entries from 7 days before `now` to 7 days after, by date.
    public func scheduledPlans(around now: Date = Date()) async throws(StoreError) -> [ScheduledPlan] {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.scheduledPlans(
                from: now.addingTimeInterval(-7 * 86_400), to: now.addingTimeInterval(7 * 86_400))
        }
    }

    /// What `plan list` shows: the last 7 days' entries and every later one, by date, so each
    /// entry the limit of upcoming ones counts can be seen (and removed).
    public func scheduledPlans(since now: Date) async throws(StoreError) -> [ScheduledPlan] {
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.scheduledPlans(from: now.addingTimeInterval(-7 * 86_400), to: .distantFuture)
        }
    }

    /// Removes a schedule entry; false when there is none with that id.
    public func unschedule(_ id: UUID) async throws(StoreError) -> Bool {
        try await uncancelled { () async throws(StoreError) in try await self.backend.deleteScheduled(id) }
    }

    /// Marks the open entry of this plan nearest to `date` (within the window) complete, with the
    /// workout that ran it.
    @discardableResult
    public func completeScheduledPlan(plan: Data, workout: UUID, at date: Date) async throws(StoreError)
        -> ScheduledPlan?
    {
        let candidates = try await scheduledPlans(around: date).filter { $0.completedAt == nil && $0.plan == plan }
        guard
            var entry = candidates.min(by: {
                abs($0.date.timeIntervalSince(date)) < abs($1.date.timeIntervalSince(date))
            })
        else { return nil }
        let id = entry.id
        try await uncancelled { () async throws(StoreError) in
            try await self.backend.markScheduled(id, completedAt: date, workout: workout)
        }
        entry.completedAt = date
        entry.workoutID = workout
        return entry
    }

    /// Runs a backend call in a task of its own: a write that began ends whole, even when the
    /// caller's task is cancelled (a session stopping itself from its own plan task, a shutdown).
    private func uncancelled<T: Sendable>(_ call: @escaping @Sendable () async throws(StoreError) -> T)
        async throws(StoreError) -> T
    {
        let task = Task { () async -> Result<T, StoreError> in
            do throws(StoreError) {
                return .success(try await call())
            } catch {
                return .failure(error)
            }
        }
        return try await task.value.get()
    }
}
