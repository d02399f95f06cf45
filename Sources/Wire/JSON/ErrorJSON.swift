/// The body of every API error: `{"error":{"code":…,"message":…}}` (what the API client reads back).
public struct ErrorJSON: Codable, Sendable, Equatable {
    /// A stable machine-readable code and what is wrong, in words.
    public struct Detail: Codable, Sendable, Equatable {
        public var code: String
        public var message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    public var error: Detail

    public init(code: String, message: String) {
        error = Detail(code: code, message: message)
    }
}
