/// The parameter sets hrbridge can send, named as the apps whose avatars they fit.
public enum OSCPresetName: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// HRtoVRChat_OSC's names (`HR`, `isHRConnected`, `isHRBeat`, `HRPercent`…): the default.
    case hrtovrchat
    /// HRPresence's names (`HR`, `floatHR`, `RRInterval`…).
    case hrpresence
    /// iron-heart's names (`HeartBeatToggle`, `HRBattery`…).
    case ironHeart = "iron-heart"
    /// VRCOSC's heart-rate module (`VRCOSC/Heartrate/Value`…).
    case vrcosc
    /// The user's own names for each quantity.
    case custom

    /// Parses a name as written in the configuration or on the command line (any case).
    public init(parsing text: String) throws(OSCPresetNameError) {
        let trimmed = text.trimmingSpaces().lowercased()
        guard let name = Self(rawValue: trimmed) else { throw OSCPresetNameError(text: String(text.prefix(64))) }
        self = name
    }

    /// The spelling ``init(parsing:)`` reads.
    public var description: String { rawValue }
}

/// A preset name that is none of hrbridge's.
public struct OSCPresetNameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was given (at most 64 characters of it).
    public var text: String

    /// An error for `text`.
    public init(text: String) { self.text = text }

    public var description: String {
        "preset \"\(text)\" is not one of "
            + OSCPresetName.allCases.map(\.rawValue).joined(separator: ", ")
    }
}

extension String {
    /// Without leading and trailing white space.
    func trimmingSpaces() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
