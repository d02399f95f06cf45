// Decode benchmark: ns per Heart Rate Measurement frame over the gatt.md §5 vector mix.
// Allocations per frame are counted from outside by valgrind (see ../run.sh): this program only
// decodes `--frames` frames `--runs` times and prints the median time per frame.
import GATT

#if canImport(Glibc)
    import Glibc
#endif

/// The valid 0x2A37 vectors of gatt.md §5, plus the malformed ones (errors are part of real traffic).
let vectors: [[UInt8]] = [
    "00 55", "04 FF", "1E 55 32 00 21 00", "1F 01 01 32 01 01 00 02 01 FF FF", "01 2C 01", "09 2C 01 D0 07",
    "10 43 72 03", "10 67 72 03 8A 03 95 04", "18 43 D0 07 72 03", "06 43", "02 50", "0E 4B 80 00",
    "10 5A 00 08 00 10", "14 AA 8D 00", "1C AA 8D 00 8D 00", "16 42 18 04 70 01",
    "10 46 00 04 00 04 00 04 00 04 00 04 00 04 00 04 00 04 00 04",
    "19 2C 01 0A 00 00 04 00 04 00 04 00 04 00 04 00 04 00 04", "E0 46", "06 00", "08 46 FF FF",
    "10 C3 3C 01 3C 01 3C 01",
].map { text in
    text.split(separator: " ").map { UInt8($0, radix: 16)! }
}
let malformed: [[UInt8]] = [
    [0x17, 0x01, 0x01], [0x10, 0x48, 0x2C, 0x03, 0x01], [0x01, 0x2C], [0x08, 0x46, 0xD0], [0x00],
]

var frames = 1_000_000
var runs = 15
var includeMalformed = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--frames": frames = Int(arguments.next() ?? "") ?? frames
    case "--runs": runs = Int(arguments.next() ?? "") ?? runs
    case "--with-malformed": includeMalformed = true
    default:
        print("usage: DecodeBenchmark [--frames N] [--runs N] [--with-malformed]")
        exit(64)
    }
}
let mix = includeMalformed ? vectors + malformed : vectors

/// Decodes `count` frames round-robin over the mix; returns a checksum so nothing is optimised away.
@inline(never)
func decode(count: Int) -> Int {
    var checksum = 0
    for index in 0..<count {
        do {
            let measurement = try HeartRateMeasurement(bytes: mix[index % mix.count])
            checksum &+= Int(measurement.heartRate) &+ measurement.rrIntervals.count
        } catch {
            checksum &+= error.offset
        }
    }
    return checksum
}

let clock = ContinuousClock()
var perFrame: [Double] = []
var checksum = 0
for _ in 0..<runs {
    let elapsed = clock.measure { checksum &+= decode(count: frames) }
    let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    perFrame.append(nanoseconds / Double(max(frames, 1)))
}
perFrame.sort()
let median = perFrame.isEmpty ? 0 : perFrame[perFrame.count / 2]
let rrFrames = mix.filter { $0.count > 2 && $0[0] & 0x10 != 0 }.count
print("frames=\(frames) runs=\(runs) mix=\(mix.count) framesWithRR=\(rrFrames)")
print("median_ns_per_frame=\(String(median)) min=\(perFrame.first ?? 0) max=\(perFrame.last ?? 0) checksum=\(checksum)")
