// A conformance is as public as its type: both modules are imported publicly for it.
public import ArgumentParser
public import SensorSimulator

/// `--speed`: `max`, or simulated seconds per real second (above 0, at most 100000).
extension SimulationPace: ExpressibleByArgument {
    public init?(argument: String) {
        if argument == "max" {
            self = .maximum
            return
        }
        guard let speed = Double(argument), speed > 0, speed <= SimulationPace.highestSpeed else { return nil }
        self = .speed(speed)
    }

    public var defaultValueDescription: String { label }

    /// `max`, or the speed as typed (`60`, `0.5`).
    var label: String {
        switch self {
        case .maximum: "max"
        case .speed(let speed): speed == speed.rounded() ? String(Int(speed)) : String(speed)
        }
    }
}
