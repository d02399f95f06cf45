import Foundation
import Logging
import SensorSimulator
import Sensors
import Synchronization
import Testing
import WorkoutRecording
import WorkoutStore
import Workouts

/// A workout records its straps' raw signals with it: the simulated H10's ECG and acceleration,
/// started because the setup asks, stored frame for frame, stopped at the finish.
@Suite("WorkoutRecorder: raw signals stored with the workout")
struct WaveformRecordingTests {
    let origin = Date(timeIntervalSinceReferenceDate: 800_000_000)

    func h10Scenario() -> Scenario {
        Scenario(
            seed: 11,
            straps: [
                StrapScenario(
                    name: "Polar H10 0A1B2C3D", address: "A0:9E:1A:00:00:01",
                    segments: [.steady(duration: 600, intensity: 0.4)], pmd: PMDScenario())
            ])
    }

    @Test(
        "the ECG and acceleration the strap sent during the workout are stored, frame for frame; the streams stop at the finish"
    )
    func storedFrameForFrame() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recorder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try WorkoutStore(path: directory.appendingPathComponent("store.sqlite").path)
        let logger = Logger(label: "test")
        let adapter = MockSensorAdapter(scenario: h10Scenario(), steppingFrom: origin, logger: logger)
        let clock = adapter.timeline
        let strap = try #require(adapter.sensors.first)
        // What the adapter sent, seen beside the recorder.
        let sent = Mutex<[SensorWaveform]>([])
        let events = adapter.events()
        let watcher = Task {
            for await event in events { if case .waveform(let frame) = event { sent.withLock { $0.append(frame) } } }
        }
        var setup = WorkoutRecorder.Setup(
            configuration: WorkoutConfiguration(activityType: .running, location: .indoor),
            profile: UserProfile(id: "lab", age: 30), sensors: [strap], store: store)
        setup.waveforms = [WaveformRequest(kind: .ecg), WaveformRequest(kind: .acc, sampleRate: 25, range: 4)]
        let recorder = try await WorkoutRecorder(
            setup, adapter: adapter, clock: clock, registry: WorkoutSessionRegistry(), logger: logger)
        await recorder.attach()
        try await adapter.connect(strap)
        for _ in 0..<5 { await adapter.step() }
        let start = clock.now()
        _ = try await recorder.begin(at: start)
        for _ in 0..<90 { await adapter.step() }
        let end = clock.now()
        // Detached as the daemon does: the strap stays linked, so a stream left running would go on.
        _ = try await recorder.finish(at: end, settle: .detach)
        await recorder.streamsEnded()
        watcher.cancel()

        let summaries = try await store.waveformSummaries(of: recorder.id)
        #expect(summaries.map(\.kind) == [.ecg, .acc])
        #expect(summaries.map(\.sampleRate) == [130, 25])
        for summary in summaries {
            let stored = try await store.waveforms(
                WaveformQuery(workout: recorder.id, kind: summary.kind, limit: 10_000))
            let expected = sent.withLock { frames in
                frames.filter {
                    $0.kind == summary.kind && $0.time(ofSample: $0.sampleCount - 1) >= start && $0.start <= end
                }
            }
            #expect(!stored.isEmpty && stored.count == expected.count, "\(summary.kind): every frame of the workout")
            #expect(stored.map(\.values) == expected.map(\.values))
            #expect(
                zip(stored, expected).allSatisfy { abs($0.start.timeIntervalSince($1.start)) < 1e-6 },
                "on the clock model's times")
            // 90 s at the nominal rate, within a frame at each end.
            let samples = stored.reduce(0) { $0 + $1.sampleCount }
            let perFrame = summary.kind == .ecg ? 73 : 36
            #expect(abs(samples - 90 * summary.sampleRate) <= 2 * perFrame, "\(summary.kind): \(samples) samples")
        }
        // Nothing before the workout began: the first stored frame reaches past the start.
        let first = try #require(try await store.waveforms(WaveformQuery(workout: recorder.id, limit: 1)).first)
        #expect(first.time(ofSample: first.sampleCount - 1) >= start)

        // Stopped at the finish (the strap's battery): more time brings no frame.
        let before = sent.withLock { $0.count }
        let more = adapter.events()
        let counter = Task {
            var frames = 0
            for await event in more { if case .waveform = event { frames += 1 } }
            return frames
        }
        for _ in 0..<10 { await adapter.step() }
        await adapter.finish(at: clock.now())
        #expect(await counter.value == 0, "no frame after the finish (\(before) before)")
    }
}
