/// Makes a name that came from outside (a strap's advertised name or alias, a user's text) safe
/// to show in a terminal, a page, a log line or an advertisement.
///
/// Kept: printable characters, emoji sequences whole. Dropped: control characters (a terminal's
/// escape sequences, newlines that would forge log lines), bidi controls (an RTL override would
/// let a name display as another), other invisible format characters, private-use and unassigned
/// code points. Whitespace runs become one space, none at either end. The result is cut on a
/// character boundary to `maximumBytes` of UTF-8.
public enum DisplayName {
    /// The longest name a Bluetooth device may have (Core Specification: the Device Name
    /// characteristic holds at most 248 bytes).
    public static let bluetoothMaximumBytes = 248

    /// How many characters of the input are looked at: the output is shorter, and the input is
    /// untrusted (an imitation of BlueZ may send megabytes).
    static let scannedCharacters = 1024

    /// The name as it may be shown: empty when nothing printable is left.
    public static func cleaned(_ name: String, maximumBytes: Int = bluetoothMaximumBytes) -> String {
        var cleaned = String.UnicodeScalarView()
        var afterSpace = true
        for character in name.prefix(scannedCharacters) {
            let isFlagSequence = character.unicodeScalars.first?.value == 0x1F3F4
            for scalar in character.unicodeScalars {
                switch disposition(of: scalar, inFlagSequence: isFlagSequence) {
                case .keep:
                    cleaned.append(scalar)
                    afterSpace = false
                case .space:
                    if !afterSpace { cleaned.append(" ") }
                    afterSpace = true
                case .drop:
                    continue
                }
            }
        }
        // Characters are counted again: dropping scalars can change where they end.
        var result = ""
        var bytes = 0
        for character in String(cleaned) {
            let size = character.utf8.count
            guard bytes + size <= maximumBytes else { break }
            result.append(character)
            bytes += size
        }
        while result.last == " " { result.removeLast() }
        return result
    }

    private enum Disposition {
        case keep, space, drop
    }

    private static func disposition(of scalar: Unicode.Scalar, inFlagSequence: Bool) -> Disposition {
        let properties = scalar.properties
        if properties.isWhitespace { return .space }
        switch properties.generalCategory {
        case .control, .privateUse, .surrogate, .unassigned, .lineSeparator, .paragraphSeparator:
            return .drop
        case .format:
            switch scalar.value {
            // Joiners hold emoji sequences and some scripts' words together.
            case 0x200C, 0x200D: return .keep
            // Tag characters only inside a subdivision flag (🏴 + tags); elsewhere they hide text.
            case 0xE0020...0xE007F: return inFlagSequence ? .keep : .drop
            // Bidi controls (U+061C, U+200E/F, U+202A–E, U+2066–9) and every other invisible one.
            default: return .drop
            }
        default:
            return .keep
        }
    }
}
