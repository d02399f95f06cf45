import Foundation
public import Sensors

/// Waits between the steps of a stepped ``MockSensorAdapter`` so that it plays at a pace.
///
/// Step N is due N intervals after the first wait began, on `clock`: a step that came late (a
/// slow consumer) is followed by shorter waits until the run is back on schedule. Waiting is all
/// it does: what a step emits, and when in simulated time, is the simulator's alone.
public struct SimulationPacer: Sendable {
    /// The pace kept.
    public let pace: SimulationPace
    private let clock: any WallClock
    private var start: Date?
    private var stepsWaitedFor = 0

    /// Creates a pacer keeping `pace` on `clock` (the real clock unless a test injects one).
    public init(pace: SimulationPace, clock: any WallClock = SystemWallClock()) {
        self.pace = pace
        self.clock = clock
    }

    /// Waits until the next step is due (at once at the maximum pace); throws `CancellationError`
    /// when the task is cancelled.
    public mutating func waitForNextStep() async throws {
        guard let interval = pace.secondsBetweenSteps else { return }
        let start = self.start ?? clock.now()
        self.start = start
        stepsWaitedFor += 1
        try await clock.sleep(until: start.addingTimeInterval(Double(stepsWaitedFor) * interval))
    }
}
