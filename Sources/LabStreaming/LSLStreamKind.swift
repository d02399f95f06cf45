public import Sensors

/// The streams hrbridge offers to the Lab Streaming Layer.
public enum LSLStreamKind: String, Hashable, Sendable, CaseIterable, Comparable {
    /// Heart rate in bpm at each frame's arrival, one stream per strap.
    case hr
    /// RR intervals in ms at each beat's end, one stream per strap.
    case rr
    /// DFA α1, RMSSD and the artefact share of the last 2 minutes of beats, every 5 s of beats,
    /// one stream per strap with RR intervals.
    case hrv
    /// Raw ECG in µV with per-sample timestamps (a strap with PMD, as an H10).
    case ecg
    /// Acceleration in mG, three channels (a strap with PMD).
    case acc
    /// Session starts and ends, pauses, laps, zone changes and plan steps: one stream.
    case markers

    /// The LSL content type.
    public var contentType: String {
        switch self {
        case .hr: "HR"
        case .rr: "RR"
        case .ecg: "ECG"
        case .acc: "ACC"
        case .hrv: "HRV"
        case .markers: "Markers"
        }
    }

    /// The raw signal behind the stream, when it is one.
    public var waveform: WaveformKind? {
        switch self {
        case .ecg: .ecg
        case .acc: .acc
        case .hr, .rr, .hrv, .markers: nil
        }
    }

    /// Kinds sort in declaration order.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
