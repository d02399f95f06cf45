// Store benchmark: batched ingest of one year of 1 Hz heart rate (31.5 million samples), then
// statistics collections with hourly and daily buckets over the whole year.
import Foundation
import Logging
import PostgresStore
import Samples
import Sensors
import WorkoutStore
import Workouts

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

var days = 365
var batch = 10_000
var url: String?
var skipQueries = false
/// With N > 0, each batch is N workouts' samples (each its own strap) in one shared write, as a
/// recording gateway's group commit is: `--workouts 50 --batch 450` is its second at 4 Hz with RR.
var workouts = 0
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--days": days = Int(arguments.next() ?? "") ?? days
    case "--batch": batch = Int(arguments.next() ?? "") ?? batch
    case "--url": url = arguments.next()
    case "--ingest-only": skipQueries = true
    case "--workouts": workouts = Int(arguments.next() ?? "") ?? workouts
    default:
        print("usage: StoreBenchmark [--days N] [--batch N] [--workouts N] [--url postgresql://…] [--ingest-only]")
        exit(64)
    }
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "hrbridge-store-bench-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: directory) }
let store: WorkoutStore
if let url {
    store = WorkoutStore(
        backend: try await PostgresStore.open(
            try PostgresStoreLocation(url: url), stateDirectory: directory.path, logger: Logger(label: "bench")))
} else {
    store = try WorkoutStore(path: directory.appendingPathComponent("store.sqlite").path)
}
let source = SampleSource(adapter: "hci0", address: "C0:FF:EE:00:00:01", name: "bench")
let origin = Date(timeIntervalSinceReferenceDate: 788_918_400)  // 2026-01-01T00:00:00Z, hour-aligned
let total = days * 86_400
var workoutIDs: [UUID] = []
var workoutSources: [SampleSource] = []
for index in 0..<workouts {
    let id = UUID()
    try await store.beginWorkout(
        ActiveSessionRecord(
            workoutID: id, configuration: WorkoutConfiguration(activityType: .running), profile: nil, start: origin,
            state: .running))
    workoutIDs.append(id)
    workoutSources.append(
        SampleSource(adapter: "hci0", address: String(format: "C0:FF:EE:00:01:%02X", index), name: "bench \(index)"))
}
/// CPU seconds of the whole process (the writer's thread included).
func processCPU() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}
var written = 0
var ingestSeconds = 0.0
var ingestCPU = 0.0
var buffer: [QuantitySample] = []
buffer.reserveCapacity(batch)
while written < total {
    buffer.removeAll(keepingCapacity: true)
    for second in written..<min(written + batch, total) {
        let date = origin.addingTimeInterval(Double(second))
        let heartRate = 60 + 80 * (0.5 + 0.5 * sin(Double(second) / 3000))
        buffer.append(
            try QuantitySample(
                type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: heartRate.rounded()), start: date,
                end: date, source: workouts > 0 ? workoutSources[second % workouts] : source))
    }
    let batches = workoutIDs.indices.map { index in
        SampleBatch(
            workout: workoutIDs[index], samples: stride(from: index, to: buffer.count, by: workouts).map { buffer[$0] })
    }
    let cpuBefore = processCPU()
    if workouts > 0 {
        ingestSeconds += try await seconds { _ = try await store.backend.append(batches: batches) }
    } else {
        ingestSeconds += try await seconds { try await store.append(buffer, workout: nil) }
    }
    ingestCPU += processCPU() - cpuBefore
    written += buffer.count
}
let size = (store.sqlite.flatMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int }) ?? 0
print(
    "store=\(url == nil ? "sqlite" : "postgresql") ingested=\(written) batch=\(batch) workouts=\(workouts) samples_per_second=\(Int(Double(written) / ingestSeconds)) seconds=\(String(format: "%.1f", ingestSeconds)) cpu_us_per_sample=\(String(format: "%.2f", ingestCPU * 1e6 / Double(written))) file_mb=\(size / 1_000_000)"
)

if skipQueries { exit(0) }
let end = origin.addingTimeInterval(Double(total))
for interval in [StatisticsInterval.day, .hour] {
    var times: [Double] = []
    var buckets = 0
    for _ in 0..<5 {
        times.append(
            try await seconds {
                buckets = try await store.statisticsCollection(
                    type: .heartRate, from: origin, to: end, anchor: origin, interval: interval
                ).count
            })
    }
    times.sort()
    print(
        "collection=\(interval.rawValue) buckets=\(buckets) median_ms=\(String(format: "%.1f", times[2] * 1000)) min_ms=\(String(format: "%.1f", times[0] * 1000))"
    )
}
var dayOfMinutes: [Double] = []
for _ in 0..<5 {
    dayOfMinutes.append(
        try await seconds {
            _ = try await store.statisticsCollection(
                type: .heartRate, from: origin, to: origin.addingTimeInterval(86_400), anchor: origin, interval: .minute
            )
        })
}
dayOfMinutes.sort()
print(
    "collection=minute-over-one-day buckets=1440 median_ms=\(String(format: "%.1f", dayOfMinutes[2] * 1000)) (from the samples)"
)
