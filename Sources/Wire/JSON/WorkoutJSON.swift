import Foundation
public import JSONSupport
public import Samples
public import Sensors
public import Workouts

/// The JSON shapes of workout values, shared by `--json` output, the API and the live stream.
public enum WorkoutJSON {
    /// A workout event: `{"end","start","type"}`.
    public struct Event: Codable, Sendable, Equatable {
        /// `pause`, `resume`, `lap`, `segment`, `marker`.
        public var type: String
        /// ISO 8601.
        public var start: String
        /// ISO 8601.
        public var end: String

        /// The event's JSON.
        public init(_ event: WorkoutEvent) {
            type = event.kind.rawValue
            start = ISO8601.format(event.dateInterval.start)
            end = ISO8601.format(event.dateInterval.end)
        }
    }

    /// A zone's bounds (null: open-ended).
    public struct Zone: Codable, Sendable, Equatable {
        /// 1-based.
        public var index: Int
        @Nullable public var lower: Double?
        @Nullable public var upper: Double?

        /// The zone's JSON.
        public init(_ zone: WorkoutZone) {
            index = zone.index
            lower = zone.lower
            upper = zone.upper
        }
    }

    /// A zone and the seconds spent in it.
    public struct ZoneDuration: Codable, Sendable, Equatable {
        public var index: Int
        @Nullable public var lower: Double?
        @Nullable public var upper: Double?
        /// Seconds.
        public var duration: Double

        /// The zone time's JSON.
        public init(_ duration: Workouts.ZoneDuration) {
            index = duration.zone.index
            lower = duration.zone.lower
            upper = duration.zone.upper
            self.duration = duration.duration
        }
    }

    /// Statistics of one quantity type, in `unit`.
    public struct Statistics: Codable, Sendable, Equatable {
        public var unit: String
        public var count: Int
        @Nullable public var min: Double?
        @Nullable public var max: Double?
        @Nullable public var average: Double?
        @Nullable public var mostRecent: Double?
        @Nullable public var sum: Double?
        /// Each device's own figures, for a per-device type (battery level); nil for the others.
        public var bySource: [DeviceStatistics]?

        /// The statistics' JSON.
        public init(_ statistics: Workouts.Statistics) {
            unit = statistics.unit.symbol
            count = statistics.sampleCount
            min = statistics.minimum
            max = statistics.maximum
            average = statistics.average
            mostRecent = statistics.mostRecent
            sum = statistics.sum
            if statistics.type.isPerDevice {
                bySource = statistics.bySource.sorted { $0.key.address < $1.key.address }.map(DeviceStatistics.init)
            }
        }

        /// Statistics by quantity type name.
        public static func byType(_ statistics: [QuantityType: Workouts.Statistics]) -> [String: Statistics] {
            Dictionary(uniqueKeysWithValues: statistics.map { ($0.key.rawValue, Statistics($0.value)) })
        }
    }

    /// One device's figures of a per-device type: its last value.
    public struct DeviceStatistics: Codable, Sendable, Equatable {
        public var sensor: String
        @Nullable public var name: String?
        public var count: Int
        @Nullable public var mostRecent: Double?
        @Nullable public var date: String?

        /// One device's JSON.
        public init(_ source: (key: SampleSource, value: Workouts.Statistics)) {
            sensor = source.key.address
            name = source.key.name
            count = source.value.sampleCount
            mostRecent = source.value.mostRecent
            date = source.value.mostRecentDate.map(ISO8601.format)
        }
    }

    /// An activity of a workout.
    public struct Activity: Codable, Sendable, Equatable {
        public var activityType: String
        public var start: String
        @Nullable public var end: String?
        public var elapsedTime: Double
        public var statistics: [String: Statistics]
        /// Heart-rate zone times.
        public var zones: [ZoneDuration]

        /// The activity's JSON.
        public init(_ activity: WorkoutActivity) {
            activityType = activity.configuration.activityType.rawValue
            start = ISO8601.format(activity.start)
            end = activity.end.map(ISO8601.format)
            elapsedTime = activity.elapsedTime
            statistics = Statistics.byType(activity.statistics)
            zones = WorkoutJSON.heartRateZones(activity.zoneGroups)
        }
    }

    /// A DFA α1 window (`hrv` live messages, the session's `alpha1`).
    public struct HRVWindow: Codable, Sendable, Equatable {
        /// Seconds into the workout.
        public var end: Double
        public var beats: Int
        @Nullable public var alpha1: Double?
        public var artefactPercent: Double
        /// Artefacts the window's correction found, by kind: `{"ectopic","extra","longShort","missed"}`.
        @Nullable public var artefacts: RRArtefactCounts?
        public var reliable: Bool
        public var heartRate: Double
        @Nullable public var power: Double?

        /// The window's JSON.
        public init(_ window: Workouts.HRVWindow) {
            end = window.end
            beats = window.beats
            alpha1 = window.alpha1
            artefactPercent = window.artefactPercent
            artefacts = window.artefacts
            reliable = window.isReliable
            heartRate = window.heartRate
            power = window.power
        }
    }

    /// An HRV threshold: where α1 crossed 0.75 (HRVT1) or 0.5 (HRVT2).
    public struct Threshold: Codable, Sendable, Equatable {
        public var alpha1: Double
        public var heartRate: Double
        @Nullable public var power: Double?
    }

    /// The DFA α1 part of a summary: windows, artefacts, the last value and the thresholds (the
    /// whole series: `hrbridge hrv analyze ID`).
    public struct Alpha1: Codable, Sendable, Equatable {
        public var windows: Int
        public var reliableWindows: Int
        @Nullable public var artefactPercent: Double?
        @Nullable public var last: Double?
        @Nullable public var hrvt1: Threshold?
        @Nullable public var hrvt2: Threshold?
        public var confident: Bool
        public var note: String

        /// The workout's α1 summary.
        public init(_ workout: Workout) {
            let series = workout.dfaAlpha1 ?? []
            let thresholds = workout.hrvThresholds
            windows = series.count
            reliableWindows = series.filter(\.isReliable).count
            artefactPercent = workout.artefactPercent
            last = series.last?.alpha1
            hrvt1 = thresholds?.hrvt1.map { Threshold(alpha1: $0.alpha1, heartRate: $0.heartRate, power: $0.power) }
            hrvt2 = thresholds?.hrvt2.map { Threshold(alpha1: $0.alpha1, heartRate: $0.heartRate, power: $0.power) }
            confident = thresholds?.confident ?? false
            note = thresholds?.note ?? "no α1 window: under 2 minutes of beats, or no RR intervals"
        }
    }

    /// Time-domain HRV over the workout.
    public struct TimeDomain: Codable, Sendable, Equatable {
        @Nullable public var rmssd: Double?
        @Nullable public var sdnn: Double?
        public var acceptedIntervals: Int
        public var rejectedIntervals: Int
    }

    /// Active energy and where it came from.
    public struct Energy: Codable, Sendable, Equatable {
        @Nullable public var kilojoules: Double?
        @Nullable public var kilocalories: Double?
        /// `measured`, `estimated`, `none`.
        public var source: String
    }

    /// A finished workout (`workout run --json`'s last line, `workouts show --json`, the API).
    public struct Summary: Codable, Sendable, Equatable {
        public var elapsedTime: Double
        public var statistics: [String: Statistics]
        public var zones: [ZoneDuration]
        public var events: [Event]
        public var activities: [Activity]
        public var hrv: TimeDomain
        public var dfaAlpha1: Alpha1
        public var activeEnergy: Energy

        /// The workout's summary.
        public init(_ workout: Workout) {
            let hrv = workout.heartRateVariability
            elapsedTime = workout.elapsedTime
            statistics = Statistics.byType(workout.statistics)
            zones = WorkoutJSON.heartRateZones(workout.zoneGroups)
            events = workout.events.map(Event.init)
            activities = workout.activities.map(Activity.init)
            self.hrv = TimeDomain(
                rmssd: hrv.rmssd, sdnn: hrv.sdnn, acceptedIntervals: hrv.acceptedIntervals,
                rejectedIntervals: hrv.rejectedIntervals)
            dfaAlpha1 = Alpha1(workout)
            activeEnergy = Energy(
                kilojoules: workout.activeEnergy.kilojoules, kilocalories: workout.activeEnergy.kilocalories,
                source: workout.activeEnergy.source.rawValue)
        }
    }

    /// A change of heart-rate (or power) zone while recording.
    public struct ZoneChange: Codable, Sendable, Equatable {
        public var type: String
        public var current: Int
        @Nullable public var previous: Int?
        @Nullable public var lower: Double?
        @Nullable public var upper: Double?
        public var date: String
        public var durations: [ZoneDuration]

        /// The change's JSON.
        public init(_ update: ZoneUpdate) {
            type = update.type.rawValue
            current = update.current.zone.index
            previous = update.previous?.zone.index
            lower = update.current.zone.lower
            upper = update.current.zone.upper
            date = ISO8601.format(update.lastSampleProcessedDate)
            durations = update.group.durations.map(ZoneDuration.init)
        }
    }

    public static func heartRateZones(_ groups: [ZoneGroup]) -> [ZoneDuration] {
        groups.first { $0.configuration.quantityType == .heartRate }?.durations.map(ZoneDuration.init) ?? []
    }
}
