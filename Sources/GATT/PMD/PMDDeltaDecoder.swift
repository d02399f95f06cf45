/// Polar's delta-compressed PMD payload: a reference sample, then blocks of deltas.
///
/// The reference sample is `channels` signed little-endian values of `ceil(resolution / 8)` bytes.
/// Each block is a bit width (u8, 1–32), a sample count (u8), then `ceil(count × channels × width / 8)`
/// bytes of deltas, read **least significant bit first** within each byte, each `width` bits a
/// two's-complement delta added to the previous sample's channel.
enum PMDDeltaDecoder {
    /// The samples of a compressed `frame`, reference sample first.
    static func samples(
        of frame: PMDFrame, channels: Int, resolution: Int
    ) throws(PMDDecodingError) -> [[Int32]] {
        let payload = frame.payload
        let valueBytes = (resolution + 7) / 8
        let referenceBytes = channels * valueBytes
        guard payload.count >= referenceBytes else {
            throw frame.error(at: 0, .truncatedBlock(needed: referenceBytes, available: payload.count))
        }
        var current = (0..<channels).map { PMDFrame.signed(payload, at: $0 * valueBytes, bytes: valueBytes) }
        var samples = [current]
        var offset = referenceBytes
        while offset < payload.count {
            guard payload.count - offset >= 2 else {
                throw frame.error(at: offset, .truncatedBlock(needed: 2, available: payload.count - offset))
            }
            let width = Int(payload[offset])
            let count = Int(payload[offset + 1])
            guard (1...32).contains(width) else { throw frame.error(at: offset, .bitWidth(width)) }
            let dataBytes = (count * channels * width + 7) / 8
            let available = payload.count - offset - 2
            guard dataBytes <= available else {
                throw frame.error(at: offset, .truncatedBlock(needed: 2 + dataBytes, available: payload.count - offset))
            }
            guard samples.count + count <= PMDFrame.maximumSamples else {
                throw frame.error(at: offset, .tooManySamples(samples.count + count))
            }
            var bit = (offset + 2) * 8
            for _ in 0..<count {
                for channel in 0..<channels {
                    var raw: UInt32 = 0
                    for index in 0..<width {
                        let byte = payload[bit >> 3]
                        raw |= UInt32((byte >> UInt8(bit & 7)) & 1) << UInt32(index)
                        bit += 1
                    }
                    current[channel] = current[channel] &+ PMDFrame.signExtended(raw, bits: width)
                }
                samples.append(current)
            }
            offset += 2 + dataBytes
        }
        return samples
    }
}
