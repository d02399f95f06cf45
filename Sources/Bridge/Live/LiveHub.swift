import Foundation
import Sensors

/// Where the live stream comes from: managers publish, API streams subscribe.
///
/// A late subscriber first gets the current state (``currentState`` is asked after subscribing, so
/// nothing between the snapshot and the first live message is lost; a duplicate is harmless).
public final class LiveHub: Sendable {
    private let broadcaster = EventBroadcaster<LiveMessage>()

    /// Creates it from its parts.
    public init() {}

    /// Publishes a message to every subscriber.
    public func publish(_ message: LiveMessage) { broadcaster.yield(message) }

    /// How many messages may wait for one slow client; beyond that its oldest are dropped, so a
    /// stuck browser tab cannot make the daemon grow without bound.
    public static let clientBacklog = 10_000

    /// A subscription to every message from now on.
    public func subscribe() -> AsyncStream<LiveMessage> {
        broadcaster.subscribe(bufferingPolicy: .bufferingNewest(Self.clientBacklog))
    }

    /// How many streams are attached.
    public var subscriberCount: Int { broadcaster.subscriberCount }

    /// Ends every subscription (shutdown).
    public func finish() { broadcaster.finish() }
}
