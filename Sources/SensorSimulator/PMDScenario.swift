/// A simulated strap's Polar Measurement Data service, as an H10 has it: raw ECG and acceleration
/// on request, stamped by the strap's own clock.
public struct PMDScenario: Hashable, Sendable {
    /// How much faster the strap's clock runs than the host's, in parts per million.
    public var clockDriftPPM: Double
    /// The mean of the radio's delay beyond its floor, in seconds (exponentially distributed).
    public var jitter: Double
    /// The radio's least delay from a frame's last sample to its arrival, in seconds.
    public var latencyFloor: Double
    /// Whether the strap answers a START request; one that does not keeps the caller waiting
    /// until it gives up (cancels).
    public var answersStart: Bool

    /// A PMD service; the defaults are within what H10s and Linux links show.
    public init(
        clockDriftPPM: Double = 30, jitter: Double = 0.02, latencyFloor: Double = 0.008, answersStart: Bool = true
    ) {
        self.clockDriftPPM = clockDriftPPM
        self.jitter = jitter
        self.latencyFloor = latencyFloor
        self.answersStart = answersStart
    }
}
