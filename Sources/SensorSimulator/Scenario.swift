/// A simulation script: virtual straps, each with a workload profile and faults.
///
/// The JSON schema is documented in docs/workouts.md ("Scenario files"); ``ScenarioParser`` reads it.
public struct Scenario: Hashable, Sendable {
    /// The seed used when none is given on the command line.
    public var seed: UInt64
    /// The virtual straps.
    public var straps: [StrapScenario]

    /// Creates a scenario.
    public init(seed: UInt64, straps: [StrapScenario]) {
        self.seed = seed
        self.straps = straps
    }

    /// How long the longest strap's workload runs, in seconds.
    public var duration: Double { straps.map(\.duration).max() ?? 0 }
}

/// One virtual strap.
public struct StrapScenario: Hashable, Sendable {
    /// Advertised name.
    public var name: String
    /// Bluetooth address.
    public var address: String
    public var restingHeartRate: Double
    public var maximumHeartRate: Double
    /// Battery at the start, in percent.
    public var battery: Double
    /// Whether the strap reports skin contact.
    public var contactSupported: Bool
    /// Whether frames carry Energy Expended (every 10th frame).
    public var energyExpended: Bool
    /// Whether frames carry RR intervals.
    public var rrIntervals: Bool
    /// Whether the strap only broadcasts its heart rate in its advertisements (Polar's manufacturer
    /// data) and takes no connection: followed without a link, heart rate only.
    public var broadcastOnly: Bool
    /// Whether the strap was paired with bonding (its link encrypted with a stored key), as a
    /// class's `join_via = "link"` needs: a simulated strap is, unless the scenario says otherwise.
    public var bonded: Bool
    /// Share of beats reported as ectopic (premature, then a compensatory pause), 0–0.2.
    public var ectopicBeats: Double
    /// Share of beats the strap misses (the interval reported spans two beats), 0–0.2.
    public var missedBeats: Double
    /// Age, weight and sex of the wearer, for the energy model.
    public var age: Double
    /// Body mass in kilograms.
    public var weight: Double
    /// `true` for the male equation.
    public var isMale: Bool
    /// The workload, in order.
    public var segments: [WorkloadSegment]
    /// Faults, by time.
    public var faults: [Fault]
    /// The strap's Polar Measurement Data service (raw ECG and acceleration, as an H10), if any.
    public var pmd: PMDScenario?

    /// Creates a strap with defaults for everything but name, address and segments.
    public init(
        name: String, address: String, restingHeartRate: Double = 60, maximumHeartRate: Double = 185,
        battery: Double = 100, contactSupported: Bool = true, energyExpended: Bool = true, rrIntervals: Bool = true,
        age: Double = 35, weight: Double = 75, isMale: Bool = true, segments: [WorkloadSegment], faults: [Fault] = [],
        ectopicBeats: Double = 0, missedBeats: Double = 0, broadcastOnly: Bool = false, bonded: Bool = true,
        pmd: PMDScenario? = nil
    ) {
        self.pmd = pmd
        self.bonded = bonded
        self.name = name
        self.address = address
        self.restingHeartRate = restingHeartRate
        self.maximumHeartRate = maximumHeartRate
        self.battery = battery
        self.contactSupported = contactSupported
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
        self.broadcastOnly = broadcastOnly
        self.ectopicBeats = ectopicBeats
        self.missedBeats = missedBeats
        self.age = age
        self.weight = weight
        self.isMale = isMale
        self.segments = segments
        self.faults = faults
    }

    /// Total workload time in seconds.
    public var duration: Double { segments.reduce(0) { $0 + $1.duration } }

    /// Workload intensity (0 rest … 1 maximum) at `time` seconds; 0 after the last segment.
    public func intensity(at time: Double) -> Double {
        var start = 0.0
        for segment in segments {
            if time < start + segment.duration { return segment.intensity(at: time - start) }
            start += segment.duration
        }
        return 0
    }
}

/// A piece of the workload profile.
public enum WorkloadSegment: Hashable, Sendable {
    /// Constant intensity.
    case steady(duration: Double, intensity: Double)
    /// Intensity changing linearly.
    case ramp(duration: Double, from: Double, to: Double)
    /// Work and recovery, repeated.
    case intervals(
        repeat: Int, workDuration: Double, workIntensity: Double, recoveryDuration: Double, recoveryIntensity: Double)

    /// Length in seconds.
    public var duration: Double {
        switch self {
        case .steady(let duration, _), .ramp(let duration, _, _): duration
        case .intervals(let count, let work, _, let recovery, _): Double(count) * (work + recovery)
        }
    }

    /// Intensity `offset` seconds into the segment.
    public func intensity(at offset: Double) -> Double {
        switch self {
        case .steady(_, let intensity): intensity
        case .ramp(let duration, let from, let to): from + (to - from) * min(max(offset / max(duration, 1e-9), 0), 1)
        case .intervals(_, let work, let workIntensity, let recovery, let recoveryIntensity):
            offset.truncatingRemainder(dividingBy: work + recovery) < work ? workIntensity : recoveryIntensity
        }
    }
}

/// Something that goes wrong with a strap, at a time.
public enum Fault: Hashable, Sendable {
    /// No frames for `duration` seconds; the link stays up.
    case dropout(at: Double, duration: Double)
    /// Skin contact lost for `duration` seconds: frames say "not detected", no RR.
    case contactLost(at: Double, duration: Double)
    /// The link drops, and the strap advertises and reconnects after `duration` seconds.
    case disconnect(at: Double, duration: Double)
    /// The battery falls linearly to `to` percent over `duration` seconds.
    case batteryDrain(at: Double, to: Double, duration: Double)
    /// One malformed frame replaces the good one.
    case malformedFrame(at: Double)

    /// When the fault begins.
    public var start: Double {
        switch self {
        case .dropout(let at, _), .contactLost(let at, _), .disconnect(let at, _), .batteryDrain(let at, _, _),
            .malformedFrame(let at):
            at
        }
    }
}
