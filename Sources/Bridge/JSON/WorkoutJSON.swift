import Foundation
import Samples
public import Workouts

/// JSON shapes of workout values for `--json`.
public enum WorkoutJSON {
    /// The JSON object of a workout event.
    public static func event(_ event: WorkoutEvent) -> [String: Any] {
        [
            "type": event.kind.rawValue, "start": ISO8601.format(event.dateInterval.start),
            "end": ISO8601.format(event.dateInterval.end),
        ]
    }

    /// The JSON object of a zone and its time.
    public static func zoneDuration(_ duration: ZoneDuration) -> [String: Any] {
        [
            "index": duration.zone.index, "lower": duration.zone.lower.map { $0 as Any } ?? NSNull(),
            "upper": duration.zone.upper.map { $0 as Any } ?? NSNull(), "duration": duration.duration,
        ]
    }

    /// The JSON object of statistics.
    public static func statistics(_ statistics: Statistics) -> [String: Any] {
        func value(_ number: Double?) -> Any { number.map { $0 as Any } ?? NSNull() }
        return [
            "unit": statistics.unit.symbol, "count": statistics.sampleCount, "min": value(statistics.minimum),
            "max": value(statistics.maximum), "average": value(statistics.average),
            "mostRecent": value(statistics.mostRecent), "sum": value(statistics.sum),
        ]
    }

    /// The JSON object of an activity.
    public static func activity(_ activity: WorkoutActivity) -> [String: Any] {
        [
            "activityType": activity.configuration.activityType.rawValue, "start": ISO8601.format(activity.start),
            "end": activity.end.map { ISO8601.format($0) as Any } ?? NSNull(), "elapsedTime": activity.elapsedTime,
            "statistics": Dictionary(
                uniqueKeysWithValues: activity.statistics.map { ($0.key.rawValue, statistics($0.value)) }),
            "zones": activity.zoneGroups.first { $0.configuration.quantityType == .heartRate }?.durations
                .map(zoneDuration) ?? [],
        ]
    }

    /// The JSON object of a DFA α1 window.
    public static func hrvWindow(_ window: HRVWindow) -> [String: Any] {
        [
            "end": window.end, "beats": window.beats, "alpha1": window.alpha1.map { $0 as Any } ?? NSNull(),
            "artefactPercent": window.artefactPercent,
            "artefacts": window.artefacts.map { counts -> Any in
                [
                    "ectopic": counts.ectopic, "missed": counts.missed, "extra": counts.extra,
                    "longShort": counts.longShort,
                ]
            } ?? NSNull(),
            "reliable": window.isReliable, "heartRate": window.heartRate,
            "power": window.power.map { $0 as Any } ?? NSNull(),
        ]
    }

    /// The JSON object of a threshold, or null.
    static func threshold(_ threshold: HRVThresholds.Threshold?) -> Any {
        guard let threshold else { return NSNull() }
        return [
            "alpha1": threshold.alpha1, "heartRate": threshold.heartRate,
            "power": threshold.power.map { $0 as Any } ?? NSNull(),
        ]
    }

    /// The DFA α1 part of a summary: windows, artefacts, the last value and the thresholds (the
    /// whole series: `hrbridge hrv analyze ID`).
    public static func alpha1(_ workout: Workout) -> [String: Any] {
        let windows = workout.dfaAlpha1 ?? []
        let thresholds = workout.hrvThresholds
        return [
            "windows": windows.count, "reliableWindows": windows.filter(\.isReliable).count,
            "artefactPercent": workout.artefactPercent.map { $0 as Any } ?? NSNull(),
            "last": windows.last?.alpha1.map { $0 as Any } ?? NSNull(),
            "hrvt1": threshold(thresholds?.hrvt1), "hrvt2": threshold(thresholds?.hrvt2),
            "confident": thresholds?.confident ?? false,
            "note": thresholds?.note ?? "no α1 window: under 2 minutes of beats, or no RR intervals",
        ]
    }

    /// The JSON object of a finished workout.
    public static func summary(_ workout: Workout) -> [String: Any] {
        let hrv = workout.heartRateVariability
        return [
            "elapsedTime": workout.elapsedTime,
            "statistics": Dictionary(
                uniqueKeysWithValues: workout.statistics.map { ($0.key.rawValue, statistics($0.value)) }),
            "zones": workout.zoneGroups.first { $0.configuration.quantityType == .heartRate }?.durations
                .map(zoneDuration) ?? [],
            "events": workout.events.map(event),
            "activities": workout.activities.map(activity),
            "hrv": [
                "rmssd": hrv.rmssd.map { $0 as Any } ?? NSNull(), "sdnn": hrv.sdnn.map { $0 as Any } ?? NSNull(),
                "acceptedIntervals": hrv.acceptedIntervals, "rejectedIntervals": hrv.rejectedIntervals,
            ],
            "dfaAlpha1": alpha1(workout),
            "activeEnergy": [
                "kilojoules": workout.activeEnergy.kilojoules.map { $0 as Any } ?? NSNull(),
                "kilocalories": workout.activeEnergy.kilocalories.map { $0 as Any } ?? NSNull(),
                "source": workout.activeEnergy.source.rawValue,
            ],
        ]
    }
}
