import ArgumentParser
import Sensors

/// `--ecg`, `--acc`, `--acc-rate`, `--acc-range`: the raw signals `monitor` and `workout run` start
/// on straps that offer them (Polar's PMD on an H10).
struct RawSignalOptions: ParsableArguments {
    @Flag(help: "Start raw ECG (Polar PMD, 130 Hz, µV) on straps that offer it.")
    var ecg = false

    @Flag(help: "Start raw acceleration (Polar PMD, mG) on straps that offer it.")
    var acc = false

    @Option(name: .customLong("acc-rate"), help: "Acceleration samples per second: 25, 50, 100 or 200.")
    var accRate = 50

    @Option(name: .customLong("acc-range"), help: "Acceleration range in G: 2, 4 or 8.")
    var accRange = 8

    func validate() throws {
        if let problem = WaveformRequest(kind: .acc, sampleRate: accRate, range: accRange).problem {
            throw ValidationError(problem)
        }
    }

    /// The raw signals asked for.
    var requests: [WaveformRequest] {
        (ecg ? [WaveformRequest(kind: .ecg)] : [])
            + (acc ? [WaveformRequest(kind: .acc, sampleRate: accRate, range: accRange)] : [])
    }
}
