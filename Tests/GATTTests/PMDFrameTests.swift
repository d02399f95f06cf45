import Testing

@testable import GATT

/// Writes delta blocks as Polar's sensors do (least significant bit first): the tests' encoder,
/// so decoded frames can be checked against the samples they came from.
private func deltaPayload(_ samples: [[Int32]], resolution: Int, width: Int, perBlock: Int = 255) -> [UInt8] {
    let valueBytes = (resolution + 7) / 8
    var payload: [UInt8] = []
    for value in samples[0] {
        for index in 0..<valueBytes { payload.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
    var rest = Array(samples.dropFirst())
    var previous = samples[0]
    while !rest.isEmpty {
        let block = Array(rest.prefix(perBlock))
        rest.removeFirst(block.count)
        payload += [UInt8(width), UInt8(block.count)]
        var bits: [Bool] = []
        for sample in block {
            for channel in sample.indices {
                let delta = UInt32(bitPattern: sample[channel] &- previous[channel])
                for index in 0..<width { bits.append(delta >> UInt32(index) & 1 == 1) }
            }
            previous = sample
        }
        var byte: UInt8 = 0
        for (index, bit) in bits.enumerated() {
            if bit { byte |= 1 << UInt8(index % 8) }
            if index % 8 == 7 {
                payload.append(byte)
                byte = 0
            }
        }
        if bits.count % 8 != 0 { payload.append(byte) }
    }
    return payload
}

private func triples(_ values: [(Int32, Int32, Int32)]) -> [AccelerationFrame.Sample] {
    values.map { AccelerationFrame.Sample(x: $0.0, y: $0.1, z: $0.2) }
}

@Suite("Polar PMD frames: ECG and acceleration, raw and delta-compressed")
struct PMDFrameTests {
    /// Polar's data-frame tests' header: ACC, 2,000,000,000 ns, raw frame type 1.
    @Test("the header: measurement type, the last sample's time in ns, frame type and the compression bit")
    func header() throws {
        let frame = try PMDFrame(bytes: hex("02 00 94 35 77 00 00 00 00 01"))
        #expect(frame.measurement == .acceleration && frame.timestamp == 2_000_000_000)
        #expect(frame.frameType == 1 && !frame.isCompressed && frame.payload.isEmpty)
        let compressed = try PMDFrame(bytes: hex("05 FF FF FF FF FF FF FF 7F 80"))
        #expect(compressed.measurement == .gyroscope && compressed.timestamp == UInt64(Int64.max))
        #expect(compressed.frameType == 0 && compressed.isCompressed)
        #expect(compressed.encoded() == hex("05 FF FF FF FF FF FF FF 7F 80"))
    }

    /// Polar's ECG type 0 test: `02 80 FF` is −32,766 µV, `02 80 00` 32,770.
    @Test("ECG type 0: signed 24-bit little-endian µV, oldest first")
    func ecg() throws {
        let ecg = try ECGFrame(bytes: hex("00 00 94 35 77 00 00 00 00 00  02 80 FF  02 80 00"))
        #expect(ecg.timestamp == 2_000_000_000 && ecg.microvolts == [-32_766, 32_770])
        #expect(ecg.frame().encoded() == hex("00 00 94 35 77 00 00 00 00 00  02 80 FF  02 80 00"))
        let extremes = try ECGFrame(bytes: hex("00" + repeated("00", 9) + "FF FF 7F  00 00 80  FF FF FF"))
        #expect(extremes.microvolts == [8_388_607, -8_388_608, -1])
    }

    @Test("ECG frames round-trip: any 24-bit samples, 1 to 73 a frame")
    func ecgRoundTrip() throws {
        var random = SplitMix64(seed: 41)
        for _ in 0..<200 {
            let samples = (0..<Int.random(in: 1...73, using: &random)).map { _ in
                Int32.random(in: -8_388_608...8_388_607, using: &random)
            }
            let frame = ECGFrame(timestamp: UInt64.random(in: 0...UInt64.max, using: &random), microvolts: samples)
            #expect(try ECGFrame(bytes: frame.frame().encoded()) == frame)
        }
    }

    @Test("raw acceleration: types 0, 1 (the H10's) and 2 are 8-, 16- and 24-bit signed mG per axis")
    func rawAcceleration() throws {
        let type0 = try AccelerationFrame(bytes: hex("02" + repeated("00", 8) + "00  FF 01 80  7F 00 02"))
        #expect(type0.samples == triples([(-1, 1, -128), (127, 0, 2)]))
        let type1 = try AccelerationFrame(bytes: hex("02" + repeated("00", 8) + "01  18 FC 00 00 E8 03"))
        #expect(type1.samples == triples([(-1000, 0, 1000)]))
        let type2 = try AccelerationFrame(bytes: hex("02" + repeated("00", 8) + "02  FF FF 7F 00 00 80 01 00 00"))
        #expect(type2.samples == triples([(8_388_607, -8_388_608, 1)]))
    }

    /// Polar's delta-decoder test: resolution 14 (2-byte reference values), blocks of 3-bit deltas.
    @Test("delta-compressed: a reference sample, then blocks of deltas read least significant bit first")
    func deltaVector() throws {
        let payload = hex("FF FF FF FF FF FF  03 03 AA AA CC CF  03 02 AA AA CC")
        let frame = PMDFrame(measurementType: 2, timestamp: 0, frameType: 1, isCompressed: true, payload: payload)
        let decoded = try AccelerationFrame(frame, resolution: 14)
        #expect(
            decoded.samples == triples([(-1, -1, -1), (1, -4, 1), (-2, -2, 2), (1, -4, 1), (3, -7, 3), (0, -5, 4)]))
        // Polar's gyroscope test: reference (-22, 8, 13), one sample of 3-bit deltas `DF 00`: −1, +3, +3.
        let gyroscopeLike = PMDFrame(
            measurementType: 2, timestamp: 0, frameType: 1, isCompressed: true,
            payload: hex("EA FF 08 00 0D 00  03 01 DF 00"))
        #expect(try AccelerationFrame(gyroscopeLike).samples == triples([(-22, 8, 13), (-23, 11, 16)]))
    }

    @Test("compressed type 0 is in G: scaled by the stream's factor × 1000 to mG; type 1 by its factor")
    func compressedScale() throws {
        let payload = deltaPayload([[4096, -4096, 0], [8192, 0, 2048]], resolution: 16, width: 14)
        let type0 = PMDFrame(measurementType: 2, timestamp: 0, frameType: 0, isCompressed: true, payload: payload)
        #expect(
            try AccelerationFrame(type0, factor: 1.0 / 4096).samples == triples([(1000, -1000, 0), (2000, 0, 500)]))
        let type1 = PMDFrame(measurementType: 2, timestamp: 0, frameType: 1, isCompressed: true, payload: payload)
        #expect(try AccelerationFrame(type1, factor: 2).samples == triples([(8192, -8192, 0), (16384, 0, 4096)]))
    }

    @Test("delta frames round-trip through the tests' encoder: any widths, several blocks")
    func deltaRoundTrip() throws {
        var random = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let width = Int.random(in: 2...16, using: &random)
            let span = Int32(1) << Int32(width - 2)
            var sample: [Int32] = (0..<3).map { _ in Int32.random(in: -30_000...30_000, using: &random) }
            var samples = [sample]
            for _ in 0..<Int.random(in: 0...80, using: &random) {
                sample = sample.map { $0 &+ Int32.random(in: -span...(span - 1), using: &random) }
                samples.append(sample)
            }
            let payload = deltaPayload(
                samples, resolution: 16, width: width, perBlock: Int.random(in: 1...30, using: &random))
            let frame = PMDFrame(measurementType: 2, timestamp: 1, frameType: 1, isCompressed: true, payload: payload)
            #expect(
                try AccelerationFrame(frame).samples
                    == samples.map { AccelerationFrame.Sample(x: $0[0], y: $0[1], z: $0[2]) })
        }
    }

    @Test(
        "every malformed frame is refused with what is wrong and where",
        arguments: [
            ("ECG", hex("00 00 94"), PMDDecodingError.Reason.tooShort(3), 0),
            ("ECG", hex("00" + repeated("00", 9)), .empty, 10),
            ("ECG", hex("00" + repeated("00", 9) + "01 02 03 04"), .partialSample(payload: 4, sampleBytes: 3), 13),
            ("ECG", hex("00" + repeated("00", 8) + "80 01 02 03"), .unsupportedFrameType(0, compressed: true), 9),
            ("ECG", hex("00" + repeated("00", 8) + "01 01 02 03"), .unsupportedFrameType(1, compressed: false), 9),
            ("ECG", hex("02" + repeated("00", 9) + "01 02 03"), .unsupportedMeasurement(2), 0),
            ("ACC", hex("00" + repeated("00", 9) + "01 02 03"), .unsupportedMeasurement(0), 0),
            ("ACC", hex("02" + repeated("00", 8) + "03 01 02 03"), .unsupportedFrameType(3, compressed: false), 9),
            ("ACC", hex("02" + repeated("00", 8) + "82 01 02 03"), .unsupportedFrameType(2, compressed: true), 9),
            ("ACC", hex("02" + repeated("00", 8) + "01 01 02 03 04"), .partialSample(payload: 4, sampleBytes: 6), 10),
            ("ACC", hex("02" + repeated("00", 8) + "81 01 02 03 04"), .truncatedBlock(needed: 6, available: 4), 10),
            ("ACC", hex("02" + repeated("00", 8) + "81" + repeated("00", 6) + "00 01 00"), .bitWidth(0), 16),
            (
                "ACC", hex("02" + repeated("00", 8) + "81" + repeated("00", 6) + "21 01" + repeated("00", 13)),
                .bitWidth(33), 16
            ),
            (
                "ACC", hex("02" + repeated("00", 8) + "81" + repeated("00", 6) + "03"),
                .truncatedBlock(needed: 2, available: 1), 16
            ),
            (
                "ACC", hex("02" + repeated("00", 8) + "81" + repeated("00", 6) + "03 04 FF"),
                .truncatedBlock(needed: 7, available: 3), 16
            ),
            (
                "ACC",
                hex("02" + repeated("00", 8) + "81" + repeated("00", 6) + repeated("01 FF " + repeated("00", 96), 17)),
                .tooManySamples(1 + 17 * 255), 16 + 16 * 98
            ),
        ])
    func refused(kind: String, bytes: [UInt8], reason: PMDDecodingError.Reason, offset: Int) {
        #expect {
            if kind == "ECG" { _ = try ECGFrame(bytes: bytes) } else { _ = try AccelerationFrame(bytes: bytes) }
        } throws: { error in
            guard let error = error as? PMDDecodingError else { return false }
            return error.reason == reason && error.offset == offset && error.frameLength == bytes.count
                && !error.description.isEmpty
        }
    }

    @Test("no input traps: every refusal is a typed error, every frame read within its bounds")
    func noTraps() {
        var random = SplitMix64(seed: 99)
        for _ in 0..<20_000 {
            var bytes = (0..<Int.random(in: 0...80, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            if bytes.count > 0 { bytes[0] = [0, 2][Int.random(in: 0...1, using: &random)] }
            if let ecg = try? ECGFrame(bytes: bytes) { #expect(ecg.microvolts.count * 3 == bytes.count - 10) }
            if let acc = try? AccelerationFrame(bytes: bytes, resolution: Int.random(in: 1...24, using: &random)) {
                #expect(acc.samples.count <= PMDFrame.maximumSamples)
            }
        }
    }
}
