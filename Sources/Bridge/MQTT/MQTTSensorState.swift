public import Foundation
import JSONSupport
public import Wire

/// What the bridge publishes about one sensor on its retained `state` topic, and when.
///
/// A pure value: frames, status changes and device information go in; the JSON payload comes out,
/// with the decision whether it is due (a heart-rate change at most every `interval` of frame
/// time; anything else at once).
public struct MQTTSensorState: Sendable, Equatable {
    public let address: String
    /// A display name (a Bluetooth name is attacker text: cleaned and cut to 64 characters).
    public private(set) var name: String?
    /// `ready`, `connected`, `connecting`, `disconnected` or `seen`.
    public var state = SensorState.disconnected
    public var heartRate: Int?
    /// The last frame's RR intervals, in milliseconds.
    public var rr: [Int] = []
    public var zone: Int?
    public var percentOfMax: Int?
    public var battery: Int?
    /// `detected`, `notDetected` or `unsupported`.
    public var contact: String?
    /// How the values arrive: `connection` (a GATT link) or `advertisement` (its broadcast, heard without one).
    public var via = "connection"
    /// When the last frame arrived.
    public var time: Date?
    public var manufacturer: String?
    public var model: String?
    public var firmware: String?
    /// The session recording it, and whether that is a guest's.
    public var session: UUID?
    public var guest = false
    /// The RR intervals of the last beats, for RMSSD (milliseconds).
    private var recentRR: [Double] = []
    private var lastPublished: Date?
    private var pending = false

    /// Beats RMSSD is computed over.
    public static let rmssdBeats = 30

    public init(address: String, name: String? = nil) {
        self.address = address
        setName(name)
    }

    /// Sets the display name, cleaned of control characters and cut to 64 characters.
    public mutating func setName(_ text: String?) {
        name = text.map(Self.cleaned)
    }

    /// Text from a device for display: no control characters, at most 64 characters.
    public static func cleaned(_ text: String) -> String {
        String(
            text.unicodeScalars.filter { !$0.properties.generalCategory.isControlOrFormat }.prefix(64).map(
                Character.init))
    }

    /// RMSSD over the last beats (ms, one decimal), once there are 10 intervals.
    public var rmssd: Double? {
        guard recentRR.count >= 10 else { return nil }
        var sum = 0.0
        for index in 1..<recentRR.count {
            let difference = recentRR[index] - recentRR[index - 1]
            sum += difference * difference
        }
        return ((sum / Double(recentRR.count - 1)).squareRoot() * 10).rounded() / 10
    }

    /// A frame arrived; returns whether the state is due for publishing: a change at most every
    /// `interval` of frame time, and with `refresh`, the same values again once that much frame
    /// time passed without a publish (Home Assistant's `expire_after` counts from the last message,
    /// changed or not).
    public mutating func measured(
        heartRate: Int, rrSeconds: [Double], contact: String, at date: Date, zone: Int?, percentOfMax: Int?,
        interval: Double, refresh: Double?
    ) -> Bool {
        let changed = heartRate != self.heartRate || zone != self.zone
        self.heartRate = heartRate
        rr = rrSeconds.map { Int(($0 * 1000).rounded()) }
        for value in rrSeconds where value > 0.25 && value < 2.5 {
            recentRR.append(value * 1000)
        }
        if recentRR.count > Self.rmssdBeats { recentRR.removeFirst(recentRR.count - Self.rmssdBeats) }
        self.contact = contact
        self.zone = zone
        self.percentOfMax = percentOfMax
        time = date
        if state != .ready { state = .ready }
        let due = lastPublished.map { date.timeIntervalSince($0) >= interval || date < $0 } ?? true
        let stale =
            refresh.map { refresh in lastPublished.map { date.timeIntervalSince($0) >= refresh } ?? true } ?? false
        if due && (changed || pending || interval == 0 || lastPublished == nil || stale) {
            lastPublished = date
            pending = false
            return true
        }
        if changed { pending = true }
        return false
    }

    /// The link dropped: the values it had are no longer true.
    public mutating func disconnected() {
        state = .disconnected
        heartRate = nil
        rr = []
        zone = nil
        percentOfMax = nil
        contact = nil
        recentRR.removeAll()
        pending = false
    }

    /// The retained JSON payload.
    public var payload: String {
        var object = JSONObjectWriter(capacity: 256)
        object.add("address", address)
        object.add("battery", battery)
        object.add("contact", contact)
        object.add("heartRate", heartRate)
        object.add("name", name)
        object.add("percentOfMax", percentOfMax)
        if let rmssd { object.add("rmssd", rmssd) } else { object.addNull("rmssd") }
        object.add("rr", rr.map(Double.init))
        object.add("state", state.rawValue)
        object.add("time", time.map(ISO8601.format))
        object.add("via", via)
        object.add("zone", zone)
        return object.text()
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isControlOrFormat: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: true
        default: false
        }
    }
}
