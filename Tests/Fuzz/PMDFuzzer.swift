// libFuzzer entry point for the Polar PMD frame decoders (ECG, acceleration raw and
// delta-compressed) and the control point's answer and features parsers, built by scripts/fuzz.sh together with the GATT sources. The first input byte
// picks the stream's resolution for compressed frames (1–32 bits), the rest is a notification. A
// decoded frame must hold whole samples within the bound, and an ECG frame must re-encode to the
// same bytes; a refused one must carry a reason that fits the frame.

/// One input from libFuzzer; returns 0 (a failed check stops the process, which libFuzzer reports).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let resolution = Int(data[0] % 32) + 1
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    do {
        let ecg = try ECGFrame(bytes: bytes)
        precondition(!ecg.microvolts.isEmpty && ecg.microvolts.count * 3 == bytes.count - 10, "\(bytes) → \(ecg)")
        // The measurement byte's top two bits are not the type's: they do not come back.
        var expected = bytes
        expected[0] &= 0x3F
        precondition(ecg.frame().encoded() == expected, "\(bytes) → \(ecg) → \(ecg.frame().encoded())")
    } catch {
        check(error, bytes)
    }
    do {
        let acceleration = try AccelerationFrame(bytes: bytes, resolution: resolution)
        precondition(
            !acceleration.samples.isEmpty && acceleration.samples.count <= PMDFrame.maximumSamples,
            "\(bytes) → \(acceleration.samples.count) samples")
    } catch {
        check(error, bytes)
    }
    // The same bytes as a control point indication and as a features read: answered or refused,
    // never a crash, and every setting read stays inside the indication.
    if let answer = try? PMDControlPoint.Response(bytes: bytes) {
        precondition(bytes.count >= 4 && bytes[0] == 0xF0 && answer.settings.count <= 16, "\(bytes) → \(answer)")
        _ = answer.factor
    }
    if let features = try? PMDFeatures(bytes: bytes) {
        precondition(bytes[0] == 0x0F && features.measurements.count <= PMDMeasurementType.allCases.count)
    }
    return 0
}

/// A refusal names the frame it was given and a place inside it.
private func check(_ error: PMDDecodingError, _ bytes: [UInt8]) {
    precondition(error.frameLength == bytes.count && !error.description.isEmpty, "\(error) for \(bytes)")
    precondition(error.offset >= 0 && error.offset <= max(bytes.count, 10), "\(error) for \(bytes)")
    switch error.reason {
    case .tooShort(let length): precondition(length == bytes.count && length < 10, "\(error)")
    case .bitWidth(let width): precondition(width == 0 || width > 32, "\(error)")
    case .truncatedBlock(let needed, let available): precondition(needed > available, "\(error)")
    case .tooManySamples(let count): precondition(count > PMDFrame.maximumSamples, "\(error)")
    case .partialSample(let payload, let sampleBytes): precondition(payload % sampleBytes != 0, "\(error)")
    case .empty: precondition(bytes.count == 10, "\(error)")
    case .unsupportedMeasurement, .unsupportedFrameType: break
    }
}
