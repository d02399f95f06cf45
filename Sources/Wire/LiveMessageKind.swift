/// What a message of the live stream (and of `--json` output lines) is: the `kind` key of its
/// JSON and the `event:` of its Server-Sent Event.
public enum LiveMessageKind: String, Codable, Sendable, CaseIterable {
    /// A quantity sample of a session.
    case sample
    /// One decoded heart-rate frame (or broadcast) of a sensor.
    case measurement
    /// A sensor's state, or `gone`.
    case sensor
    /// A session's state, on each change.
    case session
    /// A workout event (pause, resume, lap, segment…).
    case event
    /// A heart-rate zone change.
    case zone
    /// A window of HRV figures.
    case hrv
    /// A structured workout's step or block.
    case plan
    /// The running class.
    case `class`
    /// An adapter's availability.
    case adapter
    /// hrbridge as a Bluetooth heart-rate sensor.
    case peripheral
    /// A multisport workout's next activity began (`workout run --json`).
    case activityBegan
    /// A multisport workout's activity ended (`workout run --json`).
    case activityEnded
    /// A subscriber fell behind and messages were dropped for it.
    case dropped
    /// A message that could not be written.
    case error
    /// A frame of a strap's raw ECG (Polar PMD, 130 Hz): only to a client that names it.
    case ecg
    /// A frame of a strap's raw acceleration (Polar PMD): only to a client that names it.
    case acc
    /// Every session's live figures once a second while samples flow: their `session` messages in one.
    case figures
}

extension LiveMessageKind {
    /// The raw signals: tens to hundreds of samples a second per strap, so only a client (or an
    /// internal reader) that names them receives them; "every kind" leaves them out.
    public static let raw: Set<LiveMessageKind> = [.ecg, .acc]

    /// What `kinds=all` means: every kind but the raw signals.
    public static let everyKind: Set<LiveMessageKind> = Set(allCases).subtracting(raw)

    /// What the live stream sends a client that names no kinds: everything but `sample` and the raw signals.
    public static let streamedByDefault: Set<LiveMessageKind> = everyKind.subtracting([.sample])
}

extension LiveMessageKind {
    /// The kind's place among ``allCases``, without hashing its name: a raw-value enum hashes and
    /// compares its string, and the live hub asks this for every message.
    public var ordinal: Int {
        switch self {
        case .sample: 0
        case .measurement: 1
        case .sensor: 2
        case .session: 3
        case .event: 4
        case .zone: 5
        case .hrv: 6
        case .plan: 7
        case .class: 8
        case .adapter: 9
        case .peripheral: 10
        case .activityBegan: 11
        case .activityEnded: 12
        case .dropped: 13
        case .error: 14
        case .ecg: 15
        case .acc: 16
        case .figures: 17
        }
    }
}
