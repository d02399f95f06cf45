import Foundation
import GATT
import Sensors
import Testing

@testable import RemoteSensors

@Suite("The measurement envelope a gateway publishes for hubs")
struct RemoteMeasurementTests {
    let frame = HeartRateMeasurement(
        heartRate: 142, sensorContact: .detected, rrIntervals: [RRInterval(seconds: 0.422)])

    @Test("a frame round-trips: sequence, time to the millisecond, via, bonded, the GATT bytes as sent")
    func roundTrip() throws {
        let time = Date(timeIntervalSince1970: 1_795_000_000.123)
        for via in MeasurementPath.allCases {
            let measurement = SensorMeasurement(
                sensor: SensorIdentity(adapter: "hci0", address: "C0:FF:EE:00:00:01"),
                characteristic: .heartRateMeasurement, value: .heartRateMeasurement(frame), receivedAt: time, via: via,
                bonded: true)
            let message = try #require(RemoteMeasurement(measurement, sequence: 4_000_000_000))
            let payload = message.encoded()
            #expect(payload.count == RemoteMeasurement.headerBytes + frame.encoded().count)
            let read = try RemoteMeasurement(payload: payload)
            #expect(read == message)
            #expect(read.via == via && read.sequence == 4_000_000_000)
            #expect(read.bonded == (via == .connection), "a link's frame says it was bonded; a broadcast never is")
            #expect(payload[1] & RemoteMeasurement.bondedFlag != 0 || via == .advertisement)
            #expect(abs(read.receivedAt.timeIntervalSince(time)) < 0.001)
            #expect(
                try GATTValue(characteristic: read.characteristic, bytes: read.bytes) == .heartRateMeasurement(frame))
        }
    }

    @Test("only heart-rate frames are forwarded")
    func onlyHeartRate() {
        let battery = SensorMeasurement(
            sensor: SensorIdentity(adapter: "hci0", address: "C0:FF:EE:00:00:01"), characteristic: .batteryLevel,
            value: .batteryLevel(BatteryLevel(percent: 80)), receivedAt: Date())
        #expect(RemoteMeasurement(battery, sequence: 1) == nil)
    }

    @Test(
        "every malformed envelope is refused with what is wrong",
        arguments: [
            ([1, 0, 1], RemoteMeasurementError.tooShort(3)),
            ([2] + [UInt8](repeating: 0, count: 15) + [0x06, 60], .unknownVersion(2)),
            ([1, 0x80] + [UInt8](repeating: 0, count: 14) + [0x06, 60], .unknownFlags(0x80)),
            // A broadcast over a bonded link: a contradiction, not an envelope of ours.
            ([1, 0x05] + [UInt8](repeating: 0, count: 14) + [0x06, 60], .unknownFlags(0x05)),
            (
                [1, 0, 0, 0, 0, 0] + [UInt8](repeating: 0xFF, count: 8) + [0x37, 0x2A, 0x06, 60],
                .timeOutOfRange(-1)
            ),
            ([1, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8) + [0x19, 0x2A, 80], .unknownCharacteristic(0x2A19)),
            (
                [1, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8) + [0x37, 0x2A] + [UInt8](repeating: 0, count: 513),
                .valueTooLong(513)
            ),
        ])
    func refused(payload: [UInt8], error: RemoteMeasurementError) {
        #expect(throws: error) { try RemoteMeasurement(payload: payload) }
    }
}
