// DFA α1 window update cost: what the builder does every 5 s per strap (artefact correction of
// the last 2 minutes of beats, then DFA over box sizes 4–16), at several heart rates, with and
// without artefacts; median of many runs, and the share of one core 60 straps would take.
//
// usage: HRVBenchmark [--runs 2000]
import Foundation
import Workouts

var runs = 2000
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    if argument == "--runs", let value = arguments.next().flatMap(Int.init) { runs = value }
}

struct Generator {
    var state: UInt64
    mutating func uniform() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }
    mutating func gaussian() -> Double {
        (-2 * log(max(uniform(), 1e-12))).squareRoot() * cos(2 * .pi * uniform())
    }
}

/// Two minutes of beats at `heartRate`, correlated, with `artefacts` missed beats per 100.
func window(heartRate: Double, artefacts: Int, generator: inout Generator) -> [Double] {
    let mean = 60_000 / heartRate
    var wander = 0.0
    var beats: [Double] = []
    var total = 0.0
    while total < 120_000 {
        wander = 0.9 * wander + 0.43 * generator.gaussian()
        let beat = (mean * (1 + 0.03 * wander)).rounded()
        beats.append(beat)
        total += beat
    }
    var index = 10
    while artefacts > 0, index < beats.count - 10 {
        beats[index] += beats[index + 1]
        beats.remove(at: index + 1)
        index += 100 / artefacts
    }
    return beats
}

func nanoseconds(_ body: () -> Void) -> Double {
    var start = timespec()
    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    body()
    clock_gettime(CLOCK_MONOTONIC, &end)
    return Double(end.tv_sec - start.tv_sec) * 1e9 + Double(end.tv_nsec - start.tv_nsec)
}

print(
    "| heart rate | beats in the window | artefacts | median µs per window (p10–p90) | 60 straps every 5 s, share of a core |"
)
print("|---|---|---|---|---|")
var generator = Generator(state: 2026)
var sink = 0.0
for heartRate in [60.0, 120.0, 180.0] {
    for artefacts in [0, 3] {
        let beats = window(heartRate: heartRate, artefacts: artefacts, generator: &generator)
        var times: [Double] = []
        for _ in 0..<runs {
            times.append(nanoseconds { sink += HRVAnalysis.window(beats, end: 120, power: nil).alpha1 ?? 0 })
        }
        times.sort()
        let median = times[times.count / 2] / 1000
        let share = 60 * median / 5_000_000 * 100
        print(
            String(
                format: "| %.0f bpm | %d | %d %% | %.1f (%.1f–%.1f) | %.3f %% |", heartRate, beats.count, artefacts,
                median,
                times[times.count / 10] / 1000, times[times.count * 9 / 10] / 1000, share))
    }
}
if sink.isNaN { print("") }
