/// Why ``HeartRatePeripheral/run()`` gave up: only errors that cannot heal by waiting.
public enum PeripheralError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Our object path is already served on this connection (another peripheral on the same path).
    case objectPathTaken(String)
    /// The adapter name or object path cannot be a D-Bus object path.
    case invalidConfiguration(String)
    /// ``HeartRatePeripheral/run()`` is already running.
    case alreadyRunning
    /// The bus connection closed.
    case disconnected

    /// One line for logs.
    public var description: String {
        switch self {
        case .objectPathTaken(let path): "the object path \(path) is already served on this connection"
        case .invalidConfiguration(let problem): problem
        case .alreadyRunning: "the peripheral is already running"
        case .disconnected: "the D-Bus connection closed"
        }
    }
}
