public import FoundationEssentials
public import GATT

extension SensorWaveform {
    /// A PMD data notification of `request`'s stream through the strict decoder (ECG type 0;
    /// acceleration raw, or delta-compressed at 16 bits scaled by `factor`), its samples placed by
    /// the stream's `clock`. A malformed frame is refused with its reason.
    public init(
        pmd bytes: [UInt8], request: WaveformRequest, factor: Float = 1, sensor: SensorIdentity, receivedAt: Date,
        clock: inout WaveformClock
    ) throws(PMDDecodingError) {
        let timestamp: UInt64
        let values: [Int32]
        switch request.kind {
        case .ecg:
            let frame = try ECGFrame(bytes: bytes)
            (timestamp, values) = (frame.timestamp, frame.microvolts)
        case .acc:
            let frame = try AccelerationFrame(bytes: bytes, resolution: 16, factor: factor)
            (timestamp, values) = (frame.timestamp, frame.samples.flatMap { [$0.x, $0.y, $0.z] })
        }
        let placement = clock.place(
            sensorTime: timestamp, sampleCount: values.count / request.kind.channels, receivedAt: receivedAt)
        self.init(
            sensor: sensor, kind: request.kind, sampleRate: request.sampleRate, values: values, start: placement.start,
            interval: placement.interval, continuous: placement.continuous, sensorTimestamp: timestamp,
            receivedAt: receivedAt)
    }
}
