import Foundation

/// A number with the unit it was written in, so a plan round-trips exactly ("2 mi" stays "2 mi").
public struct PlanValue: Hashable, Sendable, CustomStringConvertible {
    /// Units a plan may use.
    public enum Unit: String, Hashable, Sendable, CaseIterable {
        /// Seconds.
        case second = "s"
        /// Minutes.
        case minute = "min"
        /// Hours.
        case hour = "h"
        /// Metres.
        case meter = "m"
        /// Kilometres.
        case kilometer = "km"
        /// Miles.
        case mile = "mi"
        /// Kilojoules.
        case kilojoule = "kJ"
        /// Kilocalories.
        case kilocalorie = "kcal"
        case beatsPerMinute = "bpm"
        /// Watts.
        case watt = "W"
        /// Revolutions (or steps) per minute.
        case revolutionsPerMinute = "rpm"
        /// Metres per second.
        case metersPerSecond = "m/s"
        /// Kilometres per hour.
        case kilometersPerHour = "km/h"
        case milesPerHour = "mph"
        /// Pace, minutes per kilometre (written m:ss /km).
        case perKilometer = "/km"
        /// Pace, minutes per mile (written m:ss /mi).
        case perMile = "/mi"

        /// What the unit measures.
        public var dimension: Dimension {
            switch self {
            case .second, .minute, .hour: .time
            case .meter, .kilometer, .mile: .distance
            case .kilojoule, .kilocalorie: .energy
            case .beatsPerMinute: .heartRate
            case .watt: .power
            case .revolutionsPerMinute: .cadence
            case .metersPerSecond, .kilometersPerHour, .milesPerHour, .perKilometer, .perMile: .speed
            }
        }
    }

    /// Dimensions of plan values.
    public enum Dimension: String, Hashable, Sendable {
        /// Seconds.
        case time
        /// Metres.
        case distance
        /// Kilojoules.
        case energy
        /// count/min.
        case heartRate
        /// Watts.
        case power
        /// rpm.
        case cadence
        /// m/s.
        case speed
    }

    /// The number as written (for a pace: seconds per km or mile).
    public var value: Double
    /// The unit as written.
    public var unit: Unit

    /// Creates a value.
    public init(_ value: Double, _ unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// The value in the dimension's base unit: s, m, kJ, count/min, W, rpm, m/s.
    public var base: Double {
        switch unit {
        case .second, .meter, .kilojoule, .beatsPerMinute, .watt, .revolutionsPerMinute, .metersPerSecond: value
        case .minute: value * 60
        case .hour: value * 3600
        case .kilometer: value * 1000
        case .mile: value * 1609.344
        case .kilocalorie: value * 4.184
        case .kilometersPerHour: value / 3.6
        case .milesPerHour: value * 1609.344 / 3600
        case .perKilometer: value > 0 ? 1000 / value : 0
        case .perMile: value > 0 ? 1609.344 / value : 0
        }
    }

    /// As written: `2 mi`, `5 min`, `4:30 /km`.
    public var description: String {
        if unit == .perKilometer || unit == .perMile { return "\(Self.clock(value)) \(unit.rawValue)" }
        return "\(Self.number(value)) \(unit.rawValue)"
    }

    static func number(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        let shortest = String(value)
        guard value.isFinite, shortest.contains("e") else { return shortest }
        // The reader takes plain digits only (`1e-05` is not a value): the fewest decimals that
        // read back as the same number.
        for decimals in 1...40 {
            let text = String(format: "%.\(decimals)f", value)
            if Double(text) == value { return text }
        }
        return String(format: "%.40f", value)
    }

    static func clock(_ seconds: Double) -> String {
        // Parsed paces are bounded; a value built in code may not be, and `Int` of it would trap.
        guard seconds.isFinite, abs(seconds) < 1e15 else { return String(seconds) }
        let whole = Int(seconds.rounded(.down))
        let fraction = seconds - Double(whole)
        let text = "\(whole / 60):" + (whole % 60 < 10 ? "0" : "") + "\(whole % 60)"
        return fraction == 0 ? text : text + String(String(fraction).dropFirst())
    }

    /// The slowest pace a plan may name, in minutes per unit: `999:59 /km`.
    public static let maximumPaceMinutes = 999

    /// Parses `5 min`, `2 mi`, `250 W`, `4:30 /km`; `nil` when it is not a number with a known unit.
    public static func parse(_ text: String) -> PlanValue? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, let unit = Unit(rawValue: String(parts[1])) else { return nil }
        if unit == .perKilometer || unit == .perMile {
            // Whole minutes (`Double` would take `1e20`, `inf` and `nan`) and seconds below 60.
            let clock = parts[0].split(separator: ":", omittingEmptySubsequences: false)
            let digits: ClosedRange<Character> = "0"..."9"
            guard clock.count == 2, clock[0].allSatisfy(digits.contains), let minutes = Int(clock[0]),
                minutes <= maximumPaceMinutes, clock[1].first.map(digits.contains) == true,
                clock[1].allSatisfy({ digits.contains($0) || $0 == "." }), let seconds = Double(clock[1]),
                (0..<60).contains(seconds)
            else {
                return nil
            }
            return PlanValue(Double(minutes * 60) + seconds, unit)
        }
        // Digits with an optional decimal part, as the schema's pattern: no `1e300`, `+5`, `.5`.
        // A minus sign is read, so that the validator can say the value must be above zero.
        let magnitude = parts[0].hasPrefix("-") ? parts[0].dropFirst() : parts[0]
        let pieces = magnitude.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count),
            pieces.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }),
            let number = Double(parts[0]), number.isFinite
        else { return nil }
        return PlanValue(number, unit)
    }
}

/// A range written with one unit: `250-275 W`, `4:30-5:00 /km`.
public struct PlanRange: Hashable, Sendable, CustomStringConvertible {
    /// The first bound as written.
    public var from: PlanValue
    /// The second bound as written.
    public var to: PlanValue

    /// Creates a range.
    public init(from: PlanValue, to: PlanValue) {
        self.from = from
        self.to = to
    }

    /// The bounds in base units, low to high (a pace range is inverted when turned into speed).
    public var baseBounds: ClosedRange<Double> {
        let (a, b) = (from.base, to.base)
        return min(a, b)...max(a, b)
    }

    /// Whether the written bounds are inverted (for a pace, a faster first bound).
    public var isInverted: Bool {
        from.unit == .perKilometer || from.unit == .perMile ? from.value > to.value : from.value > to.value
    }

    /// `250-275 W`.
    public var description: String {
        let text = to.description
        let first =
            from.unit == .perKilometer || from.unit == .perMile
            ? PlanValue.clock(from.value) : PlanValue.number(from.value)
        return first + "-" + text
    }

    /// Parses `250-275 W`.
    public static func parse(_ text: String) -> PlanRange? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        // Empty pieces kept: `-5-10 W` is no range, not 5 to 10.
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let from = PlanValue.parse("\(bounds[0]) \(parts[1])"),
            let to = PlanValue.parse("\(bounds[1]) \(parts[1])")
        else { return nil }
        return PlanRange(from: from, to: to)
    }
}
