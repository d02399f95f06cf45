/// What waits while the broker is away: bounded, in publish order.
///
/// Live values (QoS 0) are only worth their latest value: a newer one for the same topic replaces
/// the waiting one, and beyond ``liveLimit`` the oldest is dropped. Events and configuration
/// (QoS 1) are kept, up to ``eventLimit`` (beyond it the oldest go, counted: a broker away for
/// days must not grow the daemon without bound).
public struct MQTTOutbox: Sendable {
    private struct Entry: Sendable {
        var sequence: UInt64
        var message: MQTTMessage
    }

    /// The most live values that wait.
    public let liveLimit: Int
    /// The most events that wait.
    public let eventLimit: Int
    private var live: [Entry] = []
    private var liveByTopic: [String: UInt64] = [:]
    private var events: [Entry] = []
    private var eventHead = 0
    private var nextSequence: UInt64 = 0
    /// Live values dropped (replaced by a newer one, or beyond the limit) since creation.
    public private(set) var droppedLive = 0
    /// Events dropped beyond the limit since creation.
    public private(set) var droppedEvents = 0

    public init(liveLimit: Int = 1000, eventLimit: Int = 10_000) {
        self.liveLimit = max(1, liveLimit)
        self.eventLimit = max(1, eventLimit)
    }

    /// How many messages wait.
    public var count: Int { live.count + events.count - eventHead }

    /// Whether nothing waits.
    public var isEmpty: Bool { count == 0 }

    /// Adds a message to send once the broker is back.
    public mutating func append(_ message: MQTTMessage) {
        nextSequence += 1
        let entry = Entry(sequence: nextSequence, message: message)
        if message.qos == .atLeastOnce {
            events.append(entry)
            if events.count - eventHead > eventLimit {
                eventHead += 1
                droppedEvents += 1
            }
            compactEvents()
            return
        }
        if liveByTopic[message.topic] != nil {
            live.removeAll { $0.message.topic == message.topic }
            droppedLive += 1
        }
        live.append(entry)
        liveByTopic[message.topic] = entry.sequence
        if live.count > liveLimit {
            let oldest = live.removeFirst()
            liveByTopic[oldest.message.topic] = nil
            droppedLive += 1
        }
    }

    /// Everything waiting, oldest first, leaving the outbox empty.
    public mutating func drain() -> [MQTTMessage] {
        var merged: [Entry] = []
        merged.reserveCapacity(count)
        var liveIndex = 0
        var eventIndex = eventHead
        while liveIndex < live.count || eventIndex < events.count {
            if eventIndex == events.count
                || (liveIndex < live.count && live[liveIndex].sequence < events[eventIndex].sequence)
            {
                merged.append(live[liveIndex])
                liveIndex += 1
            } else {
                merged.append(events[eventIndex])
                eventIndex += 1
            }
        }
        live.removeAll()
        liveByTopic.removeAll()
        events.removeAll()
        eventHead = 0
        return merged.map(\.message)
    }

    /// Drops the dead prefix of `events` once it is most of the array.
    private mutating func compactEvents() {
        if eventHead > 1024 && eventHead * 2 > events.count {
            events.removeFirst(eventHead)
            eventHead = 0
        }
    }
}
