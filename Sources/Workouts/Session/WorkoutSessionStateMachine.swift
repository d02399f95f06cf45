/// The states of a workout session.
public enum WorkoutSessionState: String, Hashable, Sendable, Codable, CaseIterable {
    /// Created, nothing done yet.
    case notStarted
    /// Sensors connecting and warming up; nothing is recorded.
    case prepared
    /// Recording.
    case running
    /// Recording paused.
    case paused
    /// The activity stopped; the session can only end.
    case stopped
    /// Over for good.
    case ended
}

/// The operations that move a session between states.
public enum WorkoutSessionOperation: String, Hashable, Sendable, CaseIterable {
    /// `prepare()`.
    case prepare
    /// `startActivity(at:)`.
    case start
    /// `pause(at:)`.
    case pause
    /// `resume(at:)`.
    case resume
    /// `stopActivity(at:)`.
    case stop
    /// `end(at:)`.
    case end
}

/// One state change.
public struct WorkoutSessionTransition: Hashable, Sendable {
    /// The state before.
    public var from: WorkoutSessionState
    /// The state after.
    public var to: WorkoutSessionState

    /// Creates a transition.
    public init(from: WorkoutSessionState, to: WorkoutSessionState) {
        self.from = from
        self.to = to
    }
}

/// The session's states and legal transitions as a pure value: no I/O, no time, no async.
///
/// notStarted → prepared → running ⇄ paused → stopped → ended. `start` works from notStarted or
/// prepared; `stop` from running or paused; `end` from anywhere but ended, passing through
/// stopped when the activity is still running or paused. Everything else is an
/// ``WorkoutSessionError/invalidTransition(from:operation:)``: stopped and ended sessions never restart.
public struct WorkoutSessionStateMachine: Hashable, Sendable {
    /// The current state.
    public private(set) var state: WorkoutSessionState = .notStarted

    /// Creates a machine in `notStarted`.
    public init() {}

    /// Creates a machine in `state` (for recovery).
    public init(state: WorkoutSessionState) { self.state = state }

    /// Applies `operation`; returns the transitions it makes, in order.
    public mutating func apply(
        _ operation: WorkoutSessionOperation
    ) throws(WorkoutSessionError) -> [WorkoutSessionTransition] {
        let targets = Self.targets(from: state, operation: operation)
        guard !targets.isEmpty else { throw .invalidTransition(from: state, operation: operation) }
        var transitions: [WorkoutSessionTransition] = []
        for target in targets {
            transitions.append(WorkoutSessionTransition(from: state, to: target))
            state = target
        }
        return transitions
    }

    /// The states `operation` passes through from `state`; empty when it is illegal.
    public static func targets(
        from state: WorkoutSessionState, operation: WorkoutSessionOperation
    ) -> [WorkoutSessionState] {
        switch (state, operation) {
        case (.notStarted, .prepare): [.prepared]
        case (.notStarted, .start), (.prepared, .start): [.running]
        case (.running, .pause): [.paused]
        case (.paused, .resume): [.running]
        case (.running, .stop), (.paused, .stop): [.stopped]
        case (.running, .end), (.paused, .end): [.stopped, .ended]
        case (.notStarted, .end), (.prepared, .end), (.stopped, .end): [.ended]
        default: []
        }
    }
}
