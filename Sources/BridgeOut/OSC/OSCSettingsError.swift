/// A key of `[osc]` with a value hrbridge cannot use.
public struct OSCSettingsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the value.
    public enum Problem: Hashable, Sendable, CustomStringConvertible {
        /// A number outside what the key accepts.
        case outOfRange(String, allowed: String)
        /// Not above the other key's value (`max_hr` must be above `min_hr`).
        case notAbove(String)
        /// A word that is none of the allowed ones.
        case notOneOf(String, allowed: [String])
        /// Not a `host:port`.
        case target(OSCTargetError)
        /// Not a source.
        case source(RelaySourceError)
        /// Not a preset.
        case preset(OSCPresetNameError)
        /// A key whose value is not text was given text.
        case notText
        /// An empty (or all-blank) or overlong text.
        case emptyOrTooLong
        /// A NUL character, which would end the OSC string early.
        case containsNUL
        /// A parameter name OSC or VRChat cannot take.
        case badName(String, why: String)
        /// The same parameter name as another key's: one parameter cannot carry two quantities.
        case sameName(as: String)
        /// `preset = "custom"` with no `[osc.custom]` names.
        case noCustomNames
        /// Custom names given with a preset other than `custom`.
        case namesNeedCustomPreset

        public var description: String {
            switch self {
            case .outOfRange(let value, let allowed): "\(value) is outside \(allowed)"
            case .notAbove(let other): "must be above \(other)"
            case .notOneOf(let value, let allowed): "\"\(value)\" is not one of \(allowed.joined(separator: ", "))"
            case .target(let error): error.description
            case .source(let error): error.description
            case .preset(let error): error.description
            case .notText: "is not a text key"
            case .emptyOrTooLong: "must be 1 to 1000 characters and not blank"
            case .containsNUL: "contains a NUL character"
            case .badName(let name, let why): "name \"\(name)\" \(why)"
            case .sameName(let other): "has the same name as \(other)"
            case .noCustomNames: "preset \"custom\" needs names in [osc.custom], e.g. hr = \"HR\""
            case .namesNeedCustomPreset: "custom names are used only with preset = \"custom\""
            }
        }
    }

    /// The key, as spelled in the file (`max_hr`, `custom.hr`).
    public var key: String
    /// What is wrong.
    public var problem: Problem

    /// An error for `key`.
    public init(key: String, _ problem: Problem) {
        self.key = key
        self.problem = problem
    }

    /// `[osc] max_hr: must be above min_hr`.
    public var description: String { "[osc] \(key): \(problem)" }
}
