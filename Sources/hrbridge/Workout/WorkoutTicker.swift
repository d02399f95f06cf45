import Foundation
import SensorSimulator
import Sensors
import WorkoutRecording

/// How `workout run` moves from one moment of the workout to the next.
///
/// On the simulator a tick is one simulated second: the pacer waits (not at all at `--speed max`),
/// the simulator plays the second, and the tick ends once the recorder and the live view have
/// handled everything it emitted. What is recorded is then a function of the scenario and seed
/// alone, at any speed. Real straps are waited for on the clock, ten ticks a second.
struct WorkoutTicker {
    private enum Source {
        case simulator(MockSensorAdapter, SimulationPacer, WorkoutRecorder)
        case clock(any WallClock)
    }

    private var source: Source

    /// Ticks that step `simulator` at `pace` and wait for `recorder`'s handlers after each step.
    static func simulated(_ simulator: MockSensorAdapter, pace: SimulationPace, recorder: WorkoutRecorder)
        -> WorkoutTicker
    {
        WorkoutTicker(source: .simulator(simulator, SimulationPacer(pace: pace), recorder))
    }

    /// Ticks every tenth of a second on `clock`.
    static func realTime(_ clock: any WallClock) -> WorkoutTicker { WorkoutTicker(source: .clock(clock)) }

    /// Waits until what the simulator emitted so far (connecting its straps) has been handled.
    func settle() async {
        guard case .simulator(let simulator, _, let recorder) = source else { return }
        await simulator.waitUntilEventsConsumed()
        await recorder.waitUntilHandlersCaughtUp()
    }

    /// Moves to the next tick; on a clock, never past `end`.
    mutating func next(before end: Date) async throws {
        switch source {
        case .simulator(let simulator, var pacer, let recorder):
            try await pacer.waitForNextStep()
            source = .simulator(simulator, pacer, recorder)
            await simulator.step()
            await recorder.waitUntilHandlersCaughtUp()
        case .clock(let clock):
            try await clock.sleep(until: min(end, clock.now().addingTimeInterval(0.1)))
        }
    }
}
