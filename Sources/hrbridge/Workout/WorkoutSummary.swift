import Foundation
import Samples
import Sensors
import Workouts

/// The end-of-workout summary printed on a terminal.
enum WorkoutSummary {
    static func text(_ workout: Workout, counters: LiveDataSource.Counters?, tracker: SensorTracker?) -> String {
        var lines: [String] = []
        let paused = workout.end.timeIntervalSince(workout.start) - workout.elapsedTime
        lines.append(
            "Workout: \(workout.configuration.activityType.rawValue), \(Format.clock(workout.elapsedTime)) elapsed"
                + (paused > 0 ? " (\(Format.clock(paused)) paused)" : ""))
        lines.append("")
        lines.append("Statistics")
        for type in QuantityType.allCases {
            guard let statistics = workout.statistics[type], statistics.sampleCount > 0 else { continue }
            let unit = statistics.unit.symbol
            if type.isPerDevice {
                // A battery is the sensor's, not the athlete's: each device's last value.
                lines.append("  \(type.rawValue): last per device (\(statistics.sampleCount) samples)")
                for (source, perSource) in statistics.bySource.sorted(by: { $0.key.address < $1.key.address }) {
                    lines.append(
                        "    \(source.name ?? source.address): \(Format.number(perSource.mostRecent)) \(unit)")
                }
                continue
            }
            if let sum = statistics.sum {
                lines.append(
                    "  \(type.rawValue): total \(Format.number(sum)) \(unit) (\(statistics.sampleCount) samples)")
            } else {
                lines.append(
                    "  \(type.rawValue): avg \(Format.number(statistics.average)) min \(Format.number(statistics.minimum))"
                        + " max \(Format.number(statistics.maximum)) last \(Format.number(statistics.mostRecent)) \(unit)"
                        + " (\(statistics.sampleCount) samples)")
            }
            if statistics.bySource.count > 1 {
                for (source, perSource) in statistics.bySource.sorted(by: { $0.key.address < $1.key.address }) {
                    let figure = perSource.sum ?? perSource.average
                    lines.append(
                        "    \(source.name ?? source.address): \(perSource.sum == nil ? "avg" : "total") \(Format.number(figure)) \(unit)"
                    )
                }
            }
        }
        for group in workout.zoneGroups {
            lines.append("")
            lines.append("Time in \(group.configuration.quantityType == .heartRate ? "heart-rate" : "power") zones")
            let total = max(group.totalDuration, 1)
            for duration in group.durations {
                let range =
                    switch (duration.zone.lower, duration.zone.upper) {
                    case (nil, let upper?): "< \(Format.number(upper))"
                    case (let lower?, nil): "≥ \(Format.number(lower))"
                    case (let lower?, let upper?): "\(Format.number(lower))–\(Format.number(upper))"
                    default: "all"
                    }
                lines.append(
                    "  Z\(duration.zone.index) \(range.padding(toLength: 9, withPad: " ", startingAt: 0)) "
                        + "\(Format.clock(duration.duration)) \(Format.bar(fraction: duration.duration / total))")
            }
        }
        lines.append("")
        lines.append("Events")
        if workout.events.isEmpty { lines.append("  none") }
        for event in workout.events {
            lines.append(
                "  \(event.kind.rawValue) at \(Format.clock(event.dateInterval.start.timeIntervalSince(workout.start)))"
            )
        }
        lines.append("")
        lines.append("Activities")
        for (index, activity) in workout.activities.enumerated() {
            let heartRate = activity.statistics[.heartRate]?.average
            lines.append(
                "  \(index + 1). \(activity.configuration.activityType.rawValue) "
                    + "\(Format.clock(activity.start.timeIntervalSince(workout.start)))"
                    + "–\(Format.clock((activity.end ?? workout.end).timeIntervalSince(workout.start)))"
                    + ", avg HR \(Format.number(heartRate))")
        }
        let hrv = workout.heartRateVariability
        lines.append("")
        lines.append(
            "HRV: RMSSD \(hrv.rmssd.map { String(format: "%.1f ms", $0 * 1000) } ?? "-"), "
                + "SDNN \(hrv.sdnn.map { String(format: "%.1f ms", $0 * 1000) } ?? "-") "
                + "(\(hrv.acceptedIntervals) intervals, \(hrv.rejectedIntervals) rejected as artefacts)")
        lines.append(contentsOf: alpha1Lines(workout))
        let energy = workout.activeEnergy
        lines.append(
            "Active energy: "
                + (energy.kilojoules.map { String(format: "%.0f kJ (%.0f kcal)", $0, $0 / 4.184) } ?? "unavailable")
                + " — \(energy.source.rawValue)")
        lines.append("")
        if let counters {
            lines.append(
                "Sensors: \(counters.measurements) frames, \(counters.decodingFailures) refused as malformed, "
                    + "\(counters.implausibleHeartRates) heart rates refused as implausible, "
                    + "\(counters.disconnections) disconnections, \(counters.samplesDelivered) samples recorded")
        } else {
            lines.append("Sensors:")
        }
        for source in workout.sources {
            lines.append("  \(source.name ?? source.address) (\(source.address))")
        }
        return lines.joined(separator: "\n")
    }

    /// DFA α1: the windows, artefacts and thresholds, with the honesty note.
    static func alpha1Lines(_ workout: Workout) -> [String] {
        guard let windows = workout.dfaAlpha1, let last = windows.last else {
            return ["DFA α1: none (under 2 minutes of beats, or no RR intervals)"]
        }
        var lines = [
            "DFA α1: \(windows.count) windows (\(windows.filter(\.isReliable).count) reliable), last "
                + "\(last.alpha1.map { String(format: "%.2f", $0) } ?? "-"), artefacts "
                + String(format: "%.1f %%", workout.artefactPercent ?? 0)
        ]
        if let thresholds = workout.hrvThresholds {
            func text(_ name: String, _ threshold: HRVThresholds.Threshold?) -> String {
                guard let threshold else { return "\(name) not reached" }
                return "\(name) \(String(format: "%.0f", threshold.heartRate)) bpm"
                    + (threshold.power.map { String(format: " / %.0f W", $0) } ?? "")
            }
            lines.append("  \(text("HRVT1 (α1 0.75)", thresholds.hrvt1)), \(text("HRVT2 (α1 0.5)", thresholds.hrvt2))")
            lines.append("  \(thresholds.note)")
        }
        return lines
    }
}
