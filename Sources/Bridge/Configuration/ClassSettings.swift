public import Wire
public import Workouts

/// `[class]`: a class session that straps join by themselves.
public struct ClassSettings: Sendable, Equatable {
    /// Whether a configured strap seen in range joins the running class under its athlete.
    public var autoJoin = false
    /// Seconds out of range after which a strap's athlete leaves the class (its workout saved).
    public var leaveAfter: Double = 300
    /// The activity of a class whose start request names none.
    public var activity: WorkoutActivityType = .hiit
    /// A strap without a link counts as in range while its broadcast was heard this recently (s).
    public var heardWithin: Double = 10
    /// What signs a configured strap in: its link (the default) or its broadcast too.
    public var joinVia: ClassJoinPath = .link

    public init() {}
}
