/// The answer to an MQTT command, on the node's `cmd/response` topic: the request's id when it
/// gave one, whether it was done, and the session it concerns or why it was refused.
public struct CommandReplyJSON: Codable, Sendable, Equatable {
    /// The command message's `requestId`, when it had one.
    public var requestId: String?
    /// The command's topic below `cmd/` (`session/start`, `session/<id>/lap`…).
    public var command: String
    public var ok: Bool
    /// The session after the command, when it was done.
    public var session: SessionJSON?
    /// Why it was refused, when it was.
    public var error: ErrorJSON.Detail?

    public init(
        requestId: String?, command: String, ok: Bool, session: SessionJSON? = nil, error: ErrorJSON.Detail? = nil
    ) {
        self.requestId = requestId
        self.command = command
        self.ok = ok
        self.session = session
        self.error = error
    }
}
