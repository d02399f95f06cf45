/// A raw signal a strap can stream besides its heart rate (Polar's PMD service on an H10).
public enum WaveformKind: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    /// The ECG in µV, one channel (the H10: 130 Hz).
    case ecg
    /// Acceleration in mG, three channels x, y, z (the H10: 25–200 Hz).
    case acc

    /// Values per sample.
    public var channels: Int {
        switch self {
        case .ecg: 1
        case .acc: 3
        }
    }

    /// The unit of every value.
    public var unit: String {
        switch self {
        case .ecg: "µV"
        case .acc: "mG"
        }
    }

    /// The sample rates an H10 streams at, slowest first.
    public var supportedRates: [Int] {
        switch self {
        case .ecg: [130]
        case .acc: [25, 50, 100, 200]
        }
    }

    /// Kinds sort in declaration order.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// What to ask a strap to stream.
public struct WaveformRequest: Hashable, Sendable {
    /// The signal.
    public var kind: WaveformKind
    /// Samples per second: one of the kind's ``WaveformKind/supportedRates``.
    public var sampleRate: Int
    /// Acceleration's full scale in G (2, 4 or 8); ignored for ECG.
    public var range: Int

    /// A request; the rate defaults to the kind's slowest, ECG's only one.
    public init(kind: WaveformKind, sampleRate: Int? = nil, range: Int = 8) {
        self.kind = kind
        self.sampleRate = sampleRate ?? kind.supportedRates[0]
        self.range = range
    }

    /// Why this request cannot be streamed, or nil when an H10 takes it.
    public var problem: String? {
        guard kind.supportedRates.contains(sampleRate) else {
            return
                "\(kind.rawValue) streams at \(kind.supportedRates.map(String.init).joined(separator: ", ")) Hz, not \(sampleRate)"
        }
        if kind == .acc, ![2, 4, 8].contains(range) { return "acc range is 2, 4 or 8 G, not \(range)" }
        return nil
    }
}
