import Foundation
import Testing

@testable import WorkoutStore

/// The stored form of a frame's values: deltas as zigzag varints behind a format byte.
@Suite("Waveform blobs: zigzag-varint deltas, refused when damaged")
struct WaveformBlobTests {
    @Test(
        "known bytes",
        arguments: [
            ([Int32](), 1, [UInt8]([1])),
            ([0], 1, [1, 0]),
            ([1], 1, [1, 2]),
            ([-1], 1, [1, 1]),
            ([63, 64], 1, [1, 0x7E, 0x02]),
            ([64], 1, [1, 0x80, 0x01]),
            // Each channel differs from its own previous sample: x 10→12, y −5→−5, z 1000→999.
            ([10, -5, 1000, 12, -5, 999], 3, [1, 20, 9, 0xD0, 0x0F, 4, 0, 1]),
            ([Int32.max, Int32.min], 1, [1, 0xFE, 0xFF, 0xFF, 0xFF, 0x0F, 0xFD, 0xFF, 0xFF, 0xFF, 0x1F]),
        ] as [([Int32], Int, [UInt8])])
    func knownBytes(values: [Int32], channels: Int, bytes: [UInt8]) throws {
        #expect(WaveformBlob.encode(values, channels: channels) == bytes)
        #expect(try WaveformBlob.decode(bytes, samples: values.count / channels, channels: channels) == values)
    }

    @Test("random frames round-trip, and a 73-sample ECG-like frame takes under two bytes a sample")
    func roundTrips() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let channels = Int.random(in: 1...3, using: &generator)
            let samples = Int.random(in: 0...200, using: &generator)
            let wide = Bool.random(using: &generator)
            let values = (0..<(samples * channels)).map { _ in
                wide
                    ? Int32.random(in: .min ... .max, using: &generator)
                    : Int32.random(in: -3000...3000, using: &generator)
            }
            let bytes = WaveformBlob.encode(values, channels: channels)
            #expect(try WaveformBlob.decode(bytes, samples: samples, channels: channels) == values)
        }
        let ecg = (0..<73).map { Int32((800 * sin(Double($0) / 5)).rounded()) }
        #expect(WaveformBlob.encode(ecg, channels: 1).count < 2 * 73)
    }

    @Test(
        "damaged blobs are refused with their reason",
        arguments: [
            ([UInt8](), 1, 1, WaveformBlob.Failure.empty),
            ([2, 0], 1, 1, .unknownFormat(2)),
            ([1, 0], 1, 4, .badShape(samples: 1, channels: 4)),
            ([1], 5_000, 3, .badShape(samples: 5_000, channels: 3)),
            ([1, 0x80], 1, 1, .truncated(offset: 2)),
            ([1, 0], 2, 1, .truncated(offset: 2)),
            ([1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], 1, 1, .outOfRange(offset: 1)),
            // 2^32 as a delta from zero: beyond 32 bits.
            ([1, 0x80, 0x80, 0x80, 0x80, 0x20], 1, 1, .outOfRange(offset: 1)),
            ([1, 0, 0], 1, 1, .trailingBytes(1)),
        ] as [([UInt8], Int, Int, WaveformBlob.Failure)])
    func damaged(bytes: [UInt8], samples: Int, channels: Int, failure: WaveformBlob.Failure) {
        #expect(throws: failure) { try WaveformBlob.decode(bytes, samples: samples, channels: channels) }
    }

    @Test("random bytes never trap: each is values or a typed failure")
    func randomBytes() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            if !bytes.isEmpty, Bool.random(using: &generator) { bytes[0] = 1 }
            let samples = Int.random(in: 0...20, using: &generator)
            let channels = Int.random(in: 0...4, using: &generator)
            do {
                let values = try WaveformBlob.decode(bytes, samples: samples, channels: channels)
                #expect(values.count == samples * channels)
            } catch {
                #expect(!String(describing: error).isEmpty)
            }
        }
    }
}
