/// The daemon's `[osc]` table: OSC for VR avatars, with its defaults.
public struct OSCSettings: Hashable, Sendable {
    /// The keys of `[osc]`, as spelled in the file (custom names are in `[osc.custom]`).
    public enum Key: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        case enabled, target, source, preset
        case minHR = "min_hr"
        case maxHR = "max_hr"
        case beatPulseMs = "beat_pulse_ms"
        case beatDelayMs = "beat_delay_ms"
        case onDrop = "on_drop"
        case chatbox
        case chatboxFormat = "chatbox_format"
        case chatboxEverySeconds = "chatbox_every_s"
        case custom

        /// The spelling in the file.
        public var description: String { rawValue }
    }

    /// The ranges the numeric keys accept.
    public enum Limits {
        /// `min_hr`.
        public static let minHR = 0...250
        /// `max_hr` (and above `min_hr`).
        public static let maxHR = 1...300
        /// `beat_pulse_ms`.
        public static let beatPulseMs = 20...1000
        /// `beat_delay_ms`.
        public static let beatDelayMs = 0...5000
        /// `chatbox_every_s`.
        public static let chatboxEverySeconds = 1.0...3600.0
        /// `chatbox_format`, in characters.
        public static let chatboxFormatLength = 1...1000
    }

    /// Whether OSC is sent.
    public var enabled = false
    /// Where: `127.0.0.1:9000` for VRChat on this machine, the headset's LAN address for Quest standalone.
    public var target = OSCTarget.localVRChat
    /// Whose heart rate: a strap's address, `session` or `simulator`.
    public var source = RelaySource.session
    /// Which parameter names.
    public var preset = OSCPresetName.hrtovrchat
    /// With `preset = "custom"`: the name for each quantity to send (`[osc.custom]`).
    public var customNames: [OSCQuantity: String] = [:]
    /// The heart rate at 0 in `percent` parameters.
    public var minHR = 40
    /// The heart rate at 1 in `percent` parameters.
    public var maxHR = 200
    /// How long the beat parameter stays true.
    public var beatPulseMs = 100
    /// How long after its own time a beat is played (0: when its frame arrives).
    public var beatDelayMs = 1000
    /// The heart rate while the source is dropped: 0 or the last one.
    public var onDrop = OSCDropBehaviour.zero
    /// Whether the chatbox shows the heart rate.
    public var chatbox = false
    /// The chatbox text; `{hr}` is the heart rate.
    public var chatboxFormat = "❤ {hr} bpm"
    /// The shortest time between two chatbox messages, in seconds.
    public var chatboxEverySeconds = 5.0

    /// The defaults.
    public init() {}

    /// Sets a key whose value the file spells as a string (`target`, `source`, `preset`,
    /// `on_drop`, `chatbox_format`); the error names the key.
    public mutating func set(_ key: Key, to text: String) throws(OSCSettingsError) {
        do {
            switch key {
            case .target: target = try OSCTarget(parsing: text)
            case .source: source = try RelaySource(parsing: text)
            case .preset: preset = try OSCPresetName(parsing: text)
            case .onDrop:
                guard let behaviour = OSCDropBehaviour(rawValue: text.trimmingSpaces().lowercased()) else {
                    throw OSCSettingsError(
                        key: key.rawValue,
                        .notOneOf(String(text.prefix(64)), allowed: OSCDropBehaviour.allCases.map(\.rawValue)))
                }
                onDrop = behaviour
            case .chatboxFormat: chatboxFormat = text
            default: throw OSCSettingsError(key: key.rawValue, .notText)
            }
        } catch let error as OSCTargetError {
            throw OSCSettingsError(key: key.rawValue, .target(error))
        } catch let error as RelaySourceError {
            throw OSCSettingsError(key: key.rawValue, .source(error))
        } catch let error as OSCPresetNameError {
            throw OSCSettingsError(key: key.rawValue, .preset(error))
        } catch let error as OSCSettingsError {
            throw error
        } catch {
            throw OSCSettingsError(key: key.rawValue, .notText)
        }
    }

    /// Sets the custom name of the quantity spelled `key` in `[osc.custom]` (`hr`, `beat`…).
    public mutating func setCustomName(_ key: String, to name: String) throws(OSCSettingsError) {
        guard let quantity = OSCQuantity(rawValue: key) else {
            throw OSCSettingsError(
                key: "custom.\(key.prefix(64))", .notOneOf(key, allowed: OSCQuantity.allCases.map(\.rawValue)))
        }
        customNames[quantity] = name
    }

    /// Checks every key; the first problem found is thrown, naming its key.
    public func validate() throws(OSCSettingsError) {
        try Self.check(minHR, in: Limits.minHR, key: .minHR)
        try Self.check(maxHR, in: Limits.maxHR, key: .maxHR)
        guard maxHR > minHR else { throw OSCSettingsError(key: Key.maxHR.rawValue, .notAbove(Key.minHR.rawValue)) }
        try Self.check(beatPulseMs, in: Limits.beatPulseMs, key: .beatPulseMs)
        try Self.check(beatDelayMs, in: Limits.beatDelayMs, key: .beatDelayMs)
        guard Limits.chatboxEverySeconds.contains(chatboxEverySeconds) else {
            throw OSCSettingsError(
                key: Key.chatboxEverySeconds.rawValue,
                .outOfRange("\(chatboxEverySeconds)", allowed: "\(Limits.chatboxEverySeconds)"))
        }
        guard Limits.chatboxFormatLength.contains(chatboxFormat.count),
            !chatboxFormat.allSatisfy(\.isWhitespace)
        else { throw OSCSettingsError(key: Key.chatboxFormat.rawValue, .emptyOrTooLong) }
        if chatboxFormat.contains("\0") { throw OSCSettingsError(key: Key.chatboxFormat.rawValue, .containsNUL) }
        try validateCustomNames()
    }

    private func validateCustomNames() throws(OSCSettingsError) {
        guard preset == .custom else {
            if let quantity = OSCQuantity.allCases.first(where: { customNames[$0] != nil }) {
                throw OSCSettingsError(key: "custom.\(quantity.rawValue)", .namesNeedCustomPreset)
            }
            return
        }
        guard !customNames.isEmpty else { throw OSCSettingsError(key: Key.custom.rawValue, .noCustomNames) }
        var seen: [String: OSCQuantity] = [:]
        for quantity in OSCQuantity.allCases {
            guard let name = customNames[quantity] else { continue }
            if let why = OSCParameter.problem(withName: name) {
                throw OSCSettingsError(key: "custom.\(quantity.rawValue)", .badName(String(name.prefix(64)), why: why))
            }
            let address = OSCParameter(name: name, quantity: quantity).address
            if let other = seen[address] {
                throw OSCSettingsError(key: "custom.\(quantity.rawValue)", .sameName(as: "custom.\(other.rawValue)"))
            }
            seen[address] = quantity
        }
    }

    private static func check(_ value: Int, in range: ClosedRange<Int>, key: Key) throws(OSCSettingsError) {
        guard range.contains(value) else {
            throw OSCSettingsError(key: key.rawValue, .outOfRange("\(value)", allowed: "\(range)"))
        }
    }

    /// The feed's configuration these settings stand for, once valid.
    public func feedConfiguration() throws(OSCSettingsError) -> OSCFeed.Configuration {
        try validate()
        return OSCFeed.Configuration(
            preset: OSCPreset(preset, customNames: customNames), minHeartRate: minHR, maxHeartRate: maxHR,
            beatPulse: .milliseconds(beatPulseMs), beatDelay: .milliseconds(beatDelayMs), onDrop: onDrop,
            chatbox: chatbox
                ? OSCChatbox(format: chatboxFormat, every: .milliseconds(Int((chatboxEverySeconds * 1000).rounded())))
                : nil)
    }
}
