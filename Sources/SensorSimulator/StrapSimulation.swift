import Foundation
public import GATT
public import Sensors

/// What a simulated strap does at a moment of simulated time.
public enum SimulationOutput: Hashable, Sendable {
    /// A notification frame, raw, as the radio would deliver it.
    case frame(time: Double, characteristic: GATTCharacteristic, bytes: [UInt8])
    /// The link dropped.
    case disconnected(time: Double)
    /// The strap advertises again and reconnects.
    case reconnected(time: Double)
    /// The battery level changed.
    case battery(time: Double, percent: UInt8)
    /// A PMD data notification (raw ECG or acceleration), arriving at `time`.
    case waveform(time: Double, kind: WaveformKind, bytes: [UInt8])
}

/// One virtual strap as a pure value: advance it through simulated time and it returns raw frames.
///
/// One Heart Rate Measurement per second carrying the RR intervals of the beats that ended in that
/// second (at most 9), Energy Expended every 10th frame, contact state, battery changes, and the
/// scenario's faults. Deterministic for a given seed.
public struct StrapSimulation: Sendable {
    /// The strap's script.
    public let scenario: StrapScenario
    private var heart: HeartModel
    private var generator: SeededGenerator
    private var pendingBeats: [Double] = []
    private var time = 0.0
    private var frameIndex = 0
    private var energyKilojoules = 0.0
    private var batteryReported: UInt8?
    private var connected = true
    /// The strap's PMD service, when the scenario gives it one.
    public private(set) var waveforms: WaveformSimulation?
    /// The times the recent beats ended (their R peaks), oldest first.
    private var beatEnds: [Double] = []
    private var beatEnd = 0.0

    /// Creates the simulation of `scenario` with `seed`.
    public init(scenario: StrapScenario, seed: UInt64) {
        self.scenario = scenario
        self.heart = HeartModel(
            restingHeartRate: scenario.restingHeartRate, maximumHeartRate: scenario.maximumHeartRate,
            ectopicRate: scenario.ectopicBeats, missedBeatRate: scenario.missedBeats)
        self.generator = SeededGenerator(seed: seed)
        self.waveforms = scenario.pmd.map { WaveformSimulation(scenario: $0, seed: seed) }
    }

    /// Starts a raw signal now; false when the strap has no PMD service or no link.
    @discardableResult
    public mutating func startWaveform(_ request: WaveformRequest) -> Bool {
        guard connected, waveforms != nil else { return false }
        waveforms?.start(request, at: time)
        return true
    }

    /// Stops a raw signal.
    public mutating func stopWaveform(_ kind: WaveformKind) { waveforms?.stop(kind) }

    /// Stops every raw signal.
    public mutating func stopWaveforms() { waveforms?.stopAll() }

    /// Simulated seconds so far.
    public var currentTime: Double { time }
    /// The model's heart rate now.
    public var modelHeartRate: Double { heart.heartRate }
    /// The heart rate at which the model's beats have DFA α1 = 0.75 (its built-in HRVT1).
    public var modelThresholdHeartRate: Double { heart.thresholdHeartRate }

    /// Advances to `target` seconds, one-second frames at a time, returning what happened in order.
    public mutating func advance(to target: Double) -> [SimulationOutput] {
        var outputs: [SimulationOutput] = []
        while time + 1 <= target + 1e-9 {
            time += 1
            step(into: &outputs)
        }
        return outputs
    }

    private func active(_ time: Double, _ at: Double, _ duration: Double) -> Bool { time > at && time <= at + duration }

    private mutating func step(into outputs: inout [SimulationOutput]) {
        // Beats up to now.
        var beatsThisSecond: [Double] = pendingBeats
        pendingBeats = []
        while heart.lastBeatEnd < time {
            let intensity = scenario.intensity(at: heart.lastBeatEnd)
            let rr = heart.nextReportedBeat(intensity: intensity, using: &generator)
            beatEnd += rr
            beatEnds.append(beatEnd)
            if heart.lastBeatEnd <= time { beatsThisSecond.append(rr) } else { pendingBeats.append(rr) }
        }
        energyKilojoules += energyRate(heartRate: heart.heartRate) / 60
        frameIndex += 1

        var contactLost = false
        var droppedOut = false
        var malformed = false
        var linkDown = false
        var batteryTarget: Double?
        for fault in scenario.faults {
            switch fault {
            case .dropout(let at, let duration): droppedOut = droppedOut || active(time, at, duration)
            case .contactLost(let at, let duration): contactLost = contactLost || active(time, at, duration)
            case .disconnect(let at, let duration): linkDown = linkDown || active(time, at, duration)
            case .malformedFrame(let at): malformed = malformed || (time > at && time <= at + 1)
            case .batteryDrain(let at, let to, let duration):
                if time > at {
                    let progress = min((time - at) / duration, 1)
                    batteryTarget = scenario.battery + (to - scenario.battery) * progress
                }
            }
        }
        if beatEnds.count > 32 { beatEnds.removeFirst(beatEnds.count - 16) }
        if linkDown && connected {
            connected = false
            // The strap ends its PMD streams with the link.
            waveforms?.stopAll()
            outputs.append(.disconnected(time: time))
        } else if !linkDown && !connected {
            connected = true
            outputs.append(.reconnected(time: time))
        }
        // Slow drain of 1 % per hour unless a fault says otherwise.
        let battery = batteryTarget ?? max(scenario.battery - time / 3600, 0)
        let percent = UInt8(max(0, min(100, battery.rounded(.up))))
        if connected, percent != batteryReported {
            batteryReported = percent
            outputs.append(.battery(time: time, percent: percent))
        }
        if connected, waveforms?.streaming.isEmpty == false {
            let scenario = scenario
            let frames =
                waveforms?.frames(
                    upTo: time, beats: beatEnds[...], intensity: { scenario.intensity(at: $0) }, delivered: !droppedOut)
                ?? []
            for frame in frames { outputs.append(.waveform(time: frame.arrival, kind: frame.kind, bytes: frame.bytes)) }
        }
        guard connected, !droppedOut else { return }
        if malformed {
            // RR flag set with a lone trailing byte: the strict decoder must refuse it.
            outputs.append(
                .frame(time: time, characteristic: .heartRateMeasurement, bytes: [0x10, 0x48, 0x2C, 0x03, 0x01]))
            return
        }
        let contact: SensorContact =
            scenario.contactSupported ? (contactLost ? .notDetected : .detected) : .notSupported
        var heartRate = heart.heartRate
        if contactLost {
            heartRate = max(40, heartRate + generator.gaussian(standardDeviation: 15))
        } else if !beatsThisSecond.isEmpty {
            heartRate = 60 / (beatsThisSecond.reduce(0, +) / Double(beatsThisSecond.count))
        }
        let rr =
            scenario.rrIntervals && !contactLost ? beatsThisSecond.suffix(9).map { RRInterval(seconds: $0) } : []
        let measurement = HeartRateMeasurement(
            heartRate: UInt16(heartRate.rounded()), sensorContact: contact,
            energyExpended: scenario.energyExpended && frameIndex % 10 == 0
                ? UInt16(min(energyKilojoules.rounded(.down), 65535)) : nil,
            rrIntervals: rr)
        outputs.append(.frame(time: time, characteristic: .heartRateMeasurement, bytes: measurement.encoded()))
    }

    /// kJ per minute from the Keytel equations, for the strap's own Energy Expended counter.
    private func energyRate(heartRate: Double) -> Double {
        let rate =
            scenario.isMale
            ? -55.0969 + 0.6309 * heartRate + 0.1988 * scenario.weight + 0.2017 * scenario.age
            : -20.4022 + 0.4472 * heartRate - 0.1263 * scenario.weight + 0.0740 * scenario.age
        return max(rate, 0)
    }
}
