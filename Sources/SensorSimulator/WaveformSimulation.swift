import Foundation
import GATT
public import Sensors

/// A simulated H10's raw signals as a pure value: a synthetic ECG whose R peaks fall on the
/// strap's beats, and a three-axis acceleration that follows the workload, cut into PMD frames
/// (73 ECG samples, 36 acceleration samples) stamped with the strap's drifting clock and delivered
/// after a jittered radio delay, in order.
public struct WaveformSimulation: Sendable {
    /// Samples per ECG frame: 229 bytes, the most a 232-byte ATT MTU carries.
    public static let ecgSamplesPerFrame = 73
    /// Samples per 16-bit acceleration frame.
    public static let accSamplesPerFrame = 36

    private struct Stream: Sendable {
        var request: WaveformRequest
        /// The strap's time of the stream's sample 0, in seconds of its clock.
        var sensorStart: Double
        /// The next sample to send.
        var nextSample = 0
        var samplesPerFrame: Int {
            request.kind == .ecg ? WaveformSimulation.ecgSamplesPerFrame : WaveformSimulation.accSamplesPerFrame
        }
    }

    /// The service's settings.
    public let scenario: PMDScenario
    /// The strap's clock reading at simulated time 0, in seconds (its power-on epoch plus uptime).
    public let sensorEpoch: Double
    private var streams: [WaveformKind: Stream] = [:]
    private var generator: SeededGenerator
    private var lastArrival = -Double.infinity

    /// A service with `scenario`'s clock, seeded.
    public init(scenario: PMDScenario, seed: UInt64) {
        self.scenario = scenario
        var generator = SeededGenerator(seed: seed ^ 0x0EC6_0ACC)
        // The H10 counts from 2019-01-01 (seconds since 2000-01-01) at power-on, up a while already.
        self.sensorEpoch = 599_616_000 + Double(generator.next() % 3600)
        self.generator = generator
    }

    /// The kinds streaming now.
    public var streaming: Set<WaveformKind> { Set(streams.keys) }

    /// The strap's clock at simulated `time`, in seconds.
    public func sensorTime(at time: Double) -> Double { sensorEpoch + time * (1 + scenario.clockDriftPPM * 1e-6) }

    /// The simulated time at which the strap's clock read `sensorTime` (ns): a sample's true time.
    public func trueTime(ofSensorTime sensorTime: UInt64) -> Double {
        (Double(sensorTime) / 1e9 - sensorEpoch) / (1 + scenario.clockDriftPPM * 1e-6)
    }

    /// Starts a stream at simulated `time` (a running stream restarts).
    public mutating func start(_ request: WaveformRequest, at time: Double) {
        streams[request.kind] = Stream(request: request, sensorStart: sensorTime(at: time))
    }

    /// Stops a stream.
    public mutating func stop(_ kind: WaveformKind) { streams[kind] = nil }

    /// Stops every stream (the link dropped: the strap ends them).
    public mutating func stopAll() { streams = [:] }

    /// The frames whose last sample was taken by `time`, each with its arrival time, in arrival
    /// order; `beats` are the R peaks' times so far (the last at or after `time`), `intensity` the
    /// workload's. Frames taken while `delivered` is false are lost (the samples still pass).
    public mutating func frames(
        upTo time: Double, beats: ArraySlice<Double>, intensity: (Double) -> Double, delivered: Bool
    ) -> [(arrival: Double, kind: WaveformKind, bytes: [UInt8])] {
        var output: [(arrival: Double, kind: WaveformKind, bytes: [UInt8])] = []
        for kind in streams.keys.sorted() {
            guard var stream = streams[kind] else { continue }
            let rate = Double(stream.request.sampleRate)
            let count = stream.samplesPerFrame
            while true {
                let lastSample = stream.nextSample + count - 1
                let lastSensorTime = stream.sensorStart + Double(lastSample) / rate
                let lastTrueTime = (lastSensorTime - sensorEpoch) / (1 + scenario.clockDriftPPM * 1e-6)
                guard lastTrueTime <= time else { break }
                var values: [Int32] = []
                values.reserveCapacity(count * kind.channels)
                for index in stream.nextSample...lastSample {
                    let sensorTime = stream.sensorStart + Double(index) / rate
                    let trueTime = (sensorTime - sensorEpoch) / (1 + scenario.clockDriftPPM * 1e-6)
                    switch kind {
                    case .ecg: values.append(ecg(at: trueTime, beats: beats))
                    case .acc: values.append(contentsOf: acceleration(at: trueTime, intensity: intensity(trueTime)))
                    }
                }
                stream.nextSample = lastSample + 1
                let delay = scenario.latencyFloor + exponential(mean: scenario.jitter)
                let arrival = max(lastArrival, lastTrueTime + delay)
                guard delivered else { continue }
                lastArrival = arrival
                let timestamp = UInt64((lastSensorTime * 1e9).rounded())
                output.append((arrival, kind, Self.frame(kind, timestamp: timestamp, values: values)))
            }
            streams[kind] = stream
        }
        return output.sorted { $0.arrival < $1.arrival }
    }

    /// The PMD notification of a frame: ECG type 0, acceleration raw type 1.
    static func frame(_ kind: WaveformKind, timestamp: UInt64, values: [Int32]) -> [UInt8] {
        switch kind {
        case .ecg:
            return ECGFrame(timestamp: timestamp, microvolts: values).frame().encoded()
        case .acc:
            var payload: [UInt8] = []
            payload.reserveCapacity(values.count * 2)
            for value in values {
                let clamped = Int16(clamping: value)
                payload.append(UInt8(truncatingIfNeeded: clamped))
                payload.append(UInt8(truncatingIfNeeded: clamped >> 8))
            }
            return PMDFrame(
                measurementType: PMDMeasurementType.acceleration.rawValue, timestamp: timestamp, frameType: 1,
                isCompressed: false, payload: payload
            ).encoded()
        }
    }

    /// The synthetic ECG in µV at `time`: P, Q, R, S and T waves around each beat, a slow baseline
    /// wander and a little noise.
    private mutating func ecg(at time: Double, beats: ArraySlice<Double>) -> Int32 {
        var value = 60 * sin(2 * .pi * 0.25 * time) + generator.gaussian(standardDeviation: 6)
        var previous: Double?
        for beat in beats where beat > time - 1.2 && beat < time + 0.4 {
            let interval = previous.map { beat - $0 } ?? 0.8
            previous = beat
            value += 120 * Self.bump(time - (beat - 0.17), width: 0.022)
            value -= 150 * Self.bump(time - (beat - 0.035), width: 0.008)
            value += 1300 * Self.bump(time - beat, width: 0.010)
            value -= 350 * Self.bump(time - (beat + 0.035), width: 0.009)
            value += 320 * Self.bump(time - (beat + 0.22 + 0.1 * (interval - 0.6)), width: 0.045)
        }
        return Int32(value.rounded())
    }

    /// Acceleration in mG at `time`: gravity on z and a stride-rate sway that grows with intensity.
    private mutating func acceleration(at time: Double, intensity: Double) -> [Int32] {
        let cadence = 1.2 + 1.6 * intensity
        let sway = 40 + 500 * intensity
        let phase = 2 * .pi * cadence * time
        let x = sway * 0.3 * sin(phase / 2) + generator.gaussian(standardDeviation: 4)
        let y = sway * sin(phase) + generator.gaussian(standardDeviation: 4)
        let z = 1000 + sway * 0.6 * cos(phase) + generator.gaussian(standardDeviation: 4)
        return [Int32(x.rounded()), Int32(y.rounded()), Int32(z.rounded())]
    }

    private static func bump(_ offset: Double, width: Double) -> Double {
        exp(-(offset * offset) / (2 * width * width))
    }

    private mutating func exponential(mean: Double) -> Double {
        guard mean > 0 else { return 0 }
        let uniform = max(Double.random(in: 0..<1, using: &generator), .leastNonzeroMagnitude)
        return min(-mean * log(uniform), 20 * mean)
    }
}
