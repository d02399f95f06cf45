// Store benchmark: batched ingest of one year of 1 Hz heart rate (31.5 million samples), then
// statistics collections with hourly and daily buckets over the whole year.
import Foundation
import Logging
import PostgresStore
import Samples
import Sensors
import WorkoutStore

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
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--days": days = Int(arguments.next() ?? "") ?? days
    case "--batch": batch = Int(arguments.next() ?? "") ?? batch
    case "--url": url = arguments.next()
    case "--ingest-only": skipQueries = true
    default:
        print("usage: StoreBenchmark [--days N] [--batch N] [--url postgresql://…] [--ingest-only]")
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
var written = 0
var ingestSeconds = 0.0
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
                end: date, source: source))
    }
    ingestSeconds += try await seconds { try await store.append(buffer, workout: nil) }
    written += buffer.count
}
let size = (store.sqlite.flatMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? Int }) ?? 0
print(
    "store=\(url == nil ? "sqlite" : "postgresql") ingested=\(written) batch=\(batch) samples_per_second=\(Int(Double(written) / ingestSeconds)) seconds=\(String(format: "%.1f", ingestSeconds)) file_mb=\(size / 1_000_000)"
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
