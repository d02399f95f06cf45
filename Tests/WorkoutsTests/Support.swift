import Foundation
import Samples
import Sensors

@testable import Workouts

let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)
let strapA = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "A")
let strapB = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:02", name: "B")

func date(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

func sample(
    _ type: QuantityType, _ value: Double, at seconds: Double, source: SampleSource = strapA, length: Double = 0
)
    -> QuantitySample
{
    try! QuantitySample(
        type: type, quantity: Quantity(unit: type.canonicalUnit, value: value), start: date(seconds),
        end: date(seconds + length), source: source)
}

/// A seeded generator so random streams reproduce.
struct TestGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func isClose(_ a: Double?, _ b: Double?, _ tolerance: Double = 1e-9) -> Bool {
    switch (a, b) {
    case (nil, nil): true
    case (let a?, let b?): abs(a - b) <= tolerance * max(1, abs(b))
    default: false
    }
}
