/// One avatar parameter a preset sends: the OSC address and what it carries.
public struct OSCParameter: Hashable, Sendable, CustomStringConvertible {
    /// VRChat's prefix for avatar parameters.
    public static let avatarPrefix = "/avatar/parameters/"

    /// The full OSC address.
    public var address: String
    /// What it carries (and so its OSC type).
    public var quantity: OSCQuantity

    /// A parameter at `address` carrying `quantity`.
    public init(address: String, quantity: OSCQuantity) {
        self.address = address
        self.quantity = quantity
    }

    /// An avatar parameter named `name`: `/avatar/parameters/<name>`; a name that starts with `/` is
    /// taken as the full address (for receivers other than avatars).
    public init(name: String, quantity: OSCQuantity) {
        self.init(address: name.hasPrefix("/") ? name : Self.avatarPrefix + name, quantity: quantity)
    }

    /// `/avatar/parameters/HR (hr)`.
    public var description: String { "\(address) (\(quantity))" }

    /// Why `name` cannot be a parameter name, or nil when it can: printable ASCII without spaces
    /// and without the characters OSC reserves for address patterns (`# * , ? [ ] { }`).
    public static func problem(withName name: String) -> String? {
        if name.isEmpty { return "is empty" }
        if name == "/" || name.hasSuffix("/") { return "ends with \"/\"" }
        let reserved: Set<Character> = ["#", "*", ",", "?", "[", "]", "{", "}", " "]
        for character in name {
            guard character.isASCII, let scalar = character.unicodeScalars.first, scalar.value > 0x20,
                scalar.value < 0x7F
            else { return "has \"\(character)\", not printable ASCII" }
            if reserved.contains(character) { return "has \"\(character)\", which OSC reserves" }
        }
        return nil
    }
}
