import Foundation
import SensorSimulator
import Sensors
import Testing

/// A stream of ECG frames with a known truth: the strap's clock drifts by `drift` ppm from an
/// arbitrary epoch, each frame arrives `floor` plus an exponential delay (mean `jitter`) after its
/// last sample, in order.
private struct FrameStream {
    var drift = 30.0
    var floor = 0.008
    var jitter = 0.02
    var rate = 130.0
    var samplesPerFrame = 73
    var sensorEpoch = 599_616_123.0
    var hostEpoch = 800_000_000.0
    var generator = SeededGenerator(seed: 7)
    var lastArrival = -Double.infinity

    /// The true host time of sample `index` of the stream.
    func truth(_ index: Int) -> Double { hostEpoch + Double(index) / rate }

    func sensorTime(_ index: Int) -> UInt64 {
        UInt64(((sensorEpoch + Double(index) / rate * (1 + drift * 1e-6)) * 1e9).rounded())
    }

    /// Frame `frame`'s last sample's sensor time and its arrival.
    mutating func frame(_ frame: Int) -> (sensorTime: UInt64, arrival: Date, firstSample: Int) {
        let last = (frame + 1) * samplesPerFrame - 1
        let uniform = max(Double.random(in: 0..<1, using: &generator), .leastNonzeroMagnitude)
        let arrival = max(lastArrival, truth(last) + floor + (jitter > 0 ? -jitter * log(uniform) : 0))
        lastArrival = arrival
        return (sensorTime(last), Date(timeIntervalSinceReferenceDate: arrival), frame * samplesPerFrame)
    }
}

private func percentile(_ values: [Double], _ share: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * share))]
}

@Suite("The waveform clock: a strap's sample clock on the host's")
struct WaveformClockTests {
    @Test("Without jitter every sample lands on its truth plus the radio's floor, spaced 1/130 s")
    func steadyLink() {
        var stream = FrameStream(drift: 0, jitter: 0)
        var clock = WaveformClock(sampleRate: 130)
        for index in 0..<100 {
            let frame = stream.frame(index)
            let placement = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
            #expect(placement.continuous == (index > 0))
            #expect(abs(placement.interval - 1 / 130) < 1e-8)
            let error = placement.start.timeIntervalSinceReferenceDate - stream.truth(frame.firstSample)
            #expect(abs(error - stream.floor) < 1e-6, "frame \(index): \(error)")
        }
    }

    @Test(
        "Jitter and drift: after the fit, every sample within 3 ms of truth plus the floor",
        arguments: [(drift: 30.0, jitter: 0.02), (drift: -80, jitter: 0.05), (drift: 200, jitter: 0.01)])
    func jitterAndDrift(drift: Double, jitter: Double) {
        var stream = FrameStream(drift: drift, jitter: jitter)
        var clock = WaveformClock(sampleRate: 130)
        var errors: [Double] = []
        var previousEnd = -Double.infinity
        // 20 minutes of frames.
        for index in 0..<2137 {
            let frame = stream.frame(index)
            let placement = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
            let start = placement.start.timeIntervalSinceReferenceDate
            let end = start + 72 * placement.interval
            // Settled, no sample is placed after the frame that carried it arrived.
            if index >= 110 { #expect(end <= frame.arrival.timeIntervalSinceReferenceDate + 1e-9) }
            // From the first frame on, a continuous run stays evenly spaced: the model's moves
            // while it settles are taken at most 2 ms a frame.
            if index > 0 { #expect(abs(start - previousEnd - placement.interval) <= 0.002 + 1e-9, "frame \(index)") }
            if index >= 110 { errors.append(start - stream.truth(frame.firstSample) - stream.floor) }
            previousEnd = end
        }
        #expect(percentile(errors.map(abs), 0.5) < 0.0015)
        #expect(errors.map(abs).max()! < 0.003)
        // Host seconds per strap second − 1: a strap running fast by `drift` ppm reads −`drift`.
        #expect(abs(clock.drift! + drift * 1e-6) < 2e-6, "\(clock.drift!)")
    }

    @Test("Lost frames leave a gap: the next frame is not continuous and is not stretched over it")
    func lostFrames() {
        var stream = FrameStream(jitter: 0)
        var clock = WaveformClock(sampleRate: 130)
        for index in [0, 1, 2, 6, 7] {
            let frame = stream.frame(index)
            let placement = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
            #expect(placement.continuous == [1, 2, 7].contains(index), "frame \(index)")
            #expect(abs(placement.interval - 1 / 130) < 1e-6)
            let error = placement.start.timeIntervalSinceReferenceDate - stream.truth(frame.firstSample)
            #expect(abs(error - stream.floor) < 1e-4, "frame \(index)")
        }
    }

    @Test("A strap clock that jumps (power cycled) starts the model afresh", arguments: [-5_000.0, 3_600.0])
    func clockJump(jump: Double) {
        var stream = FrameStream(jitter: 0.01)
        var clock = WaveformClock(sampleRate: 130)
        for index in 0..<200 {
            let frame = stream.frame(index)
            _ = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
        }
        stream.sensorEpoch += jump
        for index in 200..<260 {
            let frame = stream.frame(index)
            let placement = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
            if index == 200 { #expect(!placement.continuous) }
            let error = placement.start.timeIntervalSinceReferenceDate - stream.truth(frame.firstSample)
            // Placed by the new clock, never by the old line (which is `jump` seconds away).
            #expect(error >= stream.floor - 1e-6 && error < stream.floor + 0.08, "frame \(index): \(error)")
        }
    }

    @Test(
        "A frame 2.5 s late (a backlog, a stalled host), then the burst behind it: placed by the model, not at arrival")
    func lateFrame() {
        var stream = FrameStream(jitter: 0.01)
        var clock = WaveformClock(sampleRate: 130)
        for index in 0..<400 {
            if index == 300 { stream.lastArrival = stream.truth((index + 1) * 73 - 1) + 2.5 }
            let frame = stream.frame(index)
            let placement = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
            guard index >= 300 else { continue }
            #expect(placement.continuous, "frame \(index)")
            let error = placement.start.timeIntervalSinceReferenceDate - stream.truth(frame.firstSample)
            #expect(abs(error - stream.floor) < 0.01, "frame \(index): \(error)")
        }
    }

    @Test("The host's clock set forward 10 s: after a block of late frames, placed on the new clock")
    func hostClockForward() {
        var stream = FrameStream(jitter: 0.01)
        var clock = WaveformClock(sampleRate: 130)
        for index in 0..<300 {
            let frame = stream.frame(index)
            _ = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
        }
        stream.hostEpoch += 10
        for index in 300..<400 {
            let frame = stream.frame(index)
            let placement = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
            guard index >= 300 + clock.blockSize else { continue }
            let error = placement.start.timeIntervalSinceReferenceDate - stream.truth(frame.firstSample)
            // On the new clock (not 10 s off); before its first fit the model leans with the drift.
            #expect(abs(error - stream.floor) < 0.08, "frame \(index): \(error)")
        }
    }

    @Test("The spacing is the strap's: a strap sampling at 130.2 Hz is placed at its own rate")
    func strapsOwnRate() {
        var stream = FrameStream(drift: 0, jitter: 0)
        stream.rate = 130.2
        var clock = WaveformClock(sampleRate: 130)
        var last: WaveformClock.Placement?
        for index in 0..<10 {
            let frame = stream.frame(index)
            last = clock.place(sensorTime: frame.sensorTime, sampleCount: 73, receivedAt: frame.arrival)
        }
        #expect(last?.continuous == true)
        #expect(abs(last!.interval - 1 / 130.2) < 1e-7)
    }
}
