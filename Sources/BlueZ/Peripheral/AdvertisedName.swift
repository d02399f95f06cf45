/// Makes an untrusted name (a strap's, a user's) safe to advertise.
///
/// Kept: printable characters, emoji sequences whole. Dropped: control characters, bidi
/// controls (an RTL override would let a name display as another), other invisible format
/// characters, private-use and unassigned code points. Whitespace runs become one space. The
/// result is cut on a character boundary to fit a legacy advertisement, and is never empty.
public enum AdvertisedName {
    /// The name advertised when nothing of the given one is left.
    public static let fallback = "hrbridge HR"

    /// Bytes left for the name in a legacy advertisement: 31, less the flags (3), the 16-bit
    /// service UUID list holding 0x180D (4), the appearance (4) and the name's own length and type (2).
    public static let maximumBytes = 31 - 3 - 4 - 4 - 2

    /// How many characters of the input are looked at: the output is far shorter, and the input
    /// is untrusted.
    static let scannedCharacters = 1024

    /// The name as it may be advertised: printable, at most ``maximumBytes`` UTF-8 bytes, cut
    /// between characters, or ``fallback`` when nothing is left.
    public static func sanitized(_ name: String) -> String {
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
        return result.isEmpty ? fallback : result
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
