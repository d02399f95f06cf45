// Builder benchmark: ingest rate of the live builder's core (statistics, zones, HRV, estimated
// energy all on) and its memory for a 24-hour workout at 4 Hz (345,600 heart-rate samples).
import Foundation
import Samples
import Workouts

#if canImport(Glibc)
    import Glibc
#endif

/// Resident set size in bytes, from /proc/self/statm.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

var hours = 24.0
var hertz = 4.0
var runs = 5
var batch = 4
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--hours": hours = Double(arguments.next() ?? "") ?? hours
    case "--hz": hertz = Double(arguments.next() ?? "") ?? hertz
    case "--runs": runs = Int(arguments.next() ?? "") ?? runs
    case "--batch": batch = Int(arguments.next() ?? "") ?? batch
    default:
        print("usage: BuilderBenchmark [--hours H] [--hz N] [--runs N] [--batch N]")
        exit(64)
    }
}

let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
let source = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "bench")
let count = Int(hours * 3600 * hertz)
// Heart rate wandering through every zone, and one RR interval per sample (HRV on).
var samples: [QuantitySample] = []
samples.reserveCapacity(count * 2)
for index in 0..<count {
    let time = Double(index) / hertz
    let heartRate = 120 + 50 * sin(time / 300)
    let date = start.addingTimeInterval(time)
    samples.append(
        try! QuantitySample(
            type: .heartRate, quantity: Quantity(unit: .countPerMinute, value: heartRate.rounded()), start: date,
            end: date, source: source))
    let rr = 60 / heartRate
    samples.append(
        try! QuantitySample(
            type: .heartbeatSeries, quantity: Quantity(unit: .second, value: rr),
            start: date.addingTimeInterval(-rr), end: date, source: source))
}
let profile = UserProfile(id: "bench", age: 35, sex: .male, weightKilograms: 75, restingHeartRate: 55)
let configuration = WorkoutConfiguration(activityType: .running, location: .indoor)

var rates: [Double] = []
var memoryDeltas: [Int] = []
var checksum = 0.0
for _ in 0..<runs {
    var collector = WorkoutCollector(configuration: configuration, profile: profile)
    try! collector.begin(at: start)
    let before = residentBytes()
    let clock = ContinuousClock()
    let elapsed = clock.measure {
        var index = 0
        while index < samples.count {
            let end = min(index + batch, samples.count)
            _ = try! collector.add(Array(samples[index..<end]))
            index = end
        }
    }
    let after = residentBytes()
    try! collector.end(at: start.addingTimeInterval(hours * 3600))
    let workout = try! collector.finish()
    checksum += workout.statistics[.heartRate]?.average ?? 0
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    rates.append(Double(samples.count) / seconds)
    memoryDeltas.append(after - before)
}
rates.sort()
memoryDeltas.sort()
let median = rates[rates.count / 2]
print(
    "samples=\(samples.count) (\(count) heart rate + \(count) RR) hours=\(hours) hz=\(hertz) batch=\(batch) runs=\(runs)"
)
print("median_samples_per_second=\(Int(median)) min=\(Int(rates.first!)) max=\(Int(rates.last!))")
print(
    "resident_growth_bytes_median=\(memoryDeltas[memoryDeltas.count / 2]) per_heart_rate_sample=\(Double(memoryDeltas[memoryDeltas.count / 2]) / Double(count))"
)
print("stored_zone_series_bytes=\(count * 16) checksum=\(checksum)")
