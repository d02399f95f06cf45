/// Which beats each DFA α1 window holds: windows end every ``HRVAnalysis/step`` on a grid from
/// the first beat's start and hold the beats that end after the window's start and at or before
/// its end. A window is due when the first beat at or past its end arrives; after a gap the grid
/// moves on to the next point past that beat. All times are ``BeatClock`` ticks, so membership at
/// the edges is exact.
struct AlphaWindowing: Hashable, Sendable {
    static let length = BeatClock.ticksPerSecond * Int64(HRVAnalysis.windowLength)
    static let step = BeatClock.ticksPerSecond * Int64(HRVAnalysis.step)

    private var ends: [Int64] = []
    private var intervals: [Double] = []
    private var first = 0
    private var due = length

    /// A window that became due: its end (ticks) and its raw intervals (ms).
    struct Due {
        var end: Int64
        var intervals: [Double]
    }

    /// Adds a beat of `milliseconds` ending at `end` (ticks, not before the last beat).
    mutating func add(milliseconds: Double, end: Int64) -> Due? {
        ends.append(end)
        intervals.append(milliseconds)
        guard end >= due else { return nil }
        let start = due - Self.length
        while first < ends.count, ends[first] <= start { first += 1 }
        var upper = ends.count
        while upper > first, ends[upper - 1] > due { upper -= 1 }
        let window = Due(end: due, intervals: Array(intervals[first..<upper]))
        // The next window ends one step later, or at the first grid point past a gap.
        due += Self.step
        if due <= end { due += (end - due) / Self.step * Self.step + Self.step }
        compact()
        return window
    }

    /// Drops what no window can reach any more.
    private mutating func compact() {
        guard first > 1024, first * 2 > ends.count else { return }
        ends.removeFirst(first)
        intervals.removeFirst(first)
        first = 0
    }
}
