public import Foundation
public import Sensors

/// Which stored raw-signal frames ``StoreBackend/waveforms(_:)`` returns: one workout's, in time
/// order, a page at a time (an hour of ECG is 6,400 frames).
public struct WaveformQuery: Hashable, Sendable {
    /// The workout.
    public var workout: UUID
    /// Only this strap's.
    public var sensor: SensorIdentity?
    /// Only this signal's.
    public var kind: WaveformKind?
    /// Only frames whose first sample is later than this (the last frame of the page before).
    public var after: Date?
    /// At most this many frames.
    public var limit: Int

    /// The largest page: a bound on what one read holds in memory.
    public static let maximumLimit = 10_000

    /// A query; `limit` is clamped to 1…``maximumLimit``.
    public init(
        workout: UUID, sensor: SensorIdentity? = nil, kind: WaveformKind? = nil, after: Date? = nil,
        limit: Int = 4_096
    ) {
        self.workout = workout
        self.sensor = sensor
        self.kind = kind
        self.after = after
        self.limit = min(max(limit, 1), Self.maximumLimit)
    }
}

/// What a workout holds of one strap's raw signal.
public struct WaveformSummary: Hashable, Sendable {
    /// The strap.
    public var sensor: SensorIdentity
    /// The signal.
    public var kind: WaveformKind
    /// The nominal rate of its frames (the highest, if it changed).
    public var sampleRate: Int
    /// Frames stored.
    public var frames: Int
    /// Samples stored (per channel).
    public var samples: Int
    /// Runs without a gap: one, plus one per frame that does not follow its predecessor.
    public var runs: Int
    /// The first sample's time.
    public var first: Date
    /// The last frame's first sample's time.
    public var last: Date

    public init(
        sensor: SensorIdentity, kind: WaveformKind, sampleRate: Int, frames: Int, samples: Int, runs: Int,
        first: Date, last: Date
    ) {
        self.sensor = sensor
        self.kind = kind
        self.sampleRate = sampleRate
        self.frames = frames
        self.samples = samples
        self.runs = runs
        self.first = first
        self.last = last
    }
}

/// The new frames of one transaction, per strap and signal, for the stream rollups both backends
/// keep (`waveformStream`): what ``WaveformSummary`` reads.
package struct WaveformStreamTally: Sendable {
    package var rate = 0
    package var frames = 0
    package var samples = 0
    /// Frames that do not follow their predecessor: each starts a run.
    package var breaks = 0
    /// Whether the earliest new frame follows an earlier one: a stream that began before its
    /// workout did, whose first stored frame starts a run all the same.
    package var earliestContinuous = false
    package var first = Double.infinity
    package var last = -Double.infinity

    package init() {}

    package mutating func add(start: Double, rate: Int, samples: Int, continuous: Bool) {
        self.rate = max(self.rate, rate)
        frames += 1
        self.samples += samples
        if !continuous { breaks += 1 }
        if start < first { earliestContinuous = continuous }
        first = min(first, start)
        last = max(last, start)
    }

    /// Runs a new stream row starts with.
    package var runsOfANewStream: Int { breaks + (earliestContinuous ? 1 : 0) }
}
