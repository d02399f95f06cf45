public import Foundation

/// Decodes a FIT file with Garmin's own FIT SDK (`Tests/Fixtures/fit/decode.py`, integrity check
/// on) and returns the JSON object it prints: isFit, integrity, errors, records, heartRates…
public func garminDecode(fitFile file: URL) async throws -> [String: Any] {
    let script = packageRoot.appendingPathComponent("Tests/Fixtures/fit/decode.py").path
    // It prints one line, the decoded file, as it exits.
    let decoder = try await Spawned.startPeer(
        venvPython, [script, file.path], label: "garmin-fit-sdk", readyLine: { _ in true })
    let status = await decoder.wait()
    guard status == 0,
        let decoded = try? JSONSerialization.jsonObject(with: Data((decoder.output.last ?? "").utf8))
            as? [String: Any]
    else {
        throw HarnessError(
            "Garmin's FIT SDK failed (exit \(status.map(String.init) ?? "none")): \(decoder.output.suffix(5))")
    }
    return decoded
}
