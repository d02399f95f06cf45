import Foundation
public import Samples
public import Sensors

/// Writes CSV: the long format (one row per sample) or the wide format (one row per second).
public enum CSVExporter {
    /// `time,type,value,unit,source,counted,via`, one row per sample, in time order. `counted` is 1
    /// when the sample is in the workout's figures: every reading, and an amount (energy,
    /// distance) only from its type's primary strap in `primaries`, through whichever adapter
    /// heard it (``CountedSamples``), so the counted rows of a type sum to the summary's total.
    /// `via` says how its frame came (`connection` or `advertisement`; empty when not known).
    public static func long(
        _ samples: [QuantitySample], primaries: [QuantityType: SampleSource] = [:]
    ) throws(ExportError) -> String {
        guard !samples.isEmpty else { throw .emptyWorkout }
        var text = "time,type,value,unit,source,counted,via\n"
        for sample in samples.sorted(by: { $0.start < $1.start }) {
            let counted = CountedSamples.counts(sample, primaries: primaries)
            text += "\(time(sample.start)),\(sample.type.rawValue),\(number(sample.canonicalValue)),"
            text += "\(sample.type.canonicalUnit.symbol),\(field(sample.source.address)),\(counted ? 1 : 0),"
            text += "\(sample.metadata.via?.rawValue ?? "")\n"
        }
        return text
    }

    /// One row per second: `time,heart_rate,rr_intervals,power,cadence,speed,distance,energy,heart_rate_via`;
    /// readings are the last of the second, amounts are summed (from each type's primary source
    /// only, when `primaries` names it: ``CountedSamples``), RR intervals joined with `;`;
    /// `heart_rate_via` says how the second's heart rate came.
    public static func wide(
        _ samples: [QuantitySample], primaries: [QuantityType: SampleSource] = [:]
    ) throws(ExportError) -> String {
        guard !samples.isEmpty else { throw .emptyWorkout }
        let samples = CountedSamples.filter(samples, primaries: primaries)
        var text = "time,heart_rate,rr_intervals,power,cadence,speed,distance,energy,heart_rate_via\n"
        let seconds = Dictionary(grouping: samples) { Int64($0.start.timeIntervalSince1970.rounded(.down)) }
        for second in seconds.keys.sorted() {
            let group = (seconds[second] ?? []).sorted { $0.start < $1.start }
            func last(_ types: [QuantityType]) -> String {
                group.last { types.contains($0.type) }.map { number($0.canonicalValue) } ?? ""
            }
            func sum(_ type: QuantityType) -> String {
                let values = group.filter { $0.type == type }.map(\.canonicalValue)
                return values.isEmpty ? "" : number(values.reduce(0, +))
            }
            let rr = group.filter { $0.type == .heartbeatSeries }.map { number($0.canonicalValue) }.joined(
                separator: ";")
            text += "\(time(Date(timeIntervalSince1970: Double(second)))),\(last([.heartRate])),\(rr),"
            text += "\(last([.cyclingPower])),\(last([.cyclingCadence, .stepCadence])),"
            text += "\(last([.cyclingSpeed, .runningSpeed])),\(sum(.distance)),\(sum(.activeEnergyBurned)),"
            text += "\(group.last { $0.type == .heartRate }?.metadata.via?.rawValue ?? "")\n"
        }
        return text
    }

    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private static func field(_ text: String) -> String {
        text.contains(",") || text.contains("\"")
            ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }
}
