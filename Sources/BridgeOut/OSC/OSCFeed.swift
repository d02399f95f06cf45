public import FoundationEssentials
import GATT

/// Decides what OSC to send and when: facts about the source go in with their times, timed
/// messages come out, and ``nextDue`` says when the feed must be woken next (``tick(now:)``).
///
/// Pure: no clock, no socket. The runner (``OSCOutput``) sleeps on its clock until ``nextDue``
/// and sends what the feed returns, at once.
///
/// - Values: the preset's parameters go out on every reading and state change, and again every
///   ``Configuration/resendInterval`` (VRChat keeps the last value, but an avatar loaded later,
///   or a datagram lost, needs it again).
/// - Beats: each RR interval is one beat. A frame's last RR ends at its receipt time and earlier
///   ones before it; each beat is played ``Configuration/beatDelay`` later, so a frame's beats
///   keep their own spacing instead of bunching at the frame's arrival. A beat raises `beat`
///   for ``Configuration/beatPulse`` and flips `beat_toggle`. Beats never leave the order the
///   heart made them in, each fires once, one already due fires at once, and no RR means no beat.
/// - Drop: `connected` false, pending beats dropped (a raised pulse falls at once), the heart
///   rate held or 0 (``Configuration/onDrop``); beats of a frame from before the drop never fire.
/// - Chatbox: optional, at most every ``OSCChatbox/every``, only while a heart rate arrives.
public struct OSCFeed: Sendable {
    /// How the feed behaves.
    public struct Configuration: Hashable, Sendable {
        /// The parameters to send.
        public var preset: OSCPreset
        /// The heart rate that is 0 in `percent`.
        public var minHeartRate: Int
        /// The heart rate that is 1 in `percent`.
        public var maxHeartRate: Int
        /// How long `beat` stays true at each beat.
        public var beatPulse: Duration
        /// How long after its own time a beat is played: the wait for the frame that reports it
        /// (straps notify about once a second). Zero plays each frame's beats when it arrives.
        public var beatDelay: Duration
        /// The longest time between two sends of the values.
        public var resendInterval: Duration
        /// What the heart rate shows while the source is dropped.
        public var onDrop: OSCDropBehaviour
        /// The chatbox line, when wanted.
        public var chatbox: OSCChatbox?

        /// A configuration; the defaults are the daemon's.
        public init(
            preset: OSCPreset = .hrtovrchat, minHeartRate: Int = 40, maxHeartRate: Int = 200,
            beatPulse: Duration = .milliseconds(100), beatDelay: Duration = .seconds(1),
            resendInterval: Duration = .seconds(1), onDrop: OSCDropBehaviour = .zero, chatbox: OSCChatbox? = nil
        ) {
            self.preset = preset
            self.minHeartRate = minHeartRate
            self.maxHeartRate = maxHeartRate
            self.beatPulse = beatPulse
            self.beatDelay = beatDelay
            self.resendInterval = resendInterval
            self.onDrop = onDrop
            self.chatbox = chatbox
        }
    }

    /// What is due, in the order of equal due times: a pulse falls before the next beat rises,
    /// and values and chatbox follow the beats of the same instant.
    private enum Work: Int, Comparable {
        case pulseEnd, beat, values, chatbox

        static func < (lhs: Work, rhs: Work) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The configuration.
    public let configuration: Configuration
    private let sendsBeats: Bool
    /// The latest time the feed was told of.
    private var now: Date?
    /// Whether any fact arrived (nothing is sent before).
    private var started = false
    private var finished = false
    private var connected = false
    private var readingSinceConnect = false
    private var heartRate = 0
    private var contact = SensorContact.notSupported
    private var rrMilliseconds: Int?
    private var battery: Int?
    private var toggle = false
    /// When the beats to play are due, ascending.
    private var beatsDue: [Date] = []
    /// The latest beat scheduled: a later frame's beats never go before it.
    private var lastBeatDue: Date?
    /// When the raised pulse falls.
    private var pulseEndsAt: Date?
    /// Beats from before this are never played (their frame was older than the drop).
    private var droppedAt: Date?
    private var valuesDue: Date?
    /// The chatbox is not sent before this (nil: it may be sent now).
    private var chatboxAllowedFrom: Date?

    /// A feed that has sent nothing yet.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        sendsBeats = configuration.preset.sendsBeats
    }

    /// When the feed must be woken with ``tick(now:)``; nil when nothing will be due.
    public var nextDue: Date? { nextWork().map(\.due) }

    /// Sends what is due by `now`.
    public mutating func tick(now: Date) -> [OSCTimedMessage] {
        var output: [OSCTimedMessage] = []
        advance(to: moveNow(to: now), into: &output)
        return output
    }

    /// Takes in a fact; returns what to send now (what was due before it first).
    public mutating func receive(_ fact: OSCFact) -> [OSCTimedMessage] {
        guard !finished else { return [] }
        let time = moveNow(to: fact.time)
        var output: [OSCTimedMessage] = []
        // What falls due at the fact's own time is sent after it, with what it changed.
        advance(to: time, including: false, into: &output)
        switch fact {
        case .reading(let reading): take(reading, at: time)
        case .connected: connect(at: time)
        case .disconnected: drop(at: time)
        case .battery(let percent, _):
            let level = min(max(percent, 0), 100)
            started = true
            if battery != level {
                battery = level
                valuesDue = time
            }
        }
        advance(to: time, into: &output)
        return output
    }

    /// The source is gone for good (the runner stops): the drop sequence when it was connected,
    /// then nothing more is due.
    public mutating func finish(at time: Date) -> [OSCTimedMessage] {
        guard !finished else { return [] }
        let output = started ? receive(.disconnected(at: time)) : []
        finished = true
        valuesDue = nil
        return output
    }

    private mutating func moveNow(to time: Date) -> Date {
        let moved = max(now ?? time, time)
        now = moved
        return moved
    }

    private mutating func take(_ reading: OSCReading, at time: Date) {
        started = true
        // A frame arriving means the source is connected, whether or not that was said.
        connected = true
        readingSinceConnect = true
        heartRate = max(reading.heartRate, 0)
        contact = reading.contact
        if let last = reading.rrIntervals.last(where: { $0.raw > 0 }) {
            rrMilliseconds = Int((Double(last.raw) * 1000 / 1024).rounded())
        }
        if sendsBeats { schedule(beatsOf: reading) }
        valuesDue = time
    }

    /// Back-dates the frame's beats from its receipt time and queues them `beatDelay` later.
    private mutating func schedule(beatsOf reading: OSCReading) {
        var beatTimes: [Date] = []
        var sinceBeat = 0.0
        for interval in reading.rrIntervals.reversed() where interval.raw > 0 {
            beatTimes.append(reading.receivedAt.addingTimeInterval(-sinceBeat))
            sinceBeat += interval.seconds
        }
        let delay = configuration.beatDelay.timeInterval
        for beatTime in beatTimes.reversed() {
            if let droppedAt, beatTime <= droppedAt { continue }
            var due = beatTime.addingTimeInterval(delay)
            if let lastBeatDue, due < lastBeatDue { due = lastBeatDue }
            beatsDue.append(due)
            lastBeatDue = due
        }
    }

    private mutating func connect(at time: Date) {
        started = true
        guard !connected else { return }
        connected = true
        readingSinceConnect = false
        valuesDue = time
    }

    private mutating func drop(at time: Date) {
        let wasConnected = connected
        let first = !started
        started = true
        connected = false
        readingSinceConnect = false
        droppedAt = time
        beatsDue.removeAll()
        lastBeatDue = nil
        if pulseEndsAt != nil { pulseEndsAt = time }
        if configuration.onDrop == .zero {
            heartRate = 0
            if rrMilliseconds != nil { rrMilliseconds = 0 }
        }
        if wasConnected || first { valuesDue = time }
    }

    /// Whether the chatbox has a heart rate to show.
    private var chatboxReady: Bool {
        configuration.chatbox != nil && connected && readingSinceConnect && heartRate > 0
    }

    private func nextWork(at time: Date? = nil) -> (due: Date, work: Work)? {
        var candidates: [(due: Date, work: Work)] = []
        if let pulseEndsAt { candidates.append((pulseEndsAt, .pulseEnd)) }
        if let beat = beatsDue.first { candidates.append((beat, .beat)) }
        if let valuesDue { candidates.append((valuesDue, .values)) }
        if chatboxReady, let due = chatboxAllowedFrom ?? time ?? now { candidates.append((due, .chatbox)) }
        return candidates.min { ($0.due, $0.work) < ($1.due, $1.work) }
    }

    /// Does everything due by `time` (or before it, without `including`), in due order, each
    /// message stamped with its own due time.
    private mutating func advance(to time: Date, including: Bool = true, into output: inout [OSCTimedMessage]) {
        while let next = nextWork(at: time), next.due < time || (including && next.due == time) {
            let due = next.due
            switch next.work {
            case .pulseEnd:
                pulseEndsAt = nil
                output += beatMessages(due: due, rising: false)
            case .beat:
                beatsDue.removeFirst()
                toggle.toggle()
                pulseEndsAt = due.addingTimeInterval(configuration.beatPulse.timeInterval)
                output += beatMessages(due: due, rising: true)
            case .values:
                output += values(due: due)
                valuesDue = Self.next(after: due, every: configuration.resendInterval, notBefore: time)
            case .chatbox:
                if let chatbox = configuration.chatbox {
                    output.append(OSCTimedMessage(due: due, message: chatbox.message(heartRate: heartRate)))
                    chatboxAllowedFrom = Self.next(after: due, every: chatbox.every, notBefore: time)
                }
            }
        }
    }

    /// One period after `due`; when the feed was woken late, one period after `time` (one catch-up send, not many).
    private static func next(after due: Date, every period: Duration, notBefore time: Date) -> Date {
        let next = due.addingTimeInterval(period.timeInterval)
        return next > time ? next : time.addingTimeInterval(period.timeInterval)
    }

    private func beatMessages(due: Date, rising: Bool) -> [OSCTimedMessage] {
        configuration.preset.parameters.compactMap { parameter in
            switch parameter.quantity {
            case .beat: OSCTimedMessage(due: due, message: OSCMessage(parameter.address, [.bool(rising)]))
            case .beatToggle where rising:
                OSCTimedMessage(due: due, message: OSCMessage(parameter.address, [.bool(toggle)]))
            default: nil
            }
        }
    }

    private func values(due: Date) -> [OSCTimedMessage] {
        configuration.preset.parameters.compactMap { parameter in
            argument(for: parameter.quantity).map {
                OSCTimedMessage(due: due, message: OSCMessage(parameter.address, [$0]))
            }
        }
    }

    /// A quantity's value now; nil for beats (sent at their own times) and for what is not known.
    func argument(for quantity: OSCQuantity) -> OSCArgument? {
        let shown = min(heartRate, 255)
        let digits = (ones: shown % 10, tens: shown / 10 % 10, hundreds: shown / 100 % 10)
        switch quantity {
        case .heartRate: return .int32(Int32(shown))
        case .onesDigit: return .int32(Int32(digits.ones))
        case .tensDigit: return .int32(Int32(digits.tens))
        case .hundredsDigit: return .int32(Int32(digits.hundreds))
        case .onesDigitFraction: return .float32(Float(digits.ones) / 10)
        case .tensDigitFraction: return .float32(Float(digits.tens) / 10)
        case .hundredsDigitFraction: return .float32(Float(digits.hundreds) / 10)
        case .percent:
            let span = Float(max(configuration.maxHeartRate - configuration.minHeartRate, 1))
            return .float32(min(max(Float(heartRate - configuration.minHeartRate) / span, 0), 1))
        case .signedUnit: return .float32(min(max(Float(heartRate) / 255 * 2 - 1, -1), 1))
        case .connected: return .bool(connected)
        case .active: return .bool(connected && readingSinceConnect && heartRate > 0 && contact != .notDetected)
        case .rrInterval: return rrMilliseconds.map { .int32(Int32(min($0, Int(Int32.max)))) }
        case .battery: return battery.map { .int32(Int32($0)) }
        case .batteryFraction: return battery.map { .float32(Float($0) / 100) }
        case .beat, .beatToggle: return nil
        }
    }
}

fileprivate extension Duration {
    /// The duration in seconds, for date arithmetic.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
