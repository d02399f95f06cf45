/// Where the runner's messages go: ``OSCSender`` (UDP), or a recorder in tests.
public protocol OSCTransport: Sendable {
    /// Sends one message; a failure is the transport's to count and log, never the caller's.
    func send(_ message: OSCMessage)
}
