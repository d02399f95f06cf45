/// VRChat's chatbox text with the heart rate (`/chatbox/input s T F`), rate-limited.
public struct OSCChatbox: Hashable, Sendable {
    /// The chatbox's address.
    public static let address = "/chatbox/input"
    /// VRChat shows at most this many characters (wiki.vrchat.com "Chatbox").
    public static let characterLimit = 144
    /// What `{hr}` stands for in ``format``.
    public static let heartRatePlaceholder = "{hr}"

    /// The text, with `{hr}` replaced by the heart rate.
    public var format: String
    /// The shortest time between two chatbox messages.
    public var every: Duration

    /// A chatbox line; the default says `❤ 72 bpm` every 5 s.
    public init(format: String = "❤ {hr} bpm", every: Duration = .seconds(5)) {
        self.format = format
        self.every = every
    }

    /// The text for `heartRate`, cut to ``characterLimit``: counted in UTF-16 units (VRChat is a
    /// C# program; an emoji counts twice) and cut only between characters, never inside one.
    public func text(heartRate: Int) -> String {
        let full = format.replacing(Self.heartRatePlaceholder, with: String(heartRate))
        var units = 0
        var cut = full.startIndex
        for index in full.indices {
            units += full[index].utf16.count
            guard units <= Self.characterLimit else { break }
            cut = full.index(after: index)
        }
        return String(full[..<cut])
    }

    /// The message: the text, send at once (`T`, not into the keyboard), no notification sound (`F`).
    public func message(heartRate: Int) -> OSCMessage {
        OSCMessage(Self.address, [.string(text(heartRate: heartRate)), .bool(true), .bool(false)])
    }
}
