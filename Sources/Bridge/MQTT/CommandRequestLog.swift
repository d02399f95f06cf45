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
}
