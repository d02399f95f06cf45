public import Sensors

extension BlueZAdapter {
    /// Raw signals over BlueZ need the PMD client, which is not in this build: refused, with the reason.
    public func startWaveform(_ request: WaveformRequest, for sensor: SensorIdentity) throws(SensorAdapterError) {
        throw .waveformUnavailable(sensor, request.kind, "this build streams PMD only from the simulator")
    }

    /// Nothing streams, so nothing stops.
    public func stopWaveform(_ kind: WaveformKind, for sensor: SensorIdentity) throws(SensorAdapterError) {}
}
