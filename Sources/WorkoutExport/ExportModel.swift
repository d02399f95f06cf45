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
    let samples: [QuantitySample]
    let pauses: [(start: Date, end: Date)]

    init(workout: Workout, samples: [QuantitySample]) throws(ExportError) {
        guard !samples.isEmpty else { throw .emptyWorkout }
        self.workout = workout
        self.samples = samples.sorted { $0.start < $1.start }
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

    /// The figures of `[start, end)`.
    func span(from start: Date, to end: Date, configuration: WorkoutConfiguration) -> Span {
        let inside = samples.filter { $0.start >= start && $0.start < end }
        let heartRates = inside.filter { $0.type == .heartRate }.map(\.canonicalValue)
        let distances = inside.filter { $0.type == .distance }.map(\.canonicalValue)
        let energy = inside.filter { $0.type == .activeEnergyBurned && primary($0) }.map(\.canonicalValue)
        var kilocalories = energy.isEmpty ? nil : energy.reduce(0, +) / 4.184
        if kilocalories == nil, workout.activeEnergy.source == .estimatedFromHeartRate,
            let total = workout.activeEnergy.kilocalories, workout.elapsedTime > 0
        {
            kilocalories = total * timerTime(from: start, to: end) / workout.elapsedTime
        }
        return Span(
            start: start, end: end, timerTime: timerTime(from: start, to: end),
            distance: distances.isEmpty ? nil : distances.reduce(0, +), kilocalories: kilocalories,
            averageHeartRate: heartRates.isEmpty ? nil : heartRates.reduce(0, +) / Double(heartRates.count),
            maximumHeartRate: heartRates.max(), configuration: configuration)
    }

    /// Energy from the primary strap only, as the builder counts it.
    private func primary(_ sample: QuantitySample) -> Bool {
        guard let first = workout.sources.first else { return true }
        let energySources = Set(samples.filter { $0.type == .activeEnergyBurned }.map(\.source))
        return energySources.count <= 1 || sample.source == (energySources.contains(first) ? first : sample.source)
    }

    /// Activities as sessions: the workout's activities, or the whole workout when it has none.
    var sessions: [Span] {
        let activities = workout.activities
        guard !activities.isEmpty else {
            return [span(from: workout.start, to: workout.end, configuration: workout.configuration)]
        }
        return activities.map { span(from: $0.start, to: $0.end ?? workout.end, configuration: $0.configuration) }
    }

    /// The laps of a session: its lap events, or the session itself when it has none.
    func laps(of session: Span) -> [Span] {
        let laps = workout.events.filter {
            $0.kind == .lap && $0.dateInterval.start >= session.start && $0.dateInterval.start < session.end
        }
        guard !laps.isEmpty else { return [session] }
        return laps.map {
            span(
                from: $0.dateInterval.start, to: min($0.dateInterval.end, session.end),
                configuration: session.configuration)
        }
    }
}
