import ArgumentParser
import Foundation
import Samples
import Sensors
import Wire
import WorkoutStore
import Workouts

/// `hrbridge hrv …`: heart-rate variability beyond the live figures.
struct HRVCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrv", abstract: "Heart-rate variability: artefacts, time domain, DFA α1, thresholds.",
        subcommands: [HRVAnalyzeCommand.self])
}

/// `hrbridge hrv analyze FILE|WORKOUT-ID`: the whole analysis as one JSON object.
struct HRVAnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Analyse an RR series (a file of milliseconds, or a stored workout) and print JSON.",
        discussion: """
            SOURCE is a file with one RR interval in milliseconds per line (blank lines and lines
            starting with # are skipped; `-` reads standard input), or the identifier of a stored
            workout, whose RR intervals (and power, when a power meter was used) are read from the store.

            Output: one JSON object: intervals, artefacts (by kind, with their percentage of the
            intervals; Lipponen & Tarvainen 2019, as NeuroKit2's kubios method; gaps: intervals over
            5 s, left out of every figure and counted as longShort too), the time domain of
            the corrected series (meanRR, rmssd, sdnn in ms, meanHeartRate in bpm, pnn50 in %; null
            under 3 intervals), dfaAlpha1 (one
            entry per 2-minute window every 5 s: end in seconds from the first beat, beats, alpha1 or
            null under 100 beats, artefactPercent, artefacts by kind, reliable = at most 5 % artefacts,
            heartRate, power) and
            thresholds (hrvt1 at α1 0.75, hrvt2 at 0.5, each null or with heartRate, and power when recorded; points,
            rSquared, confident, note).

            For a stored workout with ECG (recorded with --ecg from an H10), `ecg` compares, strap by
            strap, the strap's own RR intervals with those of the R peaks found in its ECG: rPeaks,
            strapBeats, pairedBeats, comparedIntervals, beatsWithoutPeak, peaksWithoutBeat, beatDelay
            (ms: how late the radio placed the beats), meanDifference, meanAbsoluteDifference,
            p95AbsoluteDifference, maximumAbsoluteDifference (ms, ECG minus strap) and agreeingPercent
            (within 8 ms). `--rr ecg` analyses the intervals between the R peaks instead of the
            strap's (never across a gap in the ECG).

            Exit status: 0 analysed; 64 --rr ecg for a file, or a workout without ECG; 65 a line that
            is not an interval (named with its line number); 66 no such file or workout; 73 store error.
            """)

    /// Whose intervals are analysed.
    enum Intervals: String, ExpressibleByArgument, CaseIterable {
        /// The strap's own RR intervals.
        case strap
        /// The intervals between the R peaks of the strap's ECG.
        case ecg
    }

    @Argument(help: "A file of RR intervals in ms (one per line), - for standard input, or a workout identifier.")
    var source: String

    @Option(help: "The store file, for a workout identifier (default: $XDG_DATA_HOME/hrbridge/store.sqlite).")
    var store: String?

    @Option(help: "For a workout: analyse the strap's own RR intervals (strap) or its ECG's R peaks (ecg).")
    var rr: Intervals = .strap

    /// Files larger than this are refused: 16 MiB holds over a million intervals.
    static let maximumFileSize = 16 << 20
    /// The intervals accepted, ms: 12–600 bpm, wider than any heart, narrower than nonsense.
    static let intervalRange = 100.0...5000.0

    func run() async throws {
        let intervals: [Double]
        var ends: [Int64]?
        var power: ((Double, Double) -> Double?)?
        var ecg: [HRVReport.ECGComparison]?
        if let workout = UUID(uuidString: source), !FileManager.default.fileExists(atPath: source) {
            let series = try await Self.workoutSeries(workout, store: store, intervals: rr)
            (intervals, ends, power, ecg) = (series.intervals, series.ends, series.power, series.ecg)
        } else {
            guard rr == .strap else {
                StandardError.write("hrbridge: --rr ecg needs a stored workout with ECG, not a file of intervals")
                throw ExitCode(64)
            }
            intervals = try Self.read(source)
        }
        let analysis = HRVAnalysis(intervals: intervals, ends: ends, power: power)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        var report = HRVReport(analysis)
        report.ecg = ecg
        print(String(decoding: try encoder.encode(report), as: UTF8.self))
    }

    /// Intervals from a file (or standard input), each line checked.
    static func read(_ path: String) throws -> [Double] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readData(ofLength: maximumFileSize + 1)
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                StandardError.write("hrbridge: cannot read \(path)")
                throw ExitCode(66)
            }
            do {
                data = try handle.read(upToCount: maximumFileSize + 1) ?? Data()
            } catch {
                // A directory opens but does not read (EISDIR): said, never an empty analysis.
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                StandardError.write(
                    "hrbridge: cannot read \(path)\(isDirectory.boolValue ? ": it is a directory" : "")")
                throw ExitCode(66)
            }
        }
        guard data.count <= maximumFileSize else {
            StandardError.write("hrbridge: \(path) is larger than \(maximumFileSize >> 20) MiB")
            throw ExitCode(65)
        }
        var intervals: [Double] = []
        // Any line ending: "\r\n" (a file from Windows or a spreadsheet) is one character to Swift.
        for (number, line) in String(decoding: data, as: UTF8.self).split(
            omittingEmptySubsequences: false, whereSeparator: \.isNewline
        ).enumerated() {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("#") { continue }
            guard let value = Double(text), value.isFinite, intervalRange.contains(value) else {
                StandardError.write(
                    "hrbridge: \(path):\(number + 1): '\(text.prefix(40))' is not an RR interval in ms (\(Int(intervalRange.lowerBound))–\(Int(intervalRange.upperBound)))"
                )
                throw ExitCode(65)
            }
            intervals.append(value)
        }
        return intervals
    }

    /// What a stored workout gives the analysis.
    struct WorkoutSeries {
        /// The intervals analysed (ms).
        var intervals: [Double]
        /// Their beats' places on the timeline the live tracker used (so gaps are gaps).
        var ends: [Int64]
        /// The mean power over a window, when a power meter was used.
        var power: ((Double, Double) -> Double?)?
        /// Each strap with ECG: its beats against its R peaks.
        var ecg: [HRVReport.ECGComparison]
    }

    /// A stored workout's RR intervals (ms, from the raw 1/1024 s values when stored) or its ECG's
    /// R-peak intervals, the beats' places on the timeline the live tracker used, a power lookup over
    /// its windows, and each ECG strap's beats compared with its R peaks.
    static func workoutSeries(_ id: UUID, store path: String?, intervals source: Intervals) async throws
        -> WorkoutSeries
    {
        let store: WorkoutStore
        guard FileManager.default.fileExists(atPath: path ?? WorkoutStore.defaultPath) else {
            StandardError.write(
                "hrbridge: no store at \(path ?? WorkoutStore.defaultPath): no workout \(id.uuidString)")
            throw ExitCode(66)
        }
        do {
            store = try WorkoutStore(path: path ?? WorkoutStore.defaultPath, guest: true)
            _ = try await store.workout(id)
        } catch .unknownWorkout {
            StandardError.write("hrbridge: no workout \(id.uuidString)")
            throw ExitCode(66)
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        }
        do {
            return try await workoutSeries(id, in: store, intervals: source)
        } catch let error as ExitCode {
            throw error
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(73)
        }
    }

    private static func workoutSeries(_ id: UUID, in store: WorkoutStore, intervals source: Intervals) async throws
        -> WorkoutSeries
    {
        let beats = try await store.samples(type: .heartbeatSeries, workout: id)
        let strapIntervals = beats.map { sample in
            sample.metadata.rawRRInterval.map { Double($0) * 1000 / 1024 } ?? sample.canonicalValue * 1000
        }
        var comparisons: [HRVReport.ECGComparison] = []
        var peakRunsOfBeatStrap: [[Double]]?
        for summary in try await store.waveformSummaries(of: id) where summary.kind == .ecg {
            var collector = ECGPeakCollector()
            try await store.forEachWaveformPage(workout: id, sensor: summary.sensor, kind: .ecg) { page in
                for frame in page { collector.add(frame) }
            }
            let runs = collector.finish()
            let strapBeats = zip(beats, strapIntervals).filter { $0.0.source.address == summary.sensor.address }
            comparisons.append(
                HRVReport.ECGComparison(
                    sensor: summary.sensor.address,
                    agreement: ECGBeatAgreement(
                        beats: strapBeats.map { (end: $0.0.end.timeIntervalSince1970, interval: $0.1) },
                        peakRuns: runs)))
            // The strap the workout's beats come from (else the first with ECG) gives `--rr ecg`.
            if peakRunsOfBeatStrap == nil
                || (!strapBeats.isEmpty && beats.first?.source.address == summary.sensor.address)
            {
                peakRunsOfBeatStrap = runs
            }
        }

        var timeline = BeatTimeline()
        let intervals: [Double]
        let ends: [Int64]
        switch source {
        case .strap:
            intervals = strapIntervals
            ends = zip(intervals, beats).map { interval, beat in
                timeline.place(interval: BeatClock.ticks(milliseconds: interval), end: beat.end)
            }
        case .ecg:
            guard let runs = peakRunsOfBeatStrap else {
                StandardError.write("hrbridge: workout \(id.uuidString) has no ECG (record with --ecg on an H10)")
                throw ExitCode(64)
            }
            // An interval from each R peak to the next in the same run: none across a gap.
            let pairs = runs.flatMap { run in zip(run, run.dropFirst()).map { (interval: ($1 - $0) * 1000, end: $1) } }
            intervals = pairs.map(\.interval)
            ends = pairs.map { pair in
                timeline.place(
                    interval: BeatClock.ticks(milliseconds: pair.interval), end: Date(timeIntervalSince1970: pair.end))
            }
        }
        let watts = try await store.samples(type: .cyclingPower, workout: id)
        guard let firstEnd = ends.first.flatMap({ timeline.date($0) }), !watts.isEmpty else {
            return WorkoutSeries(intervals: intervals, ends: ends, power: nil, ecg: comparisons)
        }
        // The first interval ends at the first beat: windows count from the first beat's start.
        let origin = firstEnd.addingTimeInterval(-intervals[0] / 1000)
        let points = watts.map { ($0.start.timeIntervalSince(origin), $0.canonicalValue) }
        let power: (Double, Double) -> Double? = { from, to in
            let inside = points.filter { $0.0 > from && $0.0 <= to }.map(\.1)
            return inside.isEmpty ? nil : inside.reduce(0, +) / Double(inside.count)
        }
        return WorkoutSeries(intervals: intervals, ends: ends, power: power, ecg: comparisons)
    }
}

/// The JSON of `hrbridge hrv analyze` (printed with sorted keys: a stable order).
struct HRVReport: Encodable {
    struct Artefacts: Encodable {
        var ectopic: Int
        var missed: Int
        var extra: Int
        /// Long or short intervals, the gaps among them.
        var longShort: Int
        /// Intervals over 5 s left out of every figure (``HRVAnalysis/gaps``).
        var gaps: Int
        var total: Int
        var percent: Double
    }

    var intervals: Int
    var artefacts: Artefacts
    var timeDomain: TimeDomainHRV?
    var dfaAlpha1: [WorkoutJSON.HRVWindow]
    var thresholds: Thresholds
    /// A stored workout's straps with ECG: their beats against their R peaks (nil: a file).
    var ecg: [ECGComparison]?

    /// One strap's beats against its ECG's R peaks, every figure present (null when none).
    struct ECGComparison: Encodable {
        var sensor: String
        var agreement: ECGBeatAgreement

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sensor, forKey: .sensor)
            try container.encode(agreement.rPeaks, forKey: .rPeaks)
            try container.encode(agreement.strapBeats, forKey: .strapBeats)
            try container.encode(agreement.pairedBeats, forKey: .pairedBeats)
            try container.encode(agreement.comparedIntervals, forKey: .comparedIntervals)
            try container.encode(agreement.beatsWithoutPeak, forKey: .beatsWithoutPeak)
            try container.encode(agreement.peaksWithoutBeat, forKey: .peaksWithoutBeat)
            try container.encode(agreement.beatDelay, forKey: .beatDelay)
            try container.encode(agreement.meanDifference, forKey: .meanDifference)
            try container.encode(agreement.meanAbsoluteDifference, forKey: .meanAbsoluteDifference)
            try container.encode(agreement.p95AbsoluteDifference, forKey: .p95AbsoluteDifference)
            try container.encode(agreement.maximumAbsoluteDifference, forKey: .maximumAbsoluteDifference)
            try container.encode(agreement.agreeingPercent, forKey: .agreeingPercent)
        }

        enum CodingKeys: String, CodingKey {
            case sensor, rPeaks, strapBeats, pairedBeats, comparedIntervals, beatsWithoutPeak, peaksWithoutBeat
            case beatDelay, meanDifference, meanAbsoluteDifference, p95AbsoluteDifference, maximumAbsoluteDifference
            case agreeingPercent
        }
    }

    /// The thresholds with explicit nulls.
    struct Thresholds: Encodable {
        var value: HRVThresholds

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(value.hrvt1, forKey: .hrvt1)
            try container.encode(value.hrvt2, forKey: .hrvt2)
            try container.encode(value.points, forKey: .points)
            try container.encode(value.rSquared, forKey: .rSquared)
            try container.encode(value.confident, forKey: .confident)
            try container.encode(value.note, forKey: .note)
        }

        enum CodingKeys: String, CodingKey {
            case hrvt1, hrvt2, points, rSquared, confident, note
        }
    }

    init(_ analysis: HRVAnalysis) {
        let found = analysis.correction.artefacts
        let gaps = analysis.gaps
        intervals = analysis.correction.inputCount + gaps
        // A gap counts as a long/short artefact of the series, as it does in each window.
        let total = found.count + gaps
        artefacts = Artefacts(
            ectopic: found.ectopic.count, missed: found.missed.count, extra: found.extra.count,
            longShort: found.longShort.count + gaps, gaps: gaps, total: total,
            percent: intervals == 0 ? 0 : 100 * Double(total) / Double(intervals))
        timeDomain = analysis.timeDomain
        dfaAlpha1 = analysis.windows.map(WorkoutJSON.HRVWindow.init)
        thresholds = Thresholds(value: analysis.thresholds)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(intervals, forKey: .intervals)
        try container.encode(artefacts, forKey: .artefacts)
        try container.encode(timeDomain?.meanRR, forKey: .meanRR)
        try container.encode(timeDomain?.meanHeartRate, forKey: .meanHeartRate)
        try container.encode(timeDomain?.rmssd, forKey: .rmssd)
        try container.encode(timeDomain?.sdnn, forKey: .sdnn)
        try container.encode(timeDomain?.pnn50, forKey: .pnn50)
        try container.encode(dfaAlpha1, forKey: .dfaAlpha1)
        try container.encode(thresholds, forKey: .thresholds)
        try container.encodeIfPresent(ecg, forKey: .ecg)
    }

    enum CodingKeys: String, CodingKey {
        case intervals, artefacts, meanRR, meanHeartRate, rmssd, sdnn, pnn50, dfaAlpha1, thresholds, ecg
    }
}
