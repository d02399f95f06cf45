/// An OSC 1.0 message: an address pattern and typed arguments, sent as one UDP datagram.
public struct OSCMessage: Hashable, Sendable, CustomStringConvertible {
    /// Where it goes on the receiver: `/avatar/parameters/HR`, `/chatbox/input`.
    public var address: String
    /// The arguments, in order.
    public var arguments: [OSCArgument]

    /// A message to `address` with `arguments`.
    public init(_ address: String, _ arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// The type tag string: a comma, then one character per argument (`,i`, `,sTF`).
    public var typeTags: String { "," + String(arguments.map(\.typeTag)) }

    /// The datagram (OSC 1.0): address and type tags as padded OSC-strings, then each argument's
    /// data, big-endian. The address must not contain a NUL (the receiver would cut it there).
    public func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(address.utf8.count + arguments.count * 8 + 8)
        OSCArgument.appendPadded(address, to: &bytes)
        OSCArgument.appendPadded(typeTags, to: &bytes)
        for argument in arguments { argument.appendData(to: &bytes) }
        return bytes
    }

    /// `/avatar/parameters/HR ,i 72`.
    public var description: String {
        ([address, typeTags] + arguments.map(\.description)).joined(separator: " ")
    }
}
