/// A signal match rule: what the bus should route to this connection.
public struct MatchRule: Hashable, Sendable, CustomStringConvertible {
    /// The sender: a well-known name (`org.bluez`) or a unique name.
    public var sender: String?
    /// The object path, exactly.
    public var path: String?
    /// The object path or any path below it.
    public var pathNamespace: String?
    public var interface: String?
    /// The signal name.
    public var member: String?
    /// The first argument, when it is a string (e.g. the interface in PropertiesChanged).
    public var arg0: String?

    /// Creates a rule for signals.
    public init(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil, interface: String? = nil,
        member: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// The rule as the bus reads it: `type='signal',sender='org.bluez',…`.
    public var description: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender='\(sender)'") }
        if let path { parts.append("path='\(path)'") }
        if let pathNamespace { parts.append("path_namespace='\(pathNamespace)'") }
        if let interface { parts.append("interface='\(interface)'") }
        if let member { parts.append("member='\(member)'") }
        if let arg0 { parts.append("arg0='\(arg0)'") }
        return parts.joined(separator: ",")
    }

    /// Whether `signal` fits the rule but for its sender, which the connection checks against
    /// the current owner of a well-known name (messages carry unique names).
    func matchesIgnoringSender(_ signal: DBusSignal) -> Bool {
        matchesHeader(signal) && matchesArguments(signal)
    }

    /// Whether the signal's path, interface and member fit: read before its body is decoded, so
    /// a stranger's signal costs no decoding.
    func matchesHeader(_ signal: DBusSignal) -> Bool {
        if let path, path != signal.path { return false }
        if let pathNamespace,
            !(signal.path == pathNamespace || signal.path.hasPrefix(pathNamespace == "/" ? "/" : pathNamespace + "/"))
        {
            return false
        }
        if let interface, interface != signal.interface { return false }
        if let member, member != signal.member { return false }
        return true
    }

    /// Whether the signal's arguments fit (`arg0`).
    func matchesArguments(_ signal: DBusSignal) -> Bool {
        if let arg0, signal.arguments.first?.string != arg0 { return false }
        return true
    }
}

/// A received signal.
public struct DBusSignal: Hashable, Sendable {
    /// The sender's unique name.
    public var sender: String
    /// The emitting object's path.
    public var path: String
    public var interface: String
    /// The signal name.
    public var member: String
    public var arguments: [DBusValue]

    /// Creates a signal value.
    public init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// A change of a bus name's owner (`NameOwnerChanged`).
public struct NameOwnerChange: Hashable, Sendable {
    public var name: String
    /// The previous owner's unique name, or `nil` when it had none.
    public var oldOwner: String?
    /// The new owner's unique name, or `nil` when the name is released.
    public var newOwner: String?

    /// Creates a change.
    public init(name: String, oldOwner: String?, newOwner: String?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }
}

/// A method call received by an exported object.
public struct DBusMethodCall: Sendable {
    /// The caller's unique name.
    public var sender: String
    /// The object path called.
    public var path: String
    /// The interface, when the caller named one.
    public var interface: String?
    /// The method name.
    public var member: String
    public var arguments: [DBusValue]
}

/// The answer to an exported method call.
public enum DBusMethodReply: Sendable {
    /// A method return with these values.
    case success([DBusValue])
    /// An error reply.
    case failure(DBusError)
}
