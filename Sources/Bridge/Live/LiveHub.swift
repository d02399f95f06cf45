public import Foundation
import Synchronization
public import Wire

/// Where the live stream comes from: managers publish, API streams subscribe.
///
/// A late subscriber first gets the current state (``currentState`` is asked after subscribing, so
/// nothing between the snapshot and the first live message is lost; a duplicate is harmless).
public final class LiveHub: Sendable {
    private struct State {
        private(set) var subscribers: [ObjectIdentifier: Entry] = [:]
        var finished = false
        /// Per kind (by ``LiveHub/bit(_:)``), how many subscribers take it: a kind nobody takes
        /// (a line per sample, while no client asked for samples) is refused without a look at
        /// any subscriber.
        private var takers = [Int](repeating: 0, count: LiveMessageKind.allCases.count)

        /// The kinds someone takes, one bit each.
        var takenKinds: UInt32 {
            takers.indices.reduce(0) { mask, index in takers[index] > 0 ? mask | 1 << UInt32(index) : mask }
        }

        mutating func add(_ entry: Entry, for id: ObjectIdentifier) {
            if let old = subscribers.updateValue(entry, forKey: id) { count(old, by: -1) }
            count(entry, by: 1)
        }

        mutating func remove(_ id: ObjectIdentifier) {
            if let old = subscribers.removeValue(forKey: id) { count(old, by: -1) }
        }

        mutating func removeAll() -> [LiveSubscription] {
            defer {
                subscribers.removeAll()
                takers = takers.map { _ in 0 }
            }
            return subscribers.values.compactMap(\.subscription)
        }

        private mutating func count(_ entry: Entry, by step: Int) {
            for index in takers.indices where entry.kinds & (1 << index) != 0 { takers[index] += step }
        }

        /// Whether anyone takes `session`'s figures: a reader of `figures` following every
        /// session or this one (a message with no sensor, so none following a strap).
        func wantsFigures(of session: UUID) -> Bool {
            let bit = LiveHub.bit(.figures)
            guard takers[bit.trailingZeroBitCount] > 0 else { return false }
            return subscribers.values.contains { entry in
                entry.kinds & bit != 0 && entry.upperSensor == nil && entry.subscription != nil
                    && (entry.session ?? session) == session
            }
        }

        /// The readers of `figures`: those following every session, and those following one of
        /// `sessions` (by the session they follow).
        func figuresReaders(of sessions: Set<UUID>) -> (all: [LiveSubscription], one: [UUID: [LiveSubscription]]) {
            let bit = LiveHub.bit(.figures)
            guard takers[bit.trailingZeroBitCount] > 0 else { return ([], [:]) }
            var all: [LiveSubscription] = []
            var one: [UUID: [LiveSubscription]] = [:]
            for entry in subscribers.values where entry.kinds & bit != 0 && entry.upperSensor == nil {
                guard let subscription = entry.subscription else { continue }
                if let session = entry.session {
                    if sessions.contains(session) { one[session, default: []].append(subscription) }
                } else {
                    all.append(subscription)
                }
            }
            return (all, one)
        }

        /// The live subscribers whose filters want a message: judged on the entries' copies of
        /// the filters, so a message nobody wants costs no reference loads and no allocation.
        func wanting(kind: LiveMessageKind, session: UUID?, sensor: String?) -> [LiveSubscription] {
            let bit = LiveHub.bit(kind)
            guard takers[bit.trailingZeroBitCount] > 0 else { return [] }
            var upperSensor: String??
            var found: [LiveSubscription] = []
            for entry in subscribers.values where entry.kinds & bit != 0 {
                if let filter = entry.session, filter != session { continue }
                if let filter = entry.upperSensor {
                    if upperSensor == nil { upperSensor = .some(sensor?.uppercased()) }
                    guard upperSensor! == filter else { continue }
                }
                if let subscription = entry.subscription { found.append(subscription) }
            }
            return found
        }
    }

    /// A subscriber, held weakly, with its filters.
    private struct Entry {
        weak var subscription: LiveSubscription?
        let session: UUID?
        /// The sensor filter, upper-cased once.
        let upperSensor: String?
        /// The kinds taken, one bit each (``LiveHub/bit(_:)``).
        let kinds: UInt32
    }

    /// A kind's bit in a subscriber's mask.
    static func bit(_ kind: LiveMessageKind) -> UInt32 { 1 << UInt32(kind.ordinal) }

    /// The mask of `kinds` (nil: every kind but the raw signals, which are taken only by name).
    static func mask(_ kinds: Set<LiveMessageKind>?) -> UInt32 {
        (kinds ?? LiveMessageKind.everyKind).reduce(0) { $0 | bit($1) }
    }

    private let state = Mutex(State())

    /// ``State/takenKinds``, read without the lock: a sample's line nobody takes is refused
    /// without contending with the writers for it (stored under the lock, after every change).
    private let takenKinds = Atomic<UInt32>(0)

    /// A hub with no subscribers.
    public init() {}

    /// Bytes of messages that may wait for one slow client (4 MiB); beyond it its oldest are
    /// dropped and it is told, so a stuck browser tab cannot make the daemon grow without bound.
    public static let clientByteBudget = 4 << 20

    /// Publishes a message to every subscriber whose filters want it.
    public func publish(_ message: LiveMessage) {
        guard takenKinds.load(ordering: .relaxed) & Self.bit(message.kind) != 0 else { return }
        let subscribers = state.withLock {
            $0.wanting(kind: message.kind, session: message.session, sensor: message.sensor)
        }
        for subscriber in subscribers { subscriber.offer(message) }
    }

    /// Publishes sessions' figures (their `session` messages) as `figures` messages: one holding
    /// them all to each reader following every session, and one holding its session's to each
    /// reader following one. A class of 50 is one message a second per board, not 50.
    public func publishFigures(_ parts: [LiveMessage]) {
        guard !parts.isEmpty, takenKinds.load(ordering: .relaxed) & Self.bit(.figures) != 0 else { return }
        let (all, one) = state.withLock { $0.figuresReaders(of: Set(parts.compactMap(\.session))) }
        if !all.isEmpty {
            let message = LiveMessage.figures(parts)
            for subscriber in all { subscriber.offer(message) }
        }
        for part in parts {
            guard let session = part.session, let readers = one[session] else { continue }
            let message = LiveMessage.figures([part], session: session)
            for subscriber in readers { subscriber.offer(message) }
        }
    }

    /// Whether `session`'s figures have a reader: when none has, they are not worked out.
    public func wantsFigures(of session: UUID) -> Bool { state.withLock { $0.wantsFigures(of: session) } }

    /// Publishes a message whose text is made only when a subscriber's filters want it: a line per
    /// sample costs an encoding, not paid while no client reads samples.
    public func publish(kind: LiveMessageKind, session: UUID?, sensor: String?, json: () -> String) {
        guard takenKinds.load(ordering: .relaxed) & Self.bit(kind) != 0 else { return }
        let subscribers = state.withLock { $0.wanting(kind: kind, session: session, sensor: sensor) }
        guard !subscribers.isEmpty else { return }
        let message = LiveMessage(kind: kind, session: session, sensor: sensor, json: json())
        for subscriber in subscribers { subscriber.offer(message) }
    }

    /// A subscription to the messages for `session` and `sensor` (nil: all) from now on.
    /// `kinds` (nil: all) keeps a reader that wants a few kinds from being handed every frame;
    /// one that follows sessions' changes takes `session` without `figures`.
    public func subscribe(
        session: UUID? = nil, sensor: String? = nil, kinds: Set<LiveMessageKind>? = nil,
        byteBudget: Int = LiveHub.clientByteBudget
    ) -> LiveSubscription {
        let box = Mutex<ObjectIdentifier?>(nil)
        let subscription = LiveSubscription(session: session, sensor: sensor, kinds: kinds, byteBudget: byteBudget) {
            [weak self] in
            guard let id = box.withLock({ $0 }), let self else { return }
            self.state.withLock { state in
                state.remove(id)
                self.takenKinds.store(state.takenKinds, ordering: .relaxed)
            }
        }
        let id = ObjectIdentifier(subscription)
        box.withLock { $0 = id }
        let finished = state.withLock { state in
            if !state.finished {
                state.add(
                    Entry(
                        subscription: subscription, session: session, upperSensor: sensor?.uppercased(),
                        kinds: Self.mask(kinds)),
                    for: id)
                takenKinds.store(state.takenKinds, ordering: .relaxed)
            }
            return state.finished
        }
        if finished { subscription.finish() }
        return subscription
    }

    /// How many streams are attached.
    public var subscriberCount: Int { state.withLock { $0.subscribers.values.filter { $0.subscription != nil }.count } }

    /// Ends every subscription (shutdown).
    public func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { takenKinds.store(0, ordering: .relaxed) }
            return state.removeAll()
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
