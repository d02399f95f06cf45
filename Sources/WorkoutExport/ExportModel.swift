import Foundation
import Samples
import Workouts

/// What the exporters need from a workout: its time slices and their figures.
struct ExportModel {
    /// A span of the workout with its figures: an activity (FIT session) or a lap.
    struct Span {
        let start: Date
        let end: Date
        let timerTime: TimeInterval
        let distance: Double?
        let kilocalories: Double?
        let averageHeartRate: Double?
        let maximumHeartRate: Double?
        let configuration: WorkoutConfiguration
    }

    let workout: Workout
    /// The samples in time order, amounts from their primary source only (``CountedSamples``).
    let samples: [QuantitySample]
    let pauses: [(start: Date, end: Date)]

    init(workout: Workout, samples: [QuantitySample]) throws(ExportError) {
        guard !samples.isEmpty else { throw .emptyWorkout }
        self.workout = workout
        self.samples = CountedSamples.filter(samples, primaries: CountedSamples.primaries(of: workout))
            .sorted { $0.start < $1.start }
        var pauses: [(Date, Date)] = []
        var open: Date?
        for event in workout.events.sorted(by: { $0.dateInterval.start < $1.dateInterval.start }) {
            if event.kind == .pause, open == nil { open = event.dateInterval.start }
            if event.kind == .resume, let start = open {
                pauses.append((start, event.dateInterval.start))
                open = nil
            }
        }
        if let open { pauses.append((open, workout.end)) }
        self.pauses = pauses
    }

    /// Seconds of `[start, end)` that were not paused.
    func timerTime(from start: Date, to end: Date) -> TimeInterval {
        guard end > start else { return 0 }
        let paused = pauses.reduce(0.0) { total, pause in
            total + max(0, min(pause.end, end).timeIntervalSince(max(pause.start, start)))
        }
        return end.timeIntervalSince(start) - paused
    }

    /// The figures of `[start, end)`; `totals`, when given, are the builder's own statistics of
    /// the span (the whole workout, an activity): its amounts are taken from them, so the files
    /// carry the summary's figures exactly.
    func span(
        from start: Date, to end: Date, configuration: WorkoutConfiguration,
        totals: [QuantityType: Statistics]? = nil
    ) -> Span {
        let inside = samples.filter { $0.start >= start && $0.start < end }
        let heartRates = inside.filter { $0.type == .heartRate }.map(\.canonicalValue)
        func amount(_ type: QuantityType) -> Double? {
            if let totals { return totals[type]?.sum }
            let values = inside.filter { $0.type == type }.map(\.canonicalValue)
            return values.isEmpty ? nil : values.reduce(0, +)
        }
        var kilocalories = amount(.activeEnergyBurned).map { $0 / 4.184 }
        if kilocalories == nil, workout.activeEnergy.source == .estimatedFromHeartRate,
            let total = workout.activeEnergy.kilocalories, workout.elapsedTime > 0
        {
            kilocalories = total * timerTime(from: start, to: end) / workout.elapsedTime
        }
        return Span(
            start: start, end: end, timerTime: timerTime(from: start, to: end),
            distance: amount(.distance), kilocalories: kilocalories,
            averageHeartRate: heartRates.isEmpty ? nil : heartRates.reduce(0, +) / Double(heartRates.count),
            maximumHeartRate: heartRates.max(), configuration: configuration)
    }

    /// Activities as sessions: the workout's activities, or the whole workout when it has none.
    var sessions: [Span] {
        let activities = workout.activities
        guard !activities.isEmpty else {
            return [
                span(
                    from: workout.start, to: workout.end, configuration: workout.configuration,
                    totals: workout.statistics)
            ]
        }
        return activities.map {
            span(from: $0.start, to: $0.end ?? workout.end, configuration: $0.configuration, totals: $0.statistics)
        }
    }

    /// The laps of a session, covering it end to end: its lap events, and a lap for each stretch
    /// no lap event covers (before the first, between two, after the last: a lap marks the one
    /// just finished, so the time after the last one is a lap too). TCX keeps trackpoints only
    /// inside laps, so a stretch without one would lose its samples. The session itself when it
    /// has no lap events.
    func laps(of session: Span) -> [Span] {
        let marked = workout.events.filter {
            $0.kind == .lap && $0.dateInterval.start >= session.start && $0.dateInterval.start < session.end
        }.sorted { $0.dateInterval.start < $1.dateInterval.start }
        guard !marked.isEmpty else { return [session] }
        var laps: [Span] = []
        var covered = session.start
        for event in marked {
            let start = max(event.dateInterval.start, covered)
            let end = min(event.dateInterval.end, session.end)
            if start > covered {
                laps.append(span(from: covered, to: start, configuration: session.configuration))
                covered = start
            }
            guard end > start else { continue }
            laps.append(span(from: start, to: end, configuration: session.configuration))
            covered = end
        }
        if covered < session.end {
            laps.append(span(from: covered, to: session.end, configuration: session.configuration))
        }
        return laps
    }
}
