public import GATT
public import Sensors

/// Decides what a heart-rate peripheral sends, from the events of the strap it passes on.
///
/// A pure value: events in, actions out. Each heart-rate frame of the followed strap becomes one
/// or more frames with the same heart rate, contact and (when forwarded) energy and **every** RR
/// interval unchanged; frames are split so none exceeds `maximumFrameLength` (an app on the
/// default ATT MTU takes 20 bytes, and BlueZ would cut a longer notification short, losing RR).
/// Nothing is invented: when the strap drops, nothing is sent until it sends again.
public struct HeartRateRelay: Sendable {
    /// What is passed on.
    public struct Options: Hashable, Sendable {
        /// Forward RR intervals (HRV apps and watches use them).
        public var forwardRR: Bool
        /// Forward Energy Expended (and serve the control point that resets it).
        public var forwardEnergy: Bool
        /// The longest notification value: ATT MTU 23 minus the 3-byte header.
        public var maximumFrameLength: Int

        public init(forwardRR: Bool = true, forwardEnergy: Bool = false, maximumFrameLength: Int = 20) {
            self.forwardRR = forwardRR
            self.forwardEnergy = forwardEnergy
            self.maximumFrameLength = max(maximumFrameLength, 8)
        }
    }

    /// What to do.
    public enum Action: Hashable, Sendable {
        /// Notify subscribed apps with this frame.
        case send(HeartRateMeasurement)
        /// The strap's battery level changed.
        case battery(UInt8)
        /// The followed strap is up (measurements will flow) or down (nothing is sent meanwhile).
        case source(SensorIdentity, up: Bool)
    }

    public let options: Options
    /// The strap followed, by address (any adapter); `nil`: nothing is passed on.
    public private(set) var address: String?
    /// Whether the followed strap's link is up.
    public private(set) var isUp = false
    /// Frames passed on since the start, and heart-rate frames of the strap received.
    public private(set) var framesIn = 0
    public private(set) var framesOut = 0

    /// The strap's energy count when an app last reset it: apps are sent what was spent since,
    /// and the strap's own count (which sessions record) is never touched by an app.
    private var energyBaseline: UInt16 = 0
    /// The strap's last energy count, the baseline a reset takes.
    private var lastEnergy: UInt16?
    /// Reset before any count came: the next count is the baseline.
    private var energyResetPending = false

    public init(address: String?, options: Options = Options()) {
        self.address = address?.uppercased()
        self.options = options
    }

    /// Follows another strap (a session's primary changed), whose link is `isUp` now; the old
    /// one's state is forgotten.
    public mutating func follow(_ address: String?, isUp: Bool = false) {
        let address = address?.uppercased()
        guard address != self.address else { return }
        self.address = address
        self.isUp = address != nil && isUp
        // Another strap's count means nothing against this one's: apps' count starts again.
        lastEnergy = nil
        energyBaseline = 0
        energyResetPending = true
    }

    /// An app wrote Reset Energy Expended to the control point: from now on apps are sent the
    /// energy spent since.
    public mutating func resetEnergy() {
        if let lastEnergy {
            energyBaseline = lastEnergy
        } else {
            energyResetPending = true
        }
    }

    /// The count apps are sent for the strap's `energy`.
    mutating func energySinceReset(_ energy: UInt16) -> UInt16 {
        if energyResetPending {
            energyBaseline = energy
            energyResetPending = false
        }
        // Below the baseline: the strap's own count started again (its own reset, a new battery).
        if energy < energyBaseline { energyBaseline = 0 }
        lastEnergy = energy
        // Saturated means "this much or more": no difference is known, so it stays saturated.
        guard energy != HeartRateMeasurement.energyExpendedSaturation else { return energy }
        return energy - energyBaseline
    }

    /// The followed strap's link as the sensors know it now: a strap that came up before anyone
    /// listened for its events.
    public mutating func linkIs(up: Bool) {
        isUp = address != nil && up
    }

    /// The actions one event calls for.
    public mutating func handle(_ event: SensorEvent) -> [Action] {
        switch event {
        case .measurement(let measurement) where measurement.sensor.address == address:
            guard case .heartRateMeasurement(var frame) = measurement.value else { return [] }
            framesIn += 1
            if options.forwardEnergy, let energy = frame.energyExpended {
                frame.energyExpended = energySinceReset(energy)
            }
            let frames = split(frame)
            framesOut += frames.count
            return frames.map(Action.send)
        case .batteryLevel(let sensor, let level) where sensor.address == address:
            return [.battery(level)]
        case .connectionChanged(let sensor, let state) where sensor.address == address:
            let up = state == .ready
            guard up != isUp else { return [] }
            isUp = up
            return [.source(sensor, up: up)]
        default:
            return []
        }
    }

    /// The frame re-encoded with what is forwarded, split so each fits.
    func split(_ frame: HeartRateMeasurement) -> [HeartRateMeasurement] {
        var first = HeartRateMeasurement(
            heartRate: frame.heartRate, valueFormat: frame.valueFormat, sensorContact: frame.sensorContact,
            energyExpended: options.forwardEnergy ? frame.energyExpended : nil)
        let intervals = options.forwardRR ? frame.rrIntervals : []
        let header = 1 + (frame.valueFormat == .uint16 ? 2 : 1)
        let firstRoom = (options.maximumFrameLength - header - (first.energyExpended == nil ? 0 : 2)) / 2
        first.rrIntervals = Array(intervals.prefix(firstRoom))
        var frames = [first]
        var rest = intervals.dropFirst(firstRoom)
        let room = (options.maximumFrameLength - header) / 2
        while !rest.isEmpty {
            var next = first
            next.energyExpended = nil
            next.rrIntervals = Array(rest.prefix(room))
            rest = rest.dropFirst(room)
            frames.append(next)
        }
        return frames
    }
}
