import Foundation
import Sensors
import Testing

@testable import WorkoutExport

/// The raw-signal CSV's rows: times to the microsecond, a run counted after each gap.
@Suite("Raw-signal CSV")
struct WaveformCSVTests {
    @Test(
        "Unix seconds to the microsecond",
        arguments: [
            (1_795_626_000.123456, "1795626000.123456"), (1_795_626_000, "1795626000.000000"),
            (0.0000004, "0.000000"), (0.0000006, "0.000001"), (12.5, "12.500000"), (-0.25, "-0.250000"),
            (-1.5, "-1.500000"),
        ])
    func seconds(value: Double, text: String) {
        #expect(WaveformCSV.seconds(value) == text)
    }

    @Test("rows per sample and channel; a frame after a gap starts the next run; other signals skipped")
    func rows() {
        let sensor = SensorIdentity(adapter: "hci0", address: "A0:9E:1A:00:00:01")
        let start = Date(timeIntervalSince1970: 1_795_626_000)
        func frame(_ values: [Int32], at seconds: Double, continuous: Bool, kind: WaveformKind = .acc) -> SensorWaveform
        {
            SensorWaveform(
                sensor: sensor, kind: kind, sampleRate: 50, values: values, start: start.addingTimeInterval(seconds),
                interval: 0.02, continuous: continuous, sensorTimestamp: 0, receivedAt: start)
        }
        var csv = WaveformCSV(kind: .acc)
        #expect(csv.header == "time,sensor,run,x_mG,y_mG,z_mG\n")
        let text = csv.rows([
            frame([1, 2, 3, 4, 5, 6], at: 0, continuous: true),
            frame([7], at: 0.04, continuous: true, kind: .ecg),
            frame([7, 8, 9], at: 1, continuous: false),
        ])
        #expect(
            text == """
                1795626000.000000,A0:9E:1A:00:00:01,1,1,2,3
                1795626000.020000,A0:9E:1A:00:00:01,1,4,5,6
                1795626001.000000,A0:9E:1A:00:00:01,2,7,8,9

                """)
    }
}
