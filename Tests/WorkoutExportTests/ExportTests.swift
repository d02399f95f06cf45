import BusHarness
import Foundation
import FoundationXML
import Samples
import Sensors
import Testing
import WorkoutStore
import Workouts

@testable import WorkoutExport

private let strap = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "Strap")
private let start = Date(timeIntervalSince1970: 1_795_000_000)

private func sample(
    _ type: QuantityType, _ value: Double, _ seconds: Double, length: Double = 0, source: SampleSource = strap
) -> QuantitySample {
    try! QuantitySample(
        type: type, quantity: Quantity(unit: type.canonicalUnit, value: value),
        start: start.addingTimeInterval(seconds), end: start.addingTimeInterval(seconds + length), source: source)
}

/// A 20-minute multi-activity workout (running then cycling) with a pause, two laps, RR intervals,
/// Energy Expended and distance.
private func multiActivityWorkout(laps: [(start: Double, end: Double)] = [(0, 400), (400, 600)]) throws -> (
    Workout, [QuantitySample]
) {
    var collector = WorkoutCollector(
        configuration: WorkoutConfiguration(activityType: .running, location: .indoor),
        profile: UserProfile(id: "a", age: 35, sex: .male, weightKilograms: 70))
    try collector.begin(at: start)
    _ = try collector.beginActivity(WorkoutConfiguration(activityType: .running, location: .indoor), at: start)
    var samples: [QuantitySample] = []
    for second in 0..<1200 {
        let t = Double(second)
        if second == 600 {
            _ = try collector.endActivity(at: start.addingTimeInterval(600))
            _ = try collector.beginActivity(
                WorkoutConfiguration(activityType: .cycling, location: .indoor), at: start.addingTimeInterval(600))
        }
        var batch = [sample(.heartRate, Double(100 + second % 60), t)]
        let rr = 60 / Double(100 + second % 60)
        batch.append(sample(.heartbeatSeries, (rr * 1024).rounded() / 1024, t - rr, length: rr))
        if second % 10 == 9 { batch.append(sample(.activeEnergyBurned, 8, t - 10, length: 10)) }
        if second % 5 == 0 { batch.append(sample(.distance, 12.5, t)) }
        _ = try collector.add(batch.filter { $0.end >= start })
        samples += batch.filter { $0.end >= start }
    }
    _ = try collector.add(
        events: [
            WorkoutEvent(kind: .pause, date: start.addingTimeInterval(300)),
            WorkoutEvent(kind: .resume, date: start.addingTimeInterval(360)),
        ]
            + laps.map {
                WorkoutEvent(
                    kind: .lap,
                    dateInterval: DateInterval(
                        start: start.addingTimeInterval($0.start), end: start.addingTimeInterval($0.end)))
            })
    try collector.end(at: start.addingTimeInterval(1200))
    return (try collector.finish(), samples)
}

/// Decodes with Garmin's FIT SDK and returns its JSON.
private func garminDecode(_ bytes: [UInt8]) async throws -> [String: Any] {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).fit")
    try Data(bytes).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    return try await garminDecode(fitFile: file)
}

@Suite("Export")
struct ExportTests {
    @Test(
        "FIT: Garmin's SDK decodes it with integrity on; records, heart rates, timestamps, laps, sessions and RR match")
    func fitMultiActivity() async throws {
        let (workout, samples) = try multiActivityWorkout()
        let decoded = try await garminDecode(try FITExporter.export(workout, samples: samples))
        #expect(decoded["isFit"] as? Bool == true)
        #expect(decoded["integrity"] as? Bool == true)
        #expect((decoded["errors"] as? [String])?.isEmpty == true)
        #expect(decoded["fileType"] as? String == "activity")
        let heartRates = samples.filter { $0.type == .heartRate }
        #expect(decoded["records"] as? Int == heartRates.count)
        #expect(decoded["heartRates"] as? [Int] == heartRates.map { Int($0.canonicalValue) })
        #expect(decoded["timestamps"] as? [Int] == heartRates.map { Int($0.start.timeIntervalSince1970) })
        let rr = samples.filter { $0.type == .heartbeatSeries }.map { ($0.canonicalValue * 1000).rounded() / 1000 }
        #expect((decoded["rr"] as? [Double])?.count == rr.count)
        #expect(zip(decoded["rr"] as? [Double] ?? [], rr).allSatisfy { abs($0 - $1) < 0.0005 })
        let sessions = try #require(decoded["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["sport"] as? String } == ["running", "cycling"])
        #expect(sessions.map { $0["subSport"] as? String } == ["treadmill", "indoor_cycling"])
        #expect(sessions[0]["timer"] as? Double == 540, "600 s minus the 60 s pause")
        #expect(sessions[1]["timer"] as? Double == 600)
        let laps = try #require(decoded["laps"] as? [[String: Any]])
        #expect(laps.map { $0["timer"] as? Double } == [340, 200, 600], "two lap events, then the second session")
        #expect(
            laps[1]["avgHeartRate"] as? Int
                == workout.activities[0].statistics[.heartRate].map { _ in
                    let inLap = heartRates.filter {
                        $0.start >= start.addingTimeInterval(400) && $0.start < start.addingTimeInterval(600)
                    }
                    return Int((inLap.map(\.canonicalValue).reduce(0, +) / Double(inLap.count)).rounded())
                })
        #expect(laps[0]["maxHeartRate"] as? Int == 159)
        let activity = try #require((decoded["activity"] as? [[String: Any]])?.first)
        #expect(activity["sessions"] as? Int == 2)
        #expect(activity["timer"] as? Double == workout.elapsedTime)
        let events = (decoded["events"] as? [[String]]) ?? []
        #expect(events == [["timer", "start"], ["timer", "stop_all"], ["timer", "start"], ["timer", "stop_all"]])
        #expect(decoded["devices"] as? Int == 1)
        // DFA α1 and the artefact share as developer fields of the records, where windows ended.
        let fields = try #require(decoded["developerFields"] as? [[String: Any]])
        #expect(fields.map { $0["name"] as? String } == ["dfa_alpha1", "hrv_artefacts"])
        #expect(fields.map { $0["units"] as? String } == [nil, "%"], "α1 has no unit")
        let windows = (workout.dfaAlpha1 ?? []).filter { $0.alpha1 != nil }
        #expect(windows.count > 100, "\(windows.count) α1 windows in 20 minutes")
        let carried = try #require(decoded["developerRecords"] as? [[String: Any]])
        #expect(carried.count == windows.count)
        for (record, window) in zip(carried, windows) {
            #expect(record["timestamp"] as? Int == Int(window.date?.timeIntervalSince1970.rounded(.down) ?? 0))
            #expect(abs((record["dfa_alpha1"] as? Double ?? .nan) - (window.alpha1 ?? 0)) < 1e-5)
            #expect(abs((record["hrv_artefacts"] as? Double ?? .nan) - window.artefactPercent) < 1e-4)
        }
    }

    @Test("a heart-rate-only indoor workout is a valid FIT file")
    func heartRateOnly() async throws {
        var collector = WorkoutCollector(configuration: WorkoutConfiguration(activityType: .hiit, location: .indoor))
        try collector.begin(at: start)
        let samples = (0..<60).map { sample(.heartRate, 120, Double($0)) }
        _ = try collector.add(samples)
        try collector.end(at: start.addingTimeInterval(60))
        let decoded = try await garminDecode(try FITExporter.export(try collector.finish(), samples: samples))
        #expect(decoded["integrity"] as? Bool == true)
        #expect((decoded["errors"] as? [String])?.isEmpty == true)
        #expect(decoded["records"] as? Int == 60)
    }

    @Test("every format says how each heart rate came: FIT's heart_rate_via (Garmin's SDK reads it), CSV's via columns")
    func heartRateVia() async throws {
        var collector = WorkoutCollector(configuration: WorkoutConfiguration(activityType: .hiit, location: .indoor))
        try collector.begin(at: start)
        // 10 s through a link, 10 s heard only as a broadcast, 5 s from before anyone recorded it.
        let paths: [MeasurementPath?] =
            Array(repeating: .connection, count: 10) + Array(repeating: .advertisement, count: 10)
            + Array(repeating: nil, count: 5)
        let samples = paths.enumerated().map { second, via in
            try! QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: 120 + Double(second)),
                start: start.addingTimeInterval(Double(second)), end: start.addingTimeInterval(Double(second)),
                source: strap, metadata: SampleMetadata(via: via))
        }
        _ = try collector.add(samples)
        try collector.end(at: start.addingTimeInterval(25))
        let decoded = try await garminDecode(try FITExporter.export(try collector.finish(), samples: samples))
        #expect(decoded["integrity"] as? Bool == true)
        #expect((decoded["errors"] as? [String])?.isEmpty == true)
        let fields = try #require(decoded["developerFields"] as? [[String: Any]])
        #expect(fields.map { $0["name"] as? String } == ["heart_rate_via"])
        let carried = try #require(decoded["developerRecords"] as? [[String: Any]])
        #expect(
            carried.map { $0["heart_rate_via"] as? Int } == Array(repeating: 0, count: 10)
                + Array(repeating: 1, count: 10))
        #expect(carried.map { $0["timestamp"] as? Int } == (0..<20).map { Int(start.timeIntervalSince1970) + $0 })
        let long = try CSVExporter.long(samples).split(separator: "\n", omittingEmptySubsequences: false).dropFirst()
        let column = long.filter { !$0.isEmpty }.map {
            $0.split(separator: ",", omittingEmptySubsequences: false).last!
        }
        #expect(column == paths.map { Substring($0?.rawValue ?? "") })
        let wide = try CSVExporter.wide(samples).split(separator: "\n").dropFirst()
        #expect(wide.map { $0.split(separator: ",", omittingEmptySubsequences: false).last! } == column)
    }

    @Test("an empty workout is a clear error in every format")
    func empty() throws {
        var collector = WorkoutCollector(configuration: WorkoutConfiguration(activityType: .running))
        try collector.begin(at: start)
        try collector.end(at: start.addingTimeInterval(10))
        let workout = try collector.finish()
        #expect(throws: ExportError.emptyWorkout) { _ = try FITExporter.export(workout, samples: []) }
        #expect(throws: ExportError.emptyWorkout) { _ = try TCXExporter.export(workout, samples: []) }
        #expect(throws: ExportError.emptyWorkout) { _ = try CSVExporter.long([]) }
        #expect(ExportError.emptyWorkout.description == "the workout has no samples to export")
    }

    @Test(
        "FIT integers out of their type's range are written as invalid, never wrapped",
        arguments: [
            (300, FITWriter.BaseType.uint8, UInt64(0xFF)), (254, .uint8, 254), (255, .uint8, 0xFF), (-1, .uint8, 0xFF),
            (255, .byte, 255), (70_000, .uint16, 0xFFFF), (65_534, .uint16, 65_534),
            (-2, .sint16, 0xFFFF_FFFF_FFFF_FFFE),
            (40_000, .sint16, 0x7FFF), (1 << 33, .uint32, 0xFFFF_FFFF), (0, .uint32z, 0), (7, .uint32z, 7),
            (3, .enumeration, 3), (256, .enumeration, 0xFF),
        ] as [(Int64, FITWriter.BaseType, UInt64)])
    func outOfRange(_ number: Int64, _ type: FITWriter.BaseType, _ written: UInt64) {
        #expect(FITWriter.encoded(number, as: type) == written)
    }

    @Test("FIT CRC is CRC-16/ARC: the standard check value, and a file's CRC over itself is 0")
    func crc() throws {
        #expect(FITWriter.crc(Array("123456789".utf8)) == 0xBB3D)
        #expect(FITWriter.crc([]) == 0)
        let (workout, samples) = try multiActivityWorkout()
        let file = try FITExporter.export(workout, samples: samples)
        #expect(FITWriter.crc(file) == 0, "the trailing CRC makes the whole file check to zero")
        #expect(FITWriter.crc(Array(file.prefix(14))) == 0, "so does the header's")
    }

    @Test(
        "laps that leave stretches uncovered: each stretch is a lap of its own, TCX keeps every sample and FIT's laps add up to its sessions; distance runs on across laps"
    )
    func lapsWithGaps() async throws {
        // One lap marked from 100 s to 400 s: before it, after it and the second activity are laps too.
        let (workout, samples) = try multiActivityWorkout(laps: [(100, 400)])
        let text = try TCXExporter.export(workout, samples: samples)
        let collector = XMLCollector()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = collector
        #expect(parser.parse())
        #expect(collector.totalTimes == ["100.000", "240.000", "200.000", "600.000"], "300–360 s was paused")
        #expect(collector.heartRates == samples.filter { $0.type == .heartRate }.map { Int($0.canonicalValue) })
        let distances = collector.trackpointDistances
        #expect(zip(distances, distances.dropFirst()).allSatisfy { $0 <= $1 }, "a running total, never reset")
        let total = samples.filter { $0.type == .distance }.map(\.canonicalValue).reduce(0, +)
        #expect(distances.last.map { abs($0 - total) < 1e-6 } == true, "\(distances.last ?? -1) of \(total)")
        #expect(try await validateTCX(text) == [])

        let decoded = try await garminDecode(try FITExporter.export(workout, samples: samples))
        #expect(decoded["integrity"] as? Bool == true)
        let laps = try #require(decoded["laps"] as? [[String: Any]])
        #expect(laps.map { $0["timer"] as? Double } == [100, 240, 200, 600])
        let sessions = try #require(decoded["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["timer"] as? Double } == [540, 600], "the laps add up to each session")

        // A zero-length lap (an iteration that ended as it began) between two stretches without one.
        let (zero, zeroSamples) = try multiActivityWorkout(laps: [(0, 10), (30, 30), (40, 60)])
        let zeroCollector = XMLCollector()
        let zeroParser = XMLParser(data: Data(try TCXExporter.export(zero, samples: zeroSamples).utf8))
        zeroParser.delegate = zeroCollector
        #expect(zeroParser.parse())
        #expect(
            zeroCollector.totalTimes == ["10.000", "20.000", "10.000", "20.000", "480.000", "600.000"],
            "no stretch twice")
        #expect(
            zeroCollector.heartRates == zeroSamples.filter { $0.type == .heartRate }.map { Int($0.canonicalValue) })
    }

    @Test("TCX: a standard XML parser reads it; element order as the v2 schema requires; values match")
    func tcx() throws {
        let (workout, samples) = try multiActivityWorkout()
        let text = try TCXExporter.export(workout, samples: samples)
        let collector = XMLCollector()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = collector
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #expect(collector.root == "TrainingCenterDatabase")
        #expect(collector.namespace == "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2")
        // Lap_t: TotalTimeSeconds, DistanceMeters, Calories, AverageHeartRateBpm?, MaximumHeartRateBpm?,
        // Intensity, TriggerMethod, Track: required ones present, in this order.
        let required = ["TotalTimeSeconds", "DistanceMeters", "Calories", "Intensity", "TriggerMethod", "Track"]
        #expect(collector.lapChildren.count == 3)
        for children in collector.lapChildren {
            #expect(children.filter(required.contains) == required)
        }
        // Trackpoint_t: Time first; HeartRateBpm after DistanceMeters.
        #expect(collector.trackpointChildren.allSatisfy { $0.first == "Time" })
        #expect(collector.heartRates == samples.filter { $0.type == .heartRate }.map { Int($0.canonicalValue) })
        #expect(collector.activitySport == "Running")
        #expect(collector.totalTimes == ["340.000", "200.000", "600.000"])
    }

    @Test("CSV: the long format has a row per sample, the wide one a row per second")
    func csv() throws {
        let (_, samples) = try multiActivityWorkout()
        let long = try CSVExporter.long(samples).split(separator: "\n")
        #expect(long.first == "time,type,value,unit,source,counted,via")
        #expect(long.count == samples.count + 1)
        #expect(long.contains { $0.hasSuffix(",heartRate,100,count/min,C0:FF:EE:00:00:01,1,") })
        let wide = try CSVExporter.wide(samples).split(separator: "\n")
        #expect(wide.first == "time,heart_rate,rr_intervals,power,cadence,speed,distance,energy,heart_rate_via")
        let seconds = Set(samples.map { Int($0.start.timeIntervalSince1970.rounded(.down)) })
        #expect(wide.count == seconds.count + 1)
    }

    @Test("TCX validates against Garmin's own TrainingCenterDatabase v2 schema (xmllint)")
    func tcxSchema() async throws {
        let (workout, samples) = try multiActivityWorkout()
        let problems = try await validateTCX(try TCXExporter.export(workout, samples: samples))
        #expect(problems.isEmpty, "\(problems)")
        // The check can fail: a lap without its required Intensity is refused.
        let broken = try TCXExporter.export(workout, samples: samples).replacingOccurrences(
            of: "<Intensity>Active</Intensity>", with: "")
        #expect(try await !validateTCX(broken).isEmpty)
    }

    @Test(
        "two sensors on one person: every export carries the primary's energy and distance, though the other sensor delivered first"
    )
    func primaryAmounts() async throws {
        let band = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:02", name: "Band")
        var collector = WorkoutCollector(configuration: WorkoutConfiguration(activityType: .running, location: .indoor))
        collector.setPrimarySource(strap, for: .activeEnergyBurned)
        collector.setPrimarySource(strap, for: .distance)
        try collector.begin(at: start)
        var samples: [QuantitySample] = []
        for second in stride(from: 10, through: 600, by: 10) {
            let t = Double(second)
            var batch = [
                sample(.activeEnergyBurned, 9, t - 10, length: 10, source: band),
                sample(.distance, 30, t, source: band),
            ]
            batch += [
                sample(.heartRate, 120, t), sample(.activeEnergyBurned, 8, t - 10, length: 10),
                sample(.distance, 25, t),
            ]
            _ = try collector.add(batch)
            samples += batch
        }
        try collector.end(at: start.addingTimeInterval(600))
        let workout = try collector.finish()
        #expect(workout.sources.first == band, "the band delivered first")
        #expect(workout.activeEnergy.kilojoules == 480)
        #expect(workout.primarySource(for: .activeEnergyBurned) == strap)
        var old = workout
        old.primarySources = nil
        #expect(old.primarySource(for: .activeEnergyBurned) == strap, "a workout stored before: read from its sums")
        let kilocalories = Int((480 / 4.184).rounded())
        for stored in [workout, old] {
            let fit = try await garminDecode(try FITExporter.export(stored, samples: samples))
            let sessions = try #require(fit["sessions"] as? [[String: Any]])
            #expect(sessions.map { $0["calories"] as? Int } == [kilocalories])
            #expect(sessions.map { $0["distance"] as? Double } == [1500])
            let collector = XMLCollector()
            let parser = XMLParser(data: Data(try TCXExporter.export(stored, samples: samples).utf8))
            parser.delegate = collector
            #expect(parser.parse())
            #expect(collector.calories == [kilocalories])
            let primaries = CountedSamples.primaries(of: stored)
            let wide = try CSVExporter.wide(samples, primaries: primaries).split(separator: "\n").dropFirst()
            let energy = wide.compactMap { Double($0.split(separator: ",", omittingEmptySubsequences: false)[7]) }
            #expect(energy.reduce(0, +) == 480)
            let long = try CSVExporter.long(samples, primaries: primaries).split(separator: "\n").dropFirst()
            let counted = long.map { $0.split(separator: ",") }.filter { $0[1] == "activeEnergyBurned" && $0[5] == "1" }
            #expect(counted.compactMap { Double($0[2]) }.reduce(0, +) == 480)
        }
    }

    @Test(
        "the demo's workout: FIT (Garmin's SDK), TCX (Garmin's schema) and CSV carry the summary's energy, battery per device"
    )
    func demoTotals() async throws {
        let (directory, store, binary) = try scratchStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        // `make demo`'s workout, played as fast as possible (the same workout at any speed).
        let run = try Spawned(
            binary,
            [
                "workout", "run", "--activity", "running", "--speed", "max", "--age", "35", "--sex", "male",
                "--weight", "72", "--resting-hr", "55", "--store", store,
            ])
        #expect(await run.wait() == 0)
        let id = try #require(try await WorkoutStore(path: store).workouts().first?.id)
        let show = try Spawned(binary, ["workouts", "show", id.uuidString, "--json", "--store", store])
        #expect(await show.wait() == 0)
        let summary = try #require(
            show.output.last { $0.hasPrefix("{") }.flatMap {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            })
        let energy = try #require(summary["activeEnergy"] as? [String: Any])
        #expect(energy["source"] as? String == "sensor")
        let kilojoules = try #require(energy["kilojoules"] as? Double)
        let kilocalories = Int((kilojoules / 4.184).rounded())
        // The printed summary says the same, and shows the battery of each device, not a mean.
        let text = run.output.joined(separator: "\n")
        #expect(text.contains(String(format: "Active energy: %.0f kJ (%d kcal)", kilojoules, kilocalories)), "\(text)")
        #expect(text.contains("batteryLevel: last per device"))
        #expect(!text.contains("batteryLevel: avg"))
        // Every stored heart rate says it came through the simulated strap's link.
        let shown = try Spawned(binary, ["workouts", "show", id.uuidString, "--store", store])
        #expect(await shown.wait() == 0)
        let heartRates = try await WorkoutStore(path: store).samples(type: .heartRate, workout: id)
        #expect(!heartRates.isEmpty && heartRates.allSatisfy { $0.metadata.via == .connection })
        #expect(shown.output.contains("Heart rates: \(heartRates.count) through a link"), "\(shown.output.suffix(2))")
        func export(_ format: String, _ extra: [String] = []) async throws -> Data {
            let file = directory.appendingPathComponent("out-\(format)\(extra.count)").path
            let export = try Spawned(
                binary, ["workouts", "export", id.uuidString, "--format", format, "-o", file, "--store", store] + extra)
            #expect(await export.wait() == 0)
            return try Data(contentsOf: URL(fileURLWithPath: file))
        }
        let fit = try await garminDecode(Array(try await export("fit")))
        let sessions = try #require(fit["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["calories"] as? Int } == [kilocalories])
        let laps = try #require(fit["laps"] as? [[String: Any]])
        #expect(laps.map { $0["calories"] as? Int } == [kilocalories])
        let tcx = String(decoding: try await export("tcx"), as: UTF8.self)
        #expect(try await validateTCX(tcx).isEmpty)
        let collector = XMLCollector()
        let parser = XMLParser(data: Data(tcx.utf8))
        parser.delegate = collector
        #expect(parser.parse())
        #expect(collector.calories == [kilocalories])
        let wide = String(decoding: try await export("csv", ["--wide"]), as: UTF8.self).split(separator: "\n")
        let energyColumn = wide.dropFirst().compactMap {
            Double($0.split(separator: ",", omittingEmptySubsequences: false)[7])
        }
        #expect(abs(energyColumn.reduce(0, +) - kilojoules) < 1e-6)
        let long = String(decoding: try await export("csv"), as: UTF8.self).split(separator: "\n")
        #expect(long.first == "time,type,value,unit,source,counted,via")
        let counted = long.dropFirst().map { $0.split(separator: ",") }.filter {
            $0[1] == "activeEnergyBurned" && $0[5] == "1"
        }
        #expect(abs(counted.compactMap { Double($0[2]) }.reduce(0, +) - kilojoules) < 1e-6)
        let statistics = try #require(summary["statistics"] as? [String: Any])
        let battery = try #require(statistics["batteryLevel"] as? [String: Any])
        #expect(battery["average"] is NSNull, "no mean across devices")
        let devices = try #require(battery["bySource"] as? [[String: Any]])
        // Each device its own last value: the strap's reading at connection (the workout's first
        // second, on the simulator's timeline), the arm band's after draining.
        #expect(devices.map { $0["name"] as? String } == ["Virtual Strap A", "Virtual Arm Band B"])
        #expect(devices.map { $0["mostRecent"] as? Double } == [88, 9])
    }

    @Test("`hrbridge workouts export` writes a FIT file Garmin's SDK accepts; missing or empty workouts fail clearly")
    func command() async throws {
        let (directory, store, binary) = try scratchStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try Spawned(
            binary, ["workout", "run", "--json", "--speed", "max", "--duration", "3m", "--store", store])
        #expect(await run.wait() == 0)
        let id = try #require(try await WorkoutStore(path: store).workouts().first?.id)
        let fit = directory.appendingPathComponent("out.fit").path
        let export = try Spawned(
            binary, ["workouts", "export", id.uuidString, "--format", "fit", "-o", fit, "--store", store])
        #expect(await export.wait() == 0)
        let decoded = try await garminDecode(Array(try Data(contentsOf: URL(fileURLWithPath: fit))))
        #expect(decoded["integrity"] as? Bool == true)
        #expect((decoded["records"] as? Int ?? 0) > 150)
        for format in ["tcx", "csv"] {
            let other = try Spawned(
                binary, ["workouts", "export", id.uuidString, "--format", format, "-o", "-", "--store", store])
            #expect(await other.wait() == 0)
            #expect(other.output.count > 10)
        }
        let missing = try Spawned(binary, ["workouts", "export", UUID().uuidString, "--store", store])
        #expect(await missing.wait() == 66)
    }

    @Test(
        "CSV long: a strap heard through two adapters is one source, every row of its energy counted as the summary counts it"
    )
    func strapAcrossAdapters() throws {
        // The strap moves from this hub's radio to a gateway halfway; the band is another strap.
        let viaGateway = SampleSource(adapter: "room-2", address: strap.address, name: "Strap")
        let band = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:02", name: "Band")
        var collector = WorkoutCollector(configuration: WorkoutConfiguration(activityType: .running, location: .indoor))
        try collector.begin(at: start)
        var samples: [QuantitySample] = []
        for second in stride(from: 10, through: 600, by: 10) {
            let t = Double(second)
            let batch = [
                sample(.activeEnergyBurned, 8, t - 10, length: 10, source: second <= 300 ? strap : viaGateway),
                sample(.activeEnergyBurned, 9, t - 10, length: 10, source: band),
            ]
            _ = try collector.add(batch)
            samples += batch
        }
        try collector.end(at: start.addingTimeInterval(600))
        let workout = try collector.finish()
        #expect(workout.activeEnergy.kilojoules == 480, "the strap's 60 increments through both adapters")
        let rows = try CSVExporter.long(samples, primaries: CountedSamples.primaries(of: workout))
            .split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let strapRows = rows.filter { $0[4] == strap.address }
        #expect(strapRows.count == 60)
        #expect(strapRows.allSatisfy { $0[5] == "1" }, "through either adapter")
        #expect(rows.filter { $0[4] == band.address }.allSatisfy { $0[5] == "0" })
        let counted = rows.filter { $0[5] == "1" }.compactMap { Double($0[2]) }.reduce(0, +)
        #expect(counted == workout.activeEnergy.kilojoules)
    }

    @Test(
        "TCX writes a heart rate only within its schema's 1–255 bpm (a positiveByte), else leaves it out",
        arguments: [
            (300, nil), (255, 255), (255.4, 255), (255.5, nil), (1, 1), (0.5, 1), (0.4, nil), (-3, nil), (.nan, nil),
            (.infinity, nil),
        ] as [(Double, Int?)])
    func tcxHeartRateBounds(_ value: Double, _ written: Int?) {
        #expect(TCXExporter.beatsPerMinute(value) == written)
    }

    @Test(
        "TCX cadence is kept within its schema's 0–254",
        arguments: [(90.4, 90), (300, 254), (254, 254), (-5, 0), (.nan, nil), (-.infinity, nil)] as [(Double, Int?)])
    func tcxCadenceBounds(_ value: Double, _ written: Int?) {
        #expect(TCXExporter.revolutionsPerMinute(value) == written)
    }

    @Test("TCX: a 300 bpm reading is not written; Garmin's schema accepts the file")
    func tcxImplausibleHeartRate() async throws {
        var collector = WorkoutCollector(configuration: WorkoutConfiguration(activityType: .hiit, location: .indoor))
        try collector.begin(at: start)
        let samples = (0..<60).map { sample(.heartRate, $0 == 30 ? 300 : 120, Double($0)) }
        _ = try collector.add(samples)
        try collector.end(at: start.addingTimeInterval(60))
        let text = try TCXExporter.export(try collector.finish(), samples: samples)
        #expect(!text.contains("<Value>300</Value>"))
        #expect(!text.contains("MaximumHeartRateBpm"), "the lap's maximum is the 300")
        #expect(text.contains("<AverageHeartRateBpm><Value>123</Value></AverageHeartRateBpm>"))
        let read = XMLCollector()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = read
        #expect(parser.parse())
        #expect(read.heartRates == Array(repeating: 120, count: 59), "the 300 bpm second has no trackpoint")
        #expect(try await validateTCX(text) == [])
    }

    @Test(
        "FIT strings are cut between characters: valid UTF-8 of at most count − 1 bytes, then NUL",
        arguments: [
            ("ABCDEFÄ", 8, "ABCDEF"), ("ABCDEÄ", 8, "ABCDEÄ"), ("ÄÄÄÄ", 4, "Ä"), ("A\u{308}BC", 3, ""),
            ("🫀 Strap", 4, ""), ("Polar H10 Ä", 20, "Polar H10 Ä"), ("", 8, ""),
        ] as [(String, Int, String)])
    func fitStringCut(_ text: String, _ count: Int, _ expected: String) {
        var writer = FITWriter()
        writer.write(global: 23, [(.init(27, .string, count: count), .text(text))])
        let field = Array(writer.data.suffix(count))
        #expect(field.last == 0, "NUL-terminated")
        let written = field.prefix { $0 != 0 }
        #expect(written.count <= count - 1)
        #expect(String(validating: written, as: UTF8.self) == expected)
    }

    @Test(
        "FIT refuses a workout its date_time cannot hold, naming the time; TCX and CSV still write it",
        arguments: [
            (Date(timeIntervalSince1970: 0), true),  // before the FIT epoch: would be 0xFFFFFFFF
            (Date(timeIntervalSince1970: 631_065_600), true),  // the FIT epoch: read as time since power-on
            (Date(timeIntervalSince1970: 883_612_800), true),  // 1998-01-01: still below 0x10000000
            (Date(timeIntervalSince1970: 899_501_056), false),  // 1998-07-03T21:24:16Z: the first date FIT holds
            (Date(timeIntervalSince1970: 4_926_100_000), true),  // 2126-02-07: past the uint32
            (start, false),
        ] as [(Date, Bool)])
    func fitDateRange(_ date: Date, _ refused: Bool) throws {
        var collector = WorkoutCollector(configuration: WorkoutConfiguration(activityType: .hiit, location: .indoor))
        try collector.begin(at: date)
        let samples = (0..<60).map { second in
            try! QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: 120),
                start: date.addingTimeInterval(Double(second)), end: date.addingTimeInterval(Double(second)),
                source: strap)
        }
        _ = try collector.add(samples)
        try collector.end(at: date.addingTimeInterval(60))
        let workout = try collector.finish()
        if refused {
            #expect(throws: ExportError.dateOutsideFIT(date)) { _ = try FITExporter.export(workout, samples: samples) }
            #expect(ExportError.dateOutsideFIT(date).description.contains(date.formatted(.iso8601)))
        } else {
            #expect(throws: Never.self) { _ = try FITExporter.export(workout, samples: samples) }
        }
        #expect(throws: Never.self) { _ = try TCXExporter.export(workout, samples: samples) }
        #expect(throws: Never.self) { _ = try CSVExporter.long(samples) }
    }
}

/// A scratch folder with a store path in it, and the hrbridge binary beside the tests.
private func scratchStore() throws -> (directory: URL, store: String, binary: String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let binary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("hrbridge").path
    return (directory, directory.appendingPathComponent("store.sqlite").path, binary)
}

/// Garmin's TCX schema's verdict on `text` (xmllint; the schema comes from Debian's pytrainer
/// package, fetched by scripts/setup-python.sh): the problems it names, none when valid.
private func validateTCX(_ text: String) async throws -> [String] {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID().uuidString).tcx")
    try Data(text.utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let schema = packageRoot.appendingPathComponent(".venv/share/hrbridge-data/TrainingCenterDatabasev2.xsd").path
    let lint = try Spawned("/usr/bin/xmllint", ["--noout", "--schema", schema, file.path], label: "xmllint")
    let status = await lint.wait()
    return status == 0 ? [] : ["status \(String(describing: status))"] + lint.output
}

/// Collects what the TCX tests check.
private final class XMLCollector: NSObject, XMLParserDelegate {
    var root: String?
    var namespace: String?
    var lapChildren: [[String]] = []
    var trackpointChildren: [[String]] = []
    var heartRates: [Int] = []
    var trackpointDistances: [Double] = []
    var totalTimes: [String] = []
    var calories: [Int] = []
    var activitySport: String?
    private var path: [String] = []
    private var text = ""

    func parser(
        _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if root == nil {
            root = element
            namespace = attributes["xmlns"]
        }
        if element == "Activity" { activitySport = attributes["Sport"] }
        if path.last == "Lap" { lapChildren[lapChildren.count - 1].append(element) }
        if path.last == "Trackpoint" { trackpointChildren[trackpointChildren.count - 1].append(element) }
        if element == "Lap" { lapChildren.append([]) }
        if element == "Trackpoint" { trackpointChildren.append([]) }
        path.append(element)
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        if element == "Value", path.dropLast().last == "HeartRateBpm", path.contains("Trackpoint") {
            heartRates.append(Int(text) ?? -1)
        }
        if element == "DistanceMeters", path.dropLast().last == "Trackpoint" {
            trackpointDistances.append(Double(text) ?? -1)
        }
        if element == "TotalTimeSeconds" { totalTimes.append(text) }
        if element == "Calories", path.dropLast().last == "Lap" { calories.append(Int(text) ?? -1) }
        path.removeLast()
    }
}
