import JSONSupport

/// The replies to the last commands that carried a `requestId`: a QoS 1 command the broker
/// delivers again (its acknowledgement was lost) is answered again, not run again.
///
/// A pure value: ``MQTTBridge`` handles one command at a time and asks before running one.
struct CommandRequestLog: Sendable, Equatable {
    /// How many request ids are remembered; the oldest goes first.
    let limit: Int
    private var replies: [String: String] = [:]
    private var order: [String] = []

    init(limit: Int = 256) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// The reply already sent for `requestID`, when it is a request seen lately.
    func reply(to requestID: String) -> String? { replies[requestID] }

    /// Remembers the reply sent for `requestID`.
    mutating func remember(_ reply: String, for requestID: String) {
        if replies.updateValue(reply, forKey: requestID) == nil { order.append(requestID) }
        while order.count > limit { replies[order.removeFirst()] = nil }
    }

    /// How many request ids are remembered.
    var count: Int { replies.count }

    /// The longest `requestId`, in characters. A longer one is refused, not cut: two cut alike
    /// would share one reply, and the second command would not run.
    static let maximumIDLength = 128

    /// The request id of a command's `requestId` member (nil: none, or not a string); one longer
    /// than ``maximumIDLength`` is an `invalid_request`.
    static func requestID(_ value: JSONValue?) throws(APIError) -> String? {
        guard case .string(let text)? = value else { return nil }
        guard text.count <= maximumIDLength else {
            throw .badRequest("'requestId' is \(text.count) characters; at most \(maximumIDLength)")
        }
        return text
    }
}
