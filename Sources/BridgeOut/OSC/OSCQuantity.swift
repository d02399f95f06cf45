/// What an avatar parameter carries. Each case's raw value is its key among a custom preset's
/// names (`[osc.custom] hr = "MyHeartRate"`).
public enum OSCQuantity: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The heart rate, int 0–255 (VRChat's int parameter range; higher is sent as 255).
    case heartRate = "hr"
    /// The heart rate's ones digit, int 0–9.
    case onesDigit = "ones_hr"
    /// The heart rate's tens digit, int 0–9.
    case tensDigit = "tens_hr"
    /// The heart rate's hundreds digit, int 0–2.
    case hundredsDigit = "hundreds_hr"
    /// The ones digit / 10, float 0–0.9 (VRCOSC's legacy `Units`).
    case onesDigitFraction = "ones_fraction"
    /// The tens digit / 10, float 0–0.9 (VRCOSC's legacy `Tens`).
    case tensDigitFraction = "tens_fraction"
    /// The hundreds digit / 10, float 0–0.2 (VRCOSC's legacy `Hundreds`).
    case hundredsDigitFraction = "hundreds_fraction"
    /// Where the heart rate sits between `min_hr` and `max_hr`, float 0–1.
    case percent = "percent"
    /// The heart rate mapped from 0…255 to −1…1, float (HRPresence's and iron-heart's `floatHR`).
    case signedUnit = "float_hr"
    /// Whether the strap (or the session's source) is connected, bool.
    case connected = "connected"
    /// Whether a heart rate is arriving now: connected, a reading since, not 0, skin contact not lost; bool.
    case active = "active"
    /// The last RR interval in milliseconds, int (over 255 it does not sync to other players).
    case rrInterval = "rr_interval"
    /// True for `beat_pulse_ms` at each beat, bool.
    case beat = "beat"
    /// Flips at each beat, bool (iron-heart's `HeartBeatToggle`: an animation can run on each edge).
    case beatToggle = "beat_toggle"
    /// The strap's battery level, int 0–100.
    case battery = "battery"
    /// The strap's battery level / 100, float 0–1.
    case batteryFraction = "battery_float"

    /// Whether it is sent at the beats' times rather than with the values.
    public var isBeat: Bool { self == .beat || self == .beatToggle }

    /// The key spelling.
    public var description: String { rawValue }
}
