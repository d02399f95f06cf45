import Foundation
import Sensors
import Testing

@testable import WorkoutExport

@Suite("EDF+ files of raw signals: a file that cannot be made is said once, and what was written stays listed")
struct EDFWaveformFilesTests {
    @Test(
        "the next run's file cannot be created after a gap: one failure, run 1's file listed as written, later frames skipped"
    )
    func failureAfterAGap() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edf-gap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = EDFWaveformFiles(prefix: directory.appendingPathComponent("s01").path)
        let sensor = SensorIdentity(adapter: "hci0", address: "A0:9E:1A:00:00:01")
        let start = Date(timeIntervalSince1970: 1_795_626_000)
        // A directory where run 2's file would go: it cannot be created.
        try FileManager.default.createDirectory(
            atPath: files.path(for: sensor.address, .ecg, run: 2), withIntermediateDirectories: false)
        func frame(at second: Double, continuous: Bool) -> SensorWaveform {
            SensorWaveform(
                sensor: sensor, kind: .ecg, sampleRate: 130, values: Array(repeating: 5, count: 130),
                start: start.addingTimeInterval(second), interval: 1.0 / 130, continuous: continuous,
                sensorTimestamp: 0, receivedAt: start)
        }
        for second in 0..<3 { files.record(frame(at: Double(second), continuous: second > 0)) }
        for second in 10..<20 { files.record(frame(at: Double(second), continuous: second > 10)) }
        let report = files.finish()
        #expect(report.files == [.init(path: files.path(for: sensor.address, .ecg), records: 3)])
        #expect(report.failures.count == 1, "\(report.failures)")
    }
}
