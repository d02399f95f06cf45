public import Foundation
public import Samples
public import Sensors

/// A workout session: the state machine, the athlete's claim, and the builder it drives.
///
/// `startActivity` begins collection, `pause`/`resume` add events, `stopActivity` ends
/// collection and `end` releases the athlete. Events arrive on ``events()`` in a fixed order; a
/// failure is always reported before the state change it causes.
public actor WorkoutSession {
    /// The workout's configuration.
    public let configuration: WorkoutConfiguration
    /// The athlete, when known.
    public let profile: UserProfile?
    private let builder: LiveWorkoutBuilder
    private let clock: any WallClock
    private let registry: WorkoutSessionRegistry
    private var machine = WorkoutSessionStateMachine()
    private var holdsClaim = false
    private let broadcaster = EventBroadcaster<WorkoutSessionEvent>()

    /// Creates a session and its builder.
    public init(
        configuration: WorkoutConfiguration, profile: UserProfile? = nil, clock: any WallClock,
        registry: WorkoutSessionRegistry = .shared, sampleSink: (@Sendable ([QuantitySample]) -> Void)? = nil,
        id: UUID? = nil
    ) {
        self.configuration = configuration
        self.profile = profile
        self.clock = clock
        self.registry = registry
        self.builder = LiveWorkoutBuilder(
            configuration: configuration, profile: profile, clock: clock, sampleSink: sampleSink, id: id)
    }

    /// Continues a session recovered after a crash, in `state` (running or paused), with its builder.
    public init(
        recovering builder: LiveWorkoutBuilder, configuration: WorkoutConfiguration, profile: UserProfile?,
        state: WorkoutSessionState, clock: any WallClock, registry: WorkoutSessionRegistry = .shared
    ) throws(WorkoutSessionError) {
        self.configuration = configuration
        self.profile = profile
        self.clock = clock
        self.registry = registry
        self.builder = builder
        self.machine = WorkoutSessionStateMachine(state: state)
        try registry.claim(profile?.id ?? UserProfile.anonymousID)
        self.holdsClaim = true
    }

    /// The athlete key this session claims.
    public nonisolated var athlete: String { profile?.id ?? UserProfile.anonymousID }

    /// Session events from now on.
    public nonisolated func events() -> AsyncStream<WorkoutSessionEvent> { broadcaster.subscribe() }

    /// The current state.
    public var state: WorkoutSessionState { machine.state }

    /// The builder this session drives.
    public nonisolated func associatedWorkoutBuilder() -> LiveWorkoutBuilder { builder }

    /// Prepares: sensors may connect and warm up; nothing is recorded.
    public func prepare() throws(WorkoutSessionError) {
        let date = clock.now()
        try check(.prepare, at: date)
        try claim(at: date)
        emit(try machine.apply(.prepare), at: date)
    }

    /// Starts the activity and collection at `date` (default: now).
    public func startActivity(at date: Date? = nil) async throws(WorkoutSessionError) {
        let date = date ?? clock.now()
        try check(.start, at: date)
        try claim(at: date)
        try await builderCall { try await $0.beginCollection(at: date) }
        emit(try machine.apply(.start), at: date)
    }

    /// Pauses at `date`; the pause event may be backdated.
    public func pause(at date: Date? = nil) async throws(WorkoutSessionError) {
        let date = date ?? clock.now()
        try check(.pause, at: date)
        try await notBeforeLastPauseOrResume(date)
        let events = try await builderCall { try await $0.addEvents([WorkoutEvent(kind: .pause, date: date)]) }
        try accepted(events, at: date)
        emit(try machine.apply(.pause), at: date)
        for event in events { broadcaster.yield(.generated(event)) }
    }

    /// Resumes at `date`.
    public func resume(at date: Date? = nil) async throws(WorkoutSessionError) {
        let date = date ?? clock.now()
        try check(.resume, at: date)
        try await notBeforeLastPauseOrResume(date)
        let events = try await builderCall { try await $0.addEvents([WorkoutEvent(kind: .resume, date: date)]) }
        try accepted(events, at: date)
        emit(try machine.apply(.resume), at: date)
        for event in events { broadcaster.yield(.generated(event)) }
    }

    /// Adds a lap, segment or marker event.
    public func addEvent(_ event: WorkoutEvent) async throws(WorkoutSessionError) {
        guard machine.state == .running || machine.state == .paused else {
            throw .invalidTransition(from: machine.state, operation: .pause)
        }
        let events = try await builderCall { try await $0.addEvents([event]) }
        for event in events { broadcaster.yield(.generated(event)) }
    }

    /// Stops the activity and ends collection at `date`.
    public func stopActivity(at date: Date? = nil) async throws(WorkoutSessionError) {
        let date = date ?? clock.now()
        try check(.stop, at: date)
        try await builderCall { try await $0.endCollection(at: date) }
        emit(try machine.apply(.stop), at: date)
    }

    /// Ends the session (stopping it first if it runs); releases the athlete.
    public func end(at date: Date? = nil) async throws(WorkoutSessionError) {
        let date = date ?? clock.now()
        try check(.end, at: date)
        if machine.state == .running || machine.state == .paused {
            try await builderCall { try await $0.endCollection(at: date) }
        }
        emit(try machine.apply(.end), at: date)
        release()
    }

    /// Reports `error`, then ends the session: the failure comes before the state change.
    public func fail(with error: WorkoutSessionError, at date: Date? = nil) async {
        let date = date ?? clock.now()
        broadcaster.yield(.failed(error, date: date))
        guard machine.state != .ended else { return }
        if machine.state == .running || machine.state == .paused {
            try? await builder.endCollection(at: date)
        }
        if let transitions = try? machine.apply(.end) { emit(transitions, at: date) }
        release()
    }

    /// Begins a new activity (swim, bike, run; or warm-up, main set, cool-down).
    public func beginNewActivity(
        configuration: WorkoutConfiguration, at date: Date? = nil
    ) async throws(WorkoutSessionError) {
        let date = date ?? clock.now()
        guard machine.state == .running || machine.state == .paused else {
            throw .invalidTransition(from: machine.state, operation: .start)
        }
        let activity = try await builderCall { try await $0.beginActivity(configuration, at: date) }
        broadcaster.yield(.activityBegan(activity, date: date))
    }

    /// Ends the current activity.
    public func endCurrentActivity(at date: Date? = nil) async throws(WorkoutSessionError) {
        let date = date ?? clock.now()
        guard machine.state == .running || machine.state == .paused else {
            throw .invalidTransition(from: machine.state, operation: .stop)
        }
        let activity = try await builderCall { try await $0.endActivity(at: date) }
        broadcaster.yield(.activityEnded(activity, date: date))
    }

    // MARK: Helpers

    private func check(_ operation: WorkoutSessionOperation, at date: Date) throws(WorkoutSessionError) {
        if WorkoutSessionStateMachine.targets(from: machine.state, operation: operation).isEmpty {
            let error = WorkoutSessionError.invalidTransition(from: machine.state, operation: operation)
            broadcaster.yield(.failed(error, date: date))
            throw error
        }
    }

    /// A pause or resume may be backdated, but not before the last one: there it would change
    /// what came after it (a pause inside a finished pause is dropped, one before a resume moves
    /// the pause's start), and the session's state, which follows the last call, would no longer
    /// be the workout's. (The builder itself takes pauses added after the fact, as HealthKit's does.)
    private func notBeforeLastPauseOrResume(_ date: Date) async throws(WorkoutSessionError) {
        let last = await builder.events.last { $0.kind == .pause || $0.kind == .resume }
        guard let last, date < last.dateInterval.start else { return }
        try refuse(.pauseOrResumeOutOfOrder(date), at: date)
    }

    /// A pause or resume the builder did not take changes no state: the session and the
    /// workout's time stay one story.
    private func accepted(_ events: [WorkoutEvent], at date: Date) throws(WorkoutSessionError) {
        guard events.isEmpty else { return }
        try refuse(.pauseOrResumeOutOfOrder(date), at: date)
    }

    private func refuse(_ error: WorkoutBuilderError, at date: Date) throws(WorkoutSessionError) {
        let failure = WorkoutSessionError.builder(error)
        broadcaster.yield(.failed(failure, date: date))
        throw failure
    }

    private func claim(at date: Date) throws(WorkoutSessionError) {
        guard !holdsClaim else { return }
        do {
            try registry.claim(athlete)
        } catch {
            broadcaster.yield(.failed(error, date: date))
            throw error
        }
        holdsClaim = true
    }

    private func release() {
        if holdsClaim { registry.release(athlete) }
        holdsClaim = false
        broadcaster.finish()
    }

    private func emit(_ transitions: [WorkoutSessionTransition], at date: Date) {
        for transition in transitions {
            broadcaster.yield(.stateChanged(to: transition.to, from: transition.from, date: date))
        }
    }

    private func builderCall<T: Sendable>(
        _ body: (LiveWorkoutBuilder) async throws -> T
    ) async throws(WorkoutSessionError) -> T {
        do {
            return try await body(builder)
        } catch {
            // The builder throws only WorkoutBuilderError; anything else would be a bug upstream.
            let failure: WorkoutSessionError =
                (error as? WorkoutBuilderError).map { .builder($0) } ?? .dataSource("\(error)")
            broadcaster.yield(.failed(failure, date: clock.now()))
            throw failure
        }
    }
}
