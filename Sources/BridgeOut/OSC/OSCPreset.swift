/// The avatar parameters to send and what each carries (bridge-out.md, "Parameter names the
/// popular apps send"): an avatar made for one of these apps works unchanged.
public struct OSCPreset: Hashable, Sendable {
    /// Which preset.
    public var name: OSCPresetName
    /// The parameters, in the order they are sent.
    public var parameters: [OSCParameter]

    /// A preset as given.
    public init(name: OSCPresetName, parameters: [OSCParameter]) {
        self.name = name
        self.parameters = parameters
    }

    /// The named preset; `custom` takes `customNames` (quantities without a name are not sent).
    public init(_ name: OSCPresetName, customNames: [OSCQuantity: String] = [:]) {
        switch name {
        case .hrtovrchat: self = .hrtovrchat
        case .hrpresence: self = .hrpresence
        case .ironHeart: self = .ironHeart
        case .vrcosc: self = .vrcosc
        case .custom: self = .custom(customNames)
        }
    }

    /// HRtoVRChat_OSC (`AvatarSetup.md`).
    public static let hrtovrchat = OSCPreset(
        name: .hrtovrchat,
        parameters: [
            .init(name: "HR", quantity: .heartRate), .init(name: "onesHR", quantity: .onesDigit),
            .init(name: "tensHR", quantity: .tensDigit), .init(name: "hundredsHR", quantity: .hundredsDigit),
            .init(name: "isHRConnected", quantity: .connected), .init(name: "isHRActive", quantity: .active),
            .init(name: "isHRBeat", quantity: .beat), .init(name: "HRPercent", quantity: .percent),
        ])

    /// HRPresence (`README.md`).
    public static let hrpresence = OSCPreset(
        name: .hrpresence,
        parameters: [
            .init(name: "HR", quantity: .heartRate), .init(name: "onesHR", quantity: .onesDigit),
            .init(name: "tensHR", quantity: .tensDigit), .init(name: "hundredsHR", quantity: .hundredsDigit),
            .init(name: "floatHR", quantity: .signedUnit), .init(name: "isHRBeat", quantity: .beat),
            .init(name: "isHRConnected", quantity: .connected), .init(name: "RRInterval", quantity: .rrInterval),
        ])

    /// iron-heart (`README.md`); its reconnecting, twitch and activity parameters are not sent.
    public static let ironHeart = OSCPreset(
        name: .ironHeart,
        parameters: [
            .init(name: "isHRConnected", quantity: .connected), .init(name: "HRBattery", quantity: .battery),
            .init(name: "HRBatteryFloat", quantity: .batteryFraction),
            .init(name: "HeartBeatToggle", quantity: .beatToggle), .init(name: "isHRBeat", quantity: .beat),
            .init(name: "HR", quantity: .heartRate), .init(name: "floatHR", quantity: .signedUnit),
            .init(name: "RRInterval", quantity: .rrInterval),
        ])

    /// VRCOSC's heart-rate module, with its legacy digits (digit / 10 as floats).
    public static let vrcosc = OSCPreset(
        name: .vrcosc,
        parameters: [
            .init(name: "VRCOSC/Heartrate/Connected", quantity: .connected),
            .init(name: "VRCOSC/Heartrate/Value", quantity: .heartRate),
            .init(name: "VRCOSC/Heartrate/Normalised", quantity: .percent),
            .init(name: "VRCOSC/Heartrate/Units", quantity: .onesDigitFraction),
            .init(name: "VRCOSC/Heartrate/Tens", quantity: .tensDigitFraction),
            .init(name: "VRCOSC/Heartrate/Hundreds", quantity: .hundredsDigitFraction),
        ])

    /// The user's names, in ``OSCQuantity`` order; a quantity without a name is not sent.
    public static func custom(_ names: [OSCQuantity: String]) -> OSCPreset {
        OSCPreset(
            name: .custom,
            parameters: OSCQuantity.allCases.compactMap { quantity in
                names[quantity].map { OSCParameter(name: $0, quantity: quantity) }
            })
    }

    /// Whether any parameter is sent at the beats' times.
    public var sendsBeats: Bool { parameters.contains { $0.quantity.isBeat } }
}
