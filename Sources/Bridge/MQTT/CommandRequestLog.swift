import JSONSupport

/// The replies to the last commands that carried a `requestId`: a QoS 1 command the broker
/// delivers again (its acknowledgement was lost) is answered again, not run again.
///
/// A pure value: ``MQTTBridge`` handles one command at a time and asks before running one.
struct CommandRequestLog: Sendable, Equatable {
    /// A command and its request id, compared byte for byte: `é` and `e` + U+0301 are two ids,
    /// and one id sent with two commands is two requests.
    private struct Key: Hashable, Sendable {
        let command: [UInt8]
        let requestID: [UInt8]

        init(_ command: String, _ requestID: String) {
            self.command = Array(command.utf8)
            self.requestID = Array(requestID.utf8)
        }
    }

    /// How many request ids are remembered; the oldest goes first.
    let limit: Int
    private var replies: [Key: String] = [:]
    private var order: [Key] = []

    init(limit: Int = 256) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// The reply already sent for `requestID` of `command`, when it is a request seen lately.
    func reply(to requestID: String, command: String) -> String? { replies[Key(command, requestID)] }

    /// Remembers the reply sent for `requestID` of `command`.
    mutating func remember(_ reply: String, for requestID: String, command: String) {
        let key = Key(command, requestID)
        if replies.updateValue(reply, forKey: key) == nil { order.append(key) }
        while order.count > limit { replies[order.removeFirst()] = nil }
    }

    /// How many request ids are remembered.
    var count: Int { replies.count }

    /// The longest `requestId`, in UTF-8 bytes (a count of characters would let one character
    /// carry thousands of combining marks). A longer one is refused, not cut: two cut alike
    /// would share one reply, and the second command would not run.
    static let maximumIDBytes = 128

    /// The request id of a command's `requestId` member (nil: none); one that is not a string or
    /// is longer than ``maximumIDBytes`` is an `invalid_request`.
    static func requestID(_ value: JSONValue?) throws(APIError) -> String? {
        guard let value else { return nil }
        guard case .string(let text) = value else {
            throw .badRequest("'requestId' must be a string of at most \(maximumIDBytes) bytes")
        }
        guard text.utf8.count <= maximumIDBytes else {
            throw .badRequest("'requestId' is \(text.utf8.count) bytes; at most \(maximumIDBytes)")
        }
        return text
    }
}
