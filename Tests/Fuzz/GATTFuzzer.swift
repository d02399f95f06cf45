// libFuzzer entry point for the GATT decoders, built by scripts/fuzz.sh together with the GATT
// sources (not a SwiftPM target: libFuzzer brings its own main). The first byte picks the
// characteristic, the rest is the frame. A decoded frame must re-encode to a frame that decodes
// to the same value and is no longer; a refused one must name a place inside the frame.

/// One input from libFuzzer; returns 0 (a failed check stops the process, which libFuzzer reports).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let characteristics = GATTCharacteristic.allCases
    let characteristic = characteristics[Int(data[0]) % characteristics.count]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    do {
        let value = try GATTValue(characteristic: characteristic, bytes: bytes)
        if let encoded = value.encoded {
            let again = try? GATTValue(characteristic: characteristic, bytes: encoded)
            precondition(
                again == value,
                "\(characteristic.name): \(bytes) → \(value) → \(encoded) → \(String(describing: again))")
            precondition(encoded.count <= bytes.count, "\(characteristic.name): encoding grew \(bytes) to \(encoded)")
        }
    } catch {
        precondition(
            error.characteristic == characteristic && error.offset >= 0 && error.offset <= bytes.count
                && error.frameLength == bytes.count && !error.description.isEmpty,
            "\(characteristic.name): bad error \(error) for \(bytes)")
    }
    return 0
}
