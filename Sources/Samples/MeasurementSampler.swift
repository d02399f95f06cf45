public import FoundationEssentials
public import GATT
public import Sensors

/// Turns decoded frames into quantity samples, one sensor at a time.
///
/// A value type holding the stateful derivers a sensor needs: revolution counters become cadence
/// and speed, cumulative counters (Energy Expended, distance) become increments, and RR intervals
/// are back-dated so the last one ends at the receive time. Call ``reset()`` after a reconnect.
public struct MeasurementSampler: Sendable {
    /// Choices that depend on the sensor or the user.
    public struct Options: Hashable, Sendable {
        /// Wheel circumference in metres, for speed from wheel revolutions (700×25c: 2.105 m).
        public var wheelCircumference: Double
        /// Multiplier for RSC cadence, for foot pods that send twice the step rate.
        public var runningCadenceScale: Double
        /// Whether heart rates measured without skin contact are dropped instead of kept tagged.
        public var dropsReadingsWithoutContact: Bool

        /// Creates options; the defaults keep no-contact readings, tagged.
        public init(
            wheelCircumference: Double = 2.105, runningCadenceScale: Double = 1,
            dropsReadingsWithoutContact: Bool = false
        ) {
            self.wheelCircumference = wheelCircumference
            self.runningCadenceScale = runningCadenceScale
            self.dropsReadingsWithoutContact = dropsReadingsWithoutContact
        }
    }

    /// Heart rates a heart beats at, bpm. A reading outside (a uint16 field of noise: 65535) becomes
    /// no sample: one would skew the statistics and zones, and add thousands of kJ to the estimate.
    /// It is counted in ``implausibleHeartRates``, so the caller can count and log it.
    public static let plausibleHeartRates: ClosedRange<Double> = 20...300

    /// The sensor every sample is attributed to.
    public let source: SampleSource
    /// The options in force.
    public var options: Options
    /// Heart-rate readings refused so far for lying outside ``plausibleHeartRates`` (HR 0, no
    /// reading, is not one). Kept across ``reset()``: a tally of refusals, not a baseline.
    public private(set) var implausibleHeartRates = 0
    /// The last of them, bpm (nil before the first).
    public private(set) var lastImplausibleHeartRate: Int?

    private var energyExpended = CounterState(deriver: .energyExpended)
    private var cyclingPowerEnergy = CounterState(deriver: .init(bits: 16, overflow: .wraps))
    private var runningDistance = CounterState(deriver: .init(bits: 32, overflow: .wraps))
    private var machineDistance = CounterState(deriver: .init(bits: 24, overflow: .wraps))
    private var machineEnergy = CounterState(deriver: .init(bits: 16, overflow: .wraps))
    private var cscWheel = RevolutionRateDeriver(configuration: .cscWheel)
    private var cscCrank = RevolutionRateDeriver(configuration: .crank)
    private var powerWheel = RevolutionRateDeriver(configuration: .cyclingPowerWheel)
    private var powerCrank = RevolutionRateDeriver(configuration: .crank)
    /// How the frame being turned into samples came: stamped on each of them.
    private var via: MeasurementPath?

    /// Creates a sampler for one sensor.
    public init(source: SampleSource, options: Options = Options()) {
        self.source = source
        self.options = options
    }

    /// Forgets every baseline, as after a reconnect (sensors may zero their counters).
    public mutating func reset() {
        var fresh = MeasurementSampler(source: source, options: options)
        fresh.implausibleHeartRates = implausibleHeartRates
        fresh.lastImplausibleHeartRate = lastImplausibleHeartRate
        self = fresh
    }

    /// The samples one decoded frame produces, received at `receivedAt`, each saying how the frame
    /// came (`via`; nil where nobody knows, as for a frame read from a file).
    public mutating func samples(
        from value: GATTValue, receivedAt: Date, via: MeasurementPath? = nil
    ) -> [QuantitySample] {
        self.via = via
        return switch value {
        case .heartRateMeasurement(let measurement): heartRateSamples(measurement, at: receivedAt)
        case .batteryLevel(let level):
            [sample(.batteryLevel, Double(level.percent), at: receivedAt)]
        case .cyclingPowerMeasurement(let measurement): cyclingPowerSamples(measurement, at: receivedAt)
        case .cscMeasurement(let measurement): cscSamples(measurement, at: receivedAt)
        case .rscMeasurement(let measurement): rscSamples(measurement, at: receivedAt)
        case .indoorBikeData(let data): indoorBikeSamples(data, at: receivedAt)
        case .treadmillData(let data): treadmillSamples(data, at: receivedAt)
        case .bodySensorLocation, .heartRateControlPoint, .deviceInformation: []
        }
    }

    /// Whether a heart-rate reading becomes a sample; one outside ``plausibleHeartRates`` is counted.
    private mutating func admitsHeartRate(_ bpm: Int) -> Bool {
        guard !Self.plausibleHeartRates.contains(Double(bpm)) else { return true }
        implausibleHeartRates += 1
        lastImplausibleHeartRate = bpm
        return false
    }

    private func sample(
        _ type: QuantityType, _ value: Double, at date: Date, metadata: SampleMetadata = SampleMetadata()
    ) -> QuantitySample {
        var metadata = metadata
        metadata.via = via
        return QuantitySample(type: type, value: value, start: date, end: date, source: source, metadata: metadata)
    }

    private mutating func heartRateSamples(_ measurement: HeartRateMeasurement, at date: Date) -> [QuantitySample] {
        var result: [QuantitySample] = []
        result.reserveCapacity(2 + measurement.rrIntervals.count)
        let dropsForContact = options.dropsReadingsWithoutContact && measurement.sensorContact == .notDetected
        if measurement.isReading, !dropsForContact, admitsHeartRate(Int(measurement.heartRate)) {
            result.append(
                sample(
                    .heartRate, Double(measurement.heartRate), at: date,
                    metadata: SampleMetadata(sensorContact: measurement.sensorContact)))
        }
        if !dropsForContact {
            // Back-date: the last interval ends at receipt, each earlier one ends where the next starts.
            var end = date
            var intervals: [QuantitySample] = []
            intervals.reserveCapacity(measurement.rrIntervals.count)
            for interval in measurement.rrIntervals.reversed() {
                let start = end.addingTimeInterval(-interval.seconds)
                intervals.append(
                    QuantitySample(
                        type: .heartbeatSeries, value: interval.seconds, start: start, end: end, source: source,
                        metadata: SampleMetadata(
                            sensorContact: measurement.sensorContact, rawRRInterval: interval.raw, via: via)
                    ))
                end = start
            }
            result.append(contentsOf: intervals.reversed())
        }
        if let energy = measurement.energyExpended,
            let increment = energyExpended.update(
                UInt32(energy), at: date, type: .activeEnergyBurned, scale: 1, source: source, via: via)
        {
            result.append(increment)
        }
        return result
    }

    private mutating func cyclingPowerSamples(
        _ measurement: CyclingPowerMeasurement, at date: Date
    ) -> [QuantitySample] {
        var result = [sample(.cyclingPower, Double(measurement.instantaneousPower), at: date)]
        let seconds = date.timeIntervalSinceReferenceDate
        if let crank = measurement.crank, let rpm = powerCrank.update(crank, receivedAt: seconds).revolutionsPerMinute {
            result.append(sample(.cyclingCadence, rpm, at: date))
        }
        if let wheel = measurement.wheel, let rpm = powerWheel.update(wheel, receivedAt: seconds).revolutionsPerMinute {
            result.append(sample(.cyclingSpeed, rpm / 60 * options.wheelCircumference, at: date))
        }
        if let energy = measurement.accumulatedEnergy,
            let increment = cyclingPowerEnergy.update(
                UInt32(energy), at: date, type: .activeEnergyBurned, scale: 1, source: source, via: via)
        {
            result.append(increment)
        }
        return result
    }

    private mutating func cscSamples(_ measurement: CSCMeasurement, at date: Date) -> [QuantitySample] {
        var result: [QuantitySample] = []
        let seconds = date.timeIntervalSinceReferenceDate
        if let crank = measurement.crank, let rpm = cscCrank.update(crank, receivedAt: seconds).revolutionsPerMinute {
            result.append(sample(.cyclingCadence, rpm, at: date))
        }
        if let wheel = measurement.wheel, let rpm = cscWheel.update(wheel, receivedAt: seconds).revolutionsPerMinute {
            result.append(sample(.cyclingSpeed, rpm / 60 * options.wheelCircumference, at: date))
        }
        return result
    }

    private mutating func rscSamples(_ measurement: RSCMeasurement, at date: Date) -> [QuantitySample] {
        var result = [
            sample(.runningSpeed, measurement.speedMetersPerSecond, at: date),
            sample(.stepCadence, Double(measurement.cadence) * options.runningCadenceScale, at: date),
        ]
        if let distance = measurement.totalDistance,
            let increment = runningDistance.update(
                distance, at: date, type: .distance, scale: 0.1, source: source, via: via)
        {
            result.append(increment)
        }
        return result
    }

    private mutating func indoorBikeSamples(_ data: IndoorBikeData, at date: Date) -> [QuantitySample] {
        var result: [QuantitySample] = []
        if let speed = data.instantaneousSpeedMetersPerSecond { result.append(sample(.cyclingSpeed, speed, at: date)) }
        if let cadence = data.instantaneousCadenceRPM { result.append(sample(.cyclingCadence, cadence, at: date)) }
        if let power = data.instantaneousPower { result.append(sample(.cyclingPower, Double(power), at: date)) }
        if let heartRate = data.heartRate, admitsHeartRate(Int(heartRate)) {
            result.append(sample(.heartRate, Double(heartRate), at: date))
        }
        result.append(contentsOf: machineCounters(distance: data.totalDistance, energy: data.energy, at: date))
        return result
    }

    private mutating func treadmillSamples(_ data: TreadmillData, at date: Date) -> [QuantitySample] {
        var result: [QuantitySample] = []
        if let speed = data.instantaneousSpeedMetersPerSecond { result.append(sample(.runningSpeed, speed, at: date)) }
        if let power = data.powerOutput { result.append(sample(.cyclingPower, Double(power), at: date)) }
        if let heartRate = data.heartRate, admitsHeartRate(Int(heartRate)) {
            result.append(sample(.heartRate, Double(heartRate), at: date))
        }
        result.append(contentsOf: machineCounters(distance: data.totalDistance, energy: data.energy, at: date))
        return result
    }

    private mutating func machineCounters(
        distance: UInt32?, energy: FitnessMachineEnergy?, at date: Date
    ) -> [QuantitySample] {
        var result: [QuantitySample] = []
        if let distance,
            let increment = machineDistance.update(
                distance, at: date, type: .distance, scale: 1, source: source, via: via)
        {
            result.append(increment)
        }
        // Fitness machines count energy in kcal; samples are stored in kJ.
        if let energy,
            let increment = machineEnergy.update(
                UInt32(energy.total), at: date, type: .activeEnergyBurned, scale: QuantityUnit.kilocalorie.factor,
                source: source, via: via)
        {
            result.append(increment)
        }
        return result
    }
}

/// A cumulative counter with the time of its last reading, so increments span the right interval.
private struct CounterState: Sendable {
    var deriver: CumulativeCounterDeriver
    var lastReading: Date?

    init(deriver: CumulativeCounterDeriver) { self.deriver = deriver }

    mutating func update(
        _ value: UInt32, at date: Date, type: QuantityType, scale: Double, source: SampleSource,
        via: MeasurementPath?
    ) -> QuantitySample? {
        let update = deriver.update(value)
        let start = lastReading ?? date
        lastReading = date
        switch update {
        case .baseline, .saturated, .increment(0): return nil
        case .increment(let units), .reset(let units):
            var metadata = SampleMetadata(via: via)
            if case .reset = update { metadata.counterReset = true }
            return QuantitySample(
                type: type, value: Double(units) * scale, start: start, end: date, source: source, metadata: metadata)
        }
    }
}
