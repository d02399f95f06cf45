import Foundation

/// Pause and resume markers in date order, and the paused intervals they make.
///
/// Backdated markers are inserted where they belong. A pause while paused, or a resume while
/// running, is ignored at its date.
struct PauseTimeline: Sendable {
    private(set) var markers: [(date: Date, isPause: Bool)] = []
    /// Paused intervals; the last may be open (`end == nil`).
    private(set) var pauses: [(start: Date, end: Date?)] = []

    /// Whether the workout is paused just after every marker at or before `date`.
    func isPaused(at date: Date) -> Bool {
        var paused = false
        for marker in markers where marker.date <= date {
            if marker.isPause { paused = true } else { paused = false }
        }
        return paused
    }

    /// Inserts a marker; returns `false` when it is redundant at its date and was ignored.
    mutating func insert(isPause: Bool, at date: Date) -> Bool {
        guard isPaused(at: date) != isPause else { return false }
        let index = markers.firstIndex { $0.date > date } ?? markers.count
        markers.insert((date, isPause), at: index)
        rebuild()
        return true
    }

    private mutating func rebuild() {
        pauses = []
        var openStart: Date?
        for marker in markers {
            if marker.isPause, openStart == nil {
                openStart = marker.date
            } else if !marker.isPause, let start = openStart {
                pauses.append((start, marker.date))
                openStart = nil
            }
        }
        if let openStart { pauses.append((openStart, nil)) }
    }

    /// Seconds paused within `[from, to)`.
    func pausedDuration(from: Date, to: Date) -> TimeInterval {
        guard to > from else { return 0 }
        var total = 0.0
        for pause in pauses {
            let start = max(pause.start, from)
            let end = min(pause.end ?? to, to)
            if end > start { total += end.timeIntervalSince(start) }
        }
        return total
    }

    /// Calls `body` with each running (not paused) part of `[from, to)`, without allocating.
    func forEachActiveSegment(from: Date, to: Date, _ body: (Date, Date) -> Void) {
        guard to > from else { return }
        guard !pauses.isEmpty else { return body(from, to) }
        var cursor = from
        for pause in pauses {
            let pauseEnd = pause.end ?? .distantFuture
            if pauseEnd <= cursor { continue }
            if pause.start >= to { break }
            if pause.start > cursor { body(cursor, pause.start) }
            cursor = max(cursor, pauseEnd)
            if cursor >= to { return }
        }
        if cursor < to { body(cursor, to) }
    }

    /// The running (not paused) parts of `[from, to)`.
    func activeSegments(from: Date, to: Date) -> [(start: Date, end: Date)] {
        guard to > from else { return [] }
        guard !pauses.isEmpty else { return [(from, to)] }
        var segments: [(start: Date, end: Date)] = []
        var cursor = from
        for pause in pauses {
            let pauseEnd = pause.end ?? .distantFuture
            if pauseEnd <= cursor { continue }
            if pause.start >= to { break }
            if pause.start > cursor { segments.append((cursor, pause.start)) }
            cursor = max(cursor, pauseEnd)
            if cursor >= to { break }
        }
        if cursor < to { segments.append((cursor, to)) }
        return segments
    }
}
