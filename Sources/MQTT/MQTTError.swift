public import Threads

/// What went wrong talking to an MQTT broker.
public enum MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broker address is not `mqtt://host[:port]` or `mqtts://host[:port]`.
    case invalidURL(String, reason: String)
    /// A TLS or credential file cannot be used.
    case unusableFile(String, reason: String)
    /// libmosquitto refused a call (its error text).
    case library(call: String, code: Int32, message: String)
    /// A topic that cannot be published to (empty, with wildcards, too long).
    case invalidTopic(String)
    /// No thread could be started for a blocking libmosquitto call (the connect).
    case threadUnavailable(ThreadStartError)

    /// A one-line description for messages and logs.
    public var description: String {
        switch self {
        case .invalidURL(let url, let reason):
            // At most 120 characters of it, control characters shown as `?`: it is the user's text.
            "broker URL '\(String(url.prefix(120).map { $0.isASCII && ($0.asciiValue ?? 0) < 0x20 ? "?" : $0 }))': \(reason)"
        case .unusableFile(let path, let reason): "\(path): \(reason)"
        case .library(let call, let code, let message): "\(call) failed (\(code)): \(message)"
        case .invalidTopic(let topic): "'\(topic.prefix(80))' is not a topic one can publish to"
        case .threadUnavailable(let error): "\(error)"
        }
    }
}
