// libFuzzer entry point for the advertisement decoder (Polar's manufacturer data), built by
// scripts/fuzz.sh together with the GATT sources. The input is manufacturer data as BlueZ's
// `ManufacturerData` and the air carry it: the company identifier (2 bytes, little-endian), then the
// data. A decoded broadcast must come from a heart-rate block that ends the data and re-encode to the
// same reading; a refused one must name the company and bytes it was given and a reason that fits them.

/// One input from libFuzzer; returns 0 (a failed check stops the process, which libFuzzer reports).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 2 else { return 0 }
    let company = UInt16(data[0]) | UInt16(data[1]) << 8
    let bytes = Array(UnsafeBufferPointer(start: data + 2, count: size - 2))
    do {
        let broadcast = try PolarHeartRateBroadcast(company: company, bytes: bytes)
        precondition(company == PolarHeartRateBroadcast.companyID, "decoded company \(company)")
        // The heart-rate block runs to the end: the shown value is the last byte, the fast average the one before.
        precondition(broadcast.heartRate > 0 && broadcast.heartRate == bytes.last, "\(bytes) → \(broadcast)")
        precondition(
            broadcast.fastAverageHeartRate == nil || broadcast.fastAverageHeartRate == bytes[bytes.count - 2],
            "\(bytes) → \(broadcast)")
        let again = try? PolarHeartRateBroadcast(company: company, bytes: broadcast.encoded())
        precondition(
            again?.heartRate == broadcast.heartRate && again?.skinContact == broadcast.skinContact
                && again?.frameCounter == broadcast.frameCounter,
            "\(bytes) → \(broadcast) → \(broadcast.encoded()) → \(String(describing: again))")
    } catch {
        precondition(
            error.company == company && error.bytes == bytes && !error.description.isEmpty,
            "bad error \(error) for \(company) \(bytes)")
        let known = PolarHeartRateBroadcast.knownLengths
        switch error.reason {
        case .otherCompany(let other):
            precondition(other == company && company != PolarHeartRateBroadcast.companyID, "\(error)")
        case .unknownLength(let length, let lengths):
            precondition(lengths == known && !known.contains(length) && length <= bytes.count, "\(error)")
        case .truncatedBlock(let offset, let needed, let available):
            precondition(
                offset >= 0 && offset < bytes.count && available == bytes.count - offset && needed > available,
                "\(error)")
        case .notHeartRate:
            precondition(known.contains(bytes.count) && bytes[0] & 0x40 != 0, "\(error)")
        case .noHeartRateBlock:
            precondition(!bytes.isEmpty && bytes[0] & 0x40 != 0, "\(error)")
        case .noReading:
            precondition(bytes.last == 0, "\(error)")
        case .heardWhileLinked, .addressTypeMismatch:
            // The adapter's refusals of who sent a broadcast, never the decoder's.
            preconditionFailure("the decoder refused \(bytes) for a reason of the adapter's: \(error)")
        }
    }
    return 0
}
