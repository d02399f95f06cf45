public import Logging
import Synchronization

/// A log handler that keeps every event logged through it (every level), for a test to read:
/// `Logger(label: "test") { _ in records }`.
public final class LogRecords: LogHandler, Sendable {
    /// One event: level, message and metadata as text.
    public struct Event: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let kept = Mutex<[Event]>([])
    private let settings = Mutex<(metadata: Logger.Metadata, level: Logger.Level)>(([:], .trace))

    public init() {}

    /// Every event so far.
    public var events: [Event] { kept.withLock { $0 } }
    /// Every message so far.
    public var messages: [String] { events.map(\.message) }

    public var metadata: Logger.Metadata {
        get { settings.withLock { $0.metadata } }
        set { settings.withLock { $0.metadata = newValue } }
    }

    public var logLevel: Logger.Level {
        get { settings.withLock { $0.level } }
        set { settings.withLock { $0.level = newValue } }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let record = Event(
            level: event.level, message: event.message.description,
            metadata: (event.metadata ?? [:]).mapValues { "\($0)" })
        kept.withLock { $0.append(record) }
    }
}
