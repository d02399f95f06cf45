import Foundation
import GATT
import Logging
import SensorSimulator
import Sensors
import Testing

private let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)

private func h10(faults: [Fault] = [], pmd: PMDScenario? = PMDScenario()) -> Scenario {
    Scenario(
        seed: 11,
        straps: [
            StrapScenario(
                name: "Polar H10 0A1B2C3D", address: "A0:9E:1A:00:00:01",
                segments: [.steady(duration: 120, intensity: 0.3), .steady(duration: 600, intensity: 0.7)],
                faults: faults, pmd: pmd)
        ])
}

/// Everything a stepped run of `seconds` delivered, with ECG (and `acc`) started on connecting.
private func record(
    _ scenario: Scenario, seconds: Int, acc: WaveformRequest? = nil, stopECGAt: Int? = nil
) async throws -> [SensorEvent] {
    let mock = MockSensorAdapter(scenario: scenario, steppingFrom: origin, logger: Logger(label: "test"))
    let events = mock.events()
    let consumer = Task {
        var all: [SensorEvent] = []
        for await event in events { all.append(event) }
        return all
    }
    let strap = mock.sensors[0]
    try await mock.connect(strap)
    try await mock.startWaveform(WaveformRequest(kind: .ecg), for: strap)
    if let acc { try await mock.startWaveform(acc, for: strap) }
    for second in 1...seconds {
        await mock.step()
        if second == stopECGAt { try await mock.stopWaveform(.ecg, for: strap) }
    }
    await mock.finish(at: mock.timeline.now())
    return await consumer.value
}

private func waveforms(_ events: [SensorEvent], _ kind: WaveformKind) -> [SensorWaveform] {
    events.compactMap { if case .waveform(let frame) = $0, frame.kind == kind { frame } else { nil } }
}

@Suite("Simulated H10: raw ECG and acceleration through PMD frames and the strict decoders")
struct WaveformSimulationTests {
    @Test("ECG: 130 samples a second, each within 3 ms of its true time plus the radio floor, R peaks on the beats")
    func ecgOnTheBeats() async throws {
        let seconds = 300
        let events = try await record(h10(), seconds: seconds)
        #expect(
            events.contains(
                .waveformsAvailable(
                    SensorIdentity(adapter: "mock", address: "A0:9E:1A:00:00:01", name: "Polar H10 0A1B2C3D"),
                    [.ecg, .acc])))
        let frames = waveforms(events, .ecg)
        let samples = frames.reduce(0) { $0 + $1.sampleCount }
        #expect(abs(samples - seconds * 130) <= 73, "\(samples) samples in \(seconds) s")
        #expect(frames.allSatisfy { $0.sampleCount == 73 && $0.sampleRate == 130 })
        #expect(frames.dropFirst().allSatisfy(\.continuous) && frames.first?.continuous == false)
        // The truth: the simulation's own clock.
        var simulation = StrapSimulation(scenario: h10().straps[0], seed: 11)
        simulation.startWaveform(WaveformRequest(kind: .ecg))
        let model = simulation.waveforms!
        var errors: [Double] = []
        var times: [Double] = []
        var values: [Int32] = []
        for frame in frames {
            for index in 0..<frame.sampleCount {
                times.append(frame.time(ofSample: index).timeIntervalSince(origin))
                values.append(frame.values[index])
            }
            guard frame.receivedAt.timeIntervalSince(origin) > 60 else { continue }
            let truth = model.trueTime(ofSensorTime: frame.sensorTimestamp)
            let placed = frame.time(ofSample: frame.sampleCount - 1).timeIntervalSince(origin)
            errors.append(placed - truth - model.scenario.latencyFloor)
        }
        #expect(errors.map(abs).max()! < 0.003, "clock error after the first minute")
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 > $0 }, "sample times only go forward")
        // R peaks (local maxima over 700 µV) against the beats the strap reported as RR intervals.
        var peaks: [Double] = []
        for index in 1..<(values.count - 1)
        where values[index] > 700 && values[index] >= values[index - 1] && values[index] > values[index + 1] {
            peaks.append(times[index])
        }
        let reported = events.flatMap { event -> [Double] in
            guard case .measurement(let measurement) = event,
                case .heartRateMeasurement(let frame) = measurement.value
            else { return [] }
            return frame.rrIntervals.map(\.seconds)
        }
        let fromECG = zip(peaks, peaks.dropFirst()).map { $1 - $0 }
        #expect(fromECG.count > 200)
        // Find where the ECG's intervals line up with the reported ones, then compare them one by one.
        let offset = (0..<20).first { start in
            zip(fromECG.prefix(20), reported.dropFirst(start)).allSatisfy { abs($0 - $1) < 0.01 }
        }
        let aligned = try #require(offset, "the ECG's beats are the strap's beats")
        let pairs = zip(fromECG, reported.dropFirst(aligned))
        #expect(pairs.allSatisfy { abs($0 - $1) < 0.016 }, "each R–R from the ECG within 2 samples of the strap's RR")
    }

    @Test("A reconnect is a gap: no frame while the link is down, the stream starts again by itself")
    func reconnectGap() async throws {
        let events = try await record(h10(faults: [.disconnect(at: 30, duration: 10)]), seconds: 60)
        let frames = waveforms(events, .ecg)
        let broken = frames.indices.dropFirst().filter { !frames[$0].continuous }
        #expect(broken.count == 1)
        let gapStart = frames[broken[0] - 1].time(ofSample: 72).timeIntervalSince(origin)
        let gapEnd = frames[broken[0]].start.timeIntervalSince(origin)
        #expect(gapStart < 31 && gapEnd > 40 && gapEnd < 41.7, "\(gapStart)–\(gapEnd)")
        let samples = frames.reduce(0) { $0 + $1.sampleCount }
        let covered = frames.last!.time(ofSample: 72).timeIntervalSince(frames[0].start) - (gapEnd - gapStart)
        // Two runs of samples, each spanning one interval fewer than it has samples.
        #expect(abs(Double(samples) - covered * 130 - 2) <= 1, "\(samples) samples: nothing made up for the gap")
    }

    @Test("A dropout loses frames: the next is not continuous and keeps its own times")
    func dropout() async throws {
        let events = try await record(h10(faults: [.dropout(at: 20, duration: 3)]), seconds: 40)
        let frames = waveforms(events, .ecg)
        let broken = frames.indices.dropFirst().filter { !frames[$0].continuous }
        #expect(broken.count == 1)
        let hole = frames[broken[0]].start.timeIntervalSince(frames[broken[0] - 1].time(ofSample: 72))
        #expect(hole > 2 && hole < 4.2, "\(hole) s")
    }

    @Test("Acceleration: three axes in mG at the rate asked, gravity on z; stopping ECG stops its frames")
    func accelerationAndStop() async throws {
        let events = try await record(
            h10(), seconds: 60, acc: WaveformRequest(kind: .acc, sampleRate: 50), stopECGAt: 30)
        let acc = waveforms(events, .acc)
        let samples = acc.reduce(0) { $0 + $1.sampleCount }
        #expect(abs(samples - 60 * 50) <= 36)
        let z = acc.flatMap { frame in stride(from: 2, to: frame.values.count, by: 3).map { frame.values[$0] } }
        let meanZ = Double(z.reduce(0, +)) / Double(z.count)
        #expect(abs(meanZ - 1000) < 50, "\(meanZ) mG")
        let lastECG = try #require(waveforms(events, .ecg).last)
        #expect(lastECG.receivedAt.timeIntervalSince(origin) <= 30.001)
    }

    @Test("Refusals: a strap without PMD, a rate the H10 does not have, a strap not linked")
    func refusals() async throws {
        let plain = MockSensorAdapter(scenario: h10(pmd: nil), steppingFrom: origin, logger: Logger(label: "test"))
        let strap = plain.sensors[0]
        try await plain.connect(strap)
        await #expect(
            throws: SensorAdapterError.waveformUnavailable(
                strap, .ecg, "the strap has no Polar Measurement Data service")
        ) {
            try await plain.startWaveform(WaveformRequest(kind: .ecg), for: strap)
        }
        let mock = MockSensorAdapter(scenario: h10(), steppingFrom: origin, logger: Logger(label: "test"))
        let h10 = mock.sensors[0]
        await #expect(throws: SensorAdapterError.notConnected(h10)) {
            try await mock.startWaveform(WaveformRequest(kind: .ecg), for: h10)
        }
        try await mock.connect(h10)
        await #expect(
            throws: SensorAdapterError.waveformUnavailable(h10, .acc, "acc streams at 25, 50, 100, 200 Hz, not 30")
        ) {
            try await mock.startWaveform(WaveformRequest(kind: .acc, sampleRate: 30), for: h10)
        }
        await plain.shutdown()
        await mock.shutdown()
    }

    @Test("Scenario files: \"pmd\": true or its clock settings; nonsense refused")
    func scenarioKey() throws {
        func strap(_ pmd: String) -> String {
            """
            {"straps": [{"name": "H10", "address": "A0:9E:1A:00:00:01", "pmd": \(pmd),
              "segments": [{"type": "steady", "duration": "1m", "intensity": 0.5}]}]}
            """
        }
        #expect(try ScenarioParser.parse(Data(strap("true").utf8), file: "h10.json").straps[0].pmd == PMDScenario())
        #expect(try ScenarioParser.parse(Data(strap("false").utf8), file: "h10.json").straps[0].pmd == nil)
        #expect(
            try ScenarioParser.parse(Data(strap(#"{"clockDriftPpm": -40, "jitter": 0.05}"#).utf8), file: "h10.json")
                .straps[0].pmd
                == PMDScenario(clockDriftPPM: -40, jitter: 0.05))
        #expect(throws: (any Error).self) {
            try ScenarioParser.parse(Data(strap(#"{"clockDriftPpm": 5000}"#).utf8), file: "h10.json")
        }
        #expect(throws: (any Error).self) {
            try ScenarioParser.parse(Data(strap(#"{"drift": 5}"#).utf8), file: "h10.json")
        }
    }
}
