public import FoundationEssentials

/// Maps a strap's sample clock to the host clock, one frame at a time: a pure value.
///
/// A PMD frame carries the strap's time of its last sample; the host knows only when the frame
/// arrived, which is that time plus a transport delay that is never negative and jitters by tens
/// of milliseconds. The model: host = sensor + offset(sensor), with `offset` a straight line (the
/// two clocks' offset and their drift, tens of ppm). Only the frames that came fastest say where
/// the line is, so every `blockSize` frames the one with the smallest observed offset is kept; the
/// line has the least-squares slope through the last `blockCount` of those and runs under them,
/// touching the lowest. Until two blocks are in, the offset is the smallest seen so far, and no
/// frame's offset is taken later than its own arrival allows. The error left is the fastest
/// frames' delay (the radio's floor, a connection interval or less) plus the fit's noise;
/// docs/lab.md gives the measured figures.
///
/// Sample spacing comes from the strap's clock too: the time between consecutive frames' last
/// samples over the samples in between (Polar's own rule), else the nominal rate. A frame that
/// does not follow the previous one (frames lost, a reconnect) starts a new run: its samples are
/// not stretched over the hole. Within a run, samples stay evenly spaced: the model's corrections
/// (large while it settles, up to the first frames' delay) are taken at most 2 ms per frame, so a
/// run's first seconds carry the settling error rather than a step back. A strap clock that jumps back or
/// away (power cycled) starts the model afresh. A frame that follows on but comes seconds late (the
/// link's backlog, a stalled host) is placed by the model, not at its arrival; a whole block of them
/// in a row is the host's clock set forward, and starts the model afresh too.
public struct WaveformClock: Sendable {
    /// Where one frame's samples go on the host clock.
    public struct Placement: Hashable, Sendable {
        /// The host time of the first sample.
        public var start: Date
        /// Host seconds between samples.
        public var interval: Double
        /// Whether the frame follows the previous one without a missing sample.
        public var continuous: Bool
    }

    /// The nominal sample rate.
    public let sampleRate: Double
    /// Frames per block whose fastest frame is kept.
    public let blockSize: Int
    /// Blocks the line is fitted through.
    public let blockCount: Int

    /// The first frame's sensor time: sensor times are kept relative to it, in seconds.
    private var anchor: UInt64?
    private var previousSensorTime: UInt64?
    /// The host time given to the previous frame's last sample.
    private var previousLastSample: Double?
    /// The fastest frame of each finished block: (sensor seconds, host − sensor seconds).
    private var minima: [(sensor: Double, offset: Double)] = []
    private var blockMinimum: (sensor: Double, offset: Double)?
    private var framesInBlock = 0
    /// The fitted line: offset = intercept + slope × (sensor − pivot).
    private var line: (pivot: Double, intercept: Double, slope: Double)?
    /// Continuous frames in a row that came more than 2 s later than the model allows.
    private var lateFrames = 0

    /// A clock for a stream at `sampleRate`.
    public init(sampleRate: Double, blockSize: Int = 16, blockCount: Int = 64) {
        precondition(sampleRate > 0 && blockSize > 0 && blockCount >= 2)
        self.sampleRate = sampleRate
        self.blockSize = blockSize
        self.blockCount = blockCount
    }

    /// The clocks' drift as the fit sees it (host seconds per sensor second − 1), nil before the fit.
    public var drift: Double? { line?.slope }

    /// Places a frame of `sampleCount` samples whose last sample the strap stamped `sensorTime`
    /// (ns), received at `receivedAt`.
    public mutating func place(sensorTime: UInt64, sampleCount: Int, receivedAt: Date) -> Placement {
        let count = max(sampleCount, 1)
        let nominalSpan = Double(count) / sampleRate
        var continuous = false
        var sensorInterval = 1 / sampleRate
        if let previous = previousSensorTime, let anchor {
            if sensorTime <= previous || sensorTime < anchor {
                reset()
            } else {
                let span = Double(sensorTime - previous) / 1e9
                if abs(span - nominalSpan) <= 0.25 * nominalSpan {
                    continuous = true
                    sensorInterval = span / Double(count)
                }
            }
        }
        if anchor == nil { anchor = sensorTime }
        let sensor = Double(sensorTime - anchor!) / 1e9
        let observed = receivedAt.timeIntervalSinceReferenceDate - sensor
        var late = false
        if let estimate = offset(at: sensor), abs(observed - estimate) > 2 {
            if continuous, observed > estimate, lateFrames + 1 < blockSize {
                // Following on, only late (the link's backlog, a stalled host): placed by the model.
                late = true
                lateFrames += 1
            } else {
                // A clock that jumped (the strap restarted; the host's set forward, when a block of
                // frames in a row comes as late) no longer fits: start over.
                reset()
                anchor = sensorTime
                return place(sensorTime: sensorTime, sampleCount: sampleCount, receivedAt: receivedAt)
            }
        } else {
            lateFrames = 0
        }
        previousSensorTime = sensorTime
        // A late frame says nothing of where the line is.
        if !late { record(sensor: sensor, offset: observed) }
        let offset = min(offset(at: sensor) ?? observed, observed)
        let scale = 1 + (line?.slope ?? 0)
        let interval = sensorInterval * scale
        var last = sensor + offset
        if continuous, let previousLast = previousLastSample {
            // A continuous run stays continuous: the model's move (large while it settles) is
            // taken a little per frame, never as a step back over earlier samples.
            let continued = previousLast + Double(count) * interval
            let limit = min(0.002, 0.4 * interval)
            last = continued + max(-limit, min(limit, last - continued))
        }
        previousLastSample = last
        return Placement(
            start: Date(timeIntervalSinceReferenceDate: last - Double(count - 1) * interval), interval: interval,
            continuous: continuous)
    }

    /// Forgets the strap's clock (a new stream on a strap that may have restarted).
    public mutating func reset() {
        anchor = nil
        previousSensorTime = nil
        previousLastSample = nil
        minima = []
        blockMinimum = nil
        framesInBlock = 0
        line = nil
        lateFrames = 0
    }

    /// The model's offset at `sensor` seconds, nil before any frame.
    private func offset(at sensor: Double) -> Double? {
        if let line { return line.intercept + line.slope * (sensor - line.pivot) }
        let candidates = minima.map(\.offset) + (blockMinimum.map { [$0.offset] } ?? [])
        return candidates.min()
    }

    private mutating func record(sensor: Double, offset: Double) {
        if blockMinimum == nil || offset < blockMinimum!.offset { blockMinimum = (sensor, offset) }
        framesInBlock += 1
        guard framesInBlock >= blockSize, let minimum = blockMinimum else { return }
        minima.append(minimum)
        if minima.count > blockCount { minima.removeFirst(minima.count - blockCount) }
        blockMinimum = nil
        framesInBlock = 0
        fit()
    }

    private mutating func fit() {
        guard minima.count >= 2 else { return }
        let n = Double(minima.count)
        let pivot = minima.reduce(0) { $0 + $1.sensor } / n
        let mean = minima.reduce(0) { $0 + $1.offset } / n
        var covariance = 0.0
        var variance = 0.0
        for point in minima {
            covariance += (point.sensor - pivot) * (point.offset - mean)
            variance += (point.sensor - pivot) * (point.sensor - pivot)
        }
        // Clocks drift by ppm, never by percent: a wilder slope is noise over too short a span.
        let slope = variance > 0 ? max(-1e-3, min(1e-3, covariance / variance)) : 0
        // The line runs under every point it was fitted through, touching the lowest: each point
        // was a real arrival, which the true offset cannot follow.
        var intercept = mean
        for point in minima { intercept = min(intercept, point.offset - slope * (point.sensor - pivot)) }
        line = (pivot, intercept, slope)
    }
}
