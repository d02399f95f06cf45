import Foundation

/// What a round of ``FiguresPublisher`` asks of a session (``BridgeSession``).
protocol FiguresSource: AnyObject, Sendable {
    /// The session's id.
    nonisolated var id: UUID { get }
    /// Whether a round should work out its figures (a reader takes them, or they are news).
    nonisolated var figuresWanted: Bool { get }
    /// Its figures now, with the count of state changes it had published before working them out
    /// (``FiguresPublisher/changeCount(of:)``); nil when none go out in this round.
    func figures() async -> (figures: LiveMessage, changes: Int)?
}
