import Foundation
import GATT
import Samples
import SensorSimulator
import Sensors
import Workouts

#if canImport(Glibc)
    import Glibc
#endif

/// The terminal view of a running workout, redrawn in place.
final class LiveView {
    private let sensors: [SensorIdentity]
    private let configuration: WorkoutConfiguration
    private let speed: SimulationPace
    private var linesDrawn = 0
    /// On a terminal the view redraws in place; otherwise it prints one plain line per workout minute.
    private let interactive = isatty(STDOUT_FILENO) == 1
    private var nextPlainMinute = 0.0
    /// When the terminal was last redrawn: ten redraws a second are plenty for the eye, at any speed.
    private var lastRedraw: ContinuousClock.Instant?

    init(sensors: [SensorIdentity], configuration: WorkoutConfiguration, speed: SimulationPace) {
        self.sensors = sensors
        self.configuration = configuration
        self.speed = speed
    }

    func render(
        builder: LiveWorkoutBuilder, tracker: SensorTracker, state: WorkoutSessionState, at now: Date,
        planLine: String? = nil
    ) async {
        if interactive {
            let instant = ContinuousClock.now
            if let lastRedraw, instant - lastRedraw < .milliseconds(100) { return }
            lastRedraw = instant
        }
        let snapshot = await builder.snapshot
        var lines: [String] = []
        let elapsed = snapshot.elapsedTime(at: now)
        let activityNumber = snapshot.allActivities.count
        lines.append(
            "hrbridge · \(configuration.activityType.rawValue) (\(configuration.location.rawValue)) · "
                + "\(Format.clock(elapsed)) · \(state.rawValue) · activity \(activityNumber) · speed \(speed == .maximum ? "max" : "×" + speed.label)"
        )
        let zones = snapshot.zoneConfiguration(for: .heartRate)
        let statistics = snapshot.statistics(for: .heartRate)
        for sensor in sensors {
            let status = tracker.status(of: sensor)
            let source = SampleSource(adapter: sensor.adapter, address: sensor.address)
            let perSource = statistics?.bySource[source]
            var line = "  \(sensor.name ?? sensor.address)  "
            if let heartRate = status.heartRate, status.state == "ready" {
                line += "♥ \(String(format: "%3d", heartRate)) bpm"
                if let zones {
                    line +=
                        "  " + Format.zoneBar(position: zones.position(of: Double(heartRate)), count: zones.zones.count)
                }
                if status.contact == .notDetected { line += "  (no skin contact)" }
            } else {
                line += "♥ --- bpm"
            }
            line += "  avg \(Format.number(perSource?.average)) max \(Format.number(perSource?.maximum))"
            line += "  RR \(status.lastRR.map { String(format: "%.3f s", $0) } ?? "-")"
            line += "  battery \(status.battery.map { "\($0)%" } ?? "-")  \(status.state)"
            lines.append(line)
        }
        let hrv = snapshot.rollingHeartRateVariability(at: now)
        let energy = snapshot.activeEnergy
        let rmssd = hrv.rmssd.map { String(format: "%.0f ms", $0 * 1000) } ?? "-"
        let alpha1 = Format.alpha1Text(snapshot.latestAlpha1)
        lines.append(
            "  RMSSD (60 s) \(rmssd)  α1 \(alpha1)"
                + "  energy \(energy.kilojoules.map { String(format: "%.0f kJ (%.0f kcal)", $0, $0 / 4.184) } ?? "-")"
                + " [\(energy.source.rawValue)]")
        if let group = snapshot.zoneGroups.first(where: { $0.configuration.quantityType == .heartRate }) {
            lines.append(
                "  zones "
                    + group.durations.map { "Z\($0.zone.index) \(Format.clock($0.duration))" }.joined(separator: "  "))
        }
        if let planLine { lines.append("  " + planLine) }
        lines.append("  keys: p pause · r resume · l lap · n next \(planLine == nil ? "activity" : "step") · q stop")
        guard interactive else {
            guard elapsed >= nextPlainMinute else { return }
            nextPlainMinute = (elapsed / 60).rounded(.down) * 60 + 60
            let plain = lines.dropLast().dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
            print("[\(Format.clock(elapsed))] " + plain.joined(separator: " | "))
            return
        }
        var output = ""
        if linesDrawn > 0 { output += "\u{1B}[\(linesDrawn)A" }
        for line in lines { output += "\r\u{1B}[2K" + line + "\n" }
        linesDrawn = lines.count
        FileHandle.standardOutput.write(Data(output.utf8))
    }

    func finish() {
        if interactive { FileHandle.standardOutput.write(Data("\n".utf8)) }
    }
}

/// Number, time and bar formatting for the terminal.
enum Format {
    /// A number the terminal shows as "beyond any reading": a threshold's open end, a value too
    /// large for `Int` (which would trap), NaN.
    static let unbounded = "∞"

    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 1e15 else { return unbounded }
        let total = Int(seconds.rounded(.down))
        return total >= 3600
            ? String(format: "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60)
            : String(format: "%02ld:%02ld", total / 60, total % 60)
    }

    static func number(_ value: Double?) -> String {
        guard let value else { return "-" }
        guard value.isFinite, abs(value) < 1e15 else { return value.isNaN ? "-" : unbounded }
        return value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    /// `Z3 ■■■□□`: the zone number is written out, so the bar does not rely on colour alone.
    static func zoneBar(position: Int, count: Int) -> String {
        "Z\(position + 1) " + String(repeating: "■", count: position + 1)
            + String(repeating: "□", count: count - position - 1)
    }

    static func bar(fraction: Double, width: Int = 30) -> String {
        let filled = Int((min(max(fraction, 0), 1) * Double(width)).rounded())
        return String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
    }

    /// "0.82 (1.2 % artefacts)", "0.82? (7.0 % artefacts)" when unreliable, "-" in the first 2 minutes.
    static func alpha1Text(_ window: HRVWindow?) -> String {
        guard let window, let alpha1 = window.alpha1 else { return "-" }
        return String(format: "%.2f", alpha1) + (window.isReliable ? "" : "?")
            + String(format: " (%.1f %% artefacts)", window.artefactPercent)
    }
}
