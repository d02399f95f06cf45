import Sensors

/// Makes an untrusted name (a strap's, a user's) safe to advertise: ``DisplayName``'s rules, cut
/// to fit a legacy advertisement, and never empty.
public enum AdvertisedName {
    /// The name advertised when nothing of the given one is left.
    public static let fallback = "hrbridge HR"

    /// Bytes left for the name in a legacy advertisement: 31, less the flags (3), the 16-bit
    /// service UUID list holding 0x180D (4), the appearance (4) and the name's own length and type (2).
    public static let maximumBytes = 31 - 3 - 4 - 4 - 2

    /// The name as it may be advertised: printable, at most ``maximumBytes`` UTF-8 bytes, cut
    /// between characters, or ``fallback`` when nothing is left.
    public static func sanitized(_ name: String) -> String {
        let cleaned = DisplayName.cleaned(name, maximumBytes: maximumBytes)
        return cleaned.isEmpty ? fallback : cleaned
    }
}
