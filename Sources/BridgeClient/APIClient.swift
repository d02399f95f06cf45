public import Foundation
import JSONSupport
import NIOCore
public import NIOHTTP1
import NIOPosix
import Wire

/// A small HTTP/1.1 client for the daemon's API, over its Unix socket or TCP (used by
/// `hrbridge session …` and the tests). NIO does the HTTP; this only frames requests.
public struct APIClient: Sendable {
    /// Where the API listens.
    public enum Endpoint: Sendable {
        case unix(String)
        case tcp(host: String, port: Int)
    }

    /// A response: status and body.
    public struct Reply: Sendable {
        /// The HTTP status.
        public var status: Int
        /// Extra response headers.
        public var headers: [(String, String)]
        /// The response body.
        public var body: Data

        /// The body as `Value`, or nil when it is not one.
        public func decode<Value: Decodable>(_ type: Value.Type) -> Value? { try? JSONText.decode(type, from: body) }
        /// The error message of an error body.
        public var errorMessage: String? { decode(ErrorJSON.self)?.error.message }
    }

    /// Where the daemon listens.
    public var endpoint: Endpoint
    /// The bearer token sent with every request (TCP only).
    public var token: String?
    /// How long one request may take, connecting included: a daemon that does not answer is an
    /// error (`APIClientError.timedOut`), not a hang.
    public var timeout: Duration

    /// A client for the API at `endpoint`.
    public init(endpoint: Endpoint, token: String? = nil, timeout: Duration = .seconds(60)) {
        self.endpoint = endpoint
        self.token = token
        self.timeout = timeout
    }

    /// Runs `body`, cancelled (and its channel closed) once ``timeout`` passes.
    private func bounded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = timeout
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw APIClientError.timedOut(timeout) }
            return value
        }
    }

    private func connect() async throws -> NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart> {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        let initializer:
            @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>> =
                {
                    channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel(wrappingChannelSynchronously: channel)
                    }
                }
        switch endpoint {
        case .unix(let path):
            do {
                return try await bootstrap.connect(unixDomainSocketPath: path, channelInitializer: initializer)
            } catch let error as IOError where error.errnoCode == EACCES {
                // Not "no daemon": one runs, and this user may not talk to it.
                throw APIClientError.permissionDenied(path)
            }
        case .tcp(let host, let port):
            return try await bootstrap.connect(host: host, port: port, channelInitializer: initializer)
        }
    }

    private func head(_ method: HTTPMethod, _ path: String, bodyLength: Int) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: "localhost")
        head.headers.add(name: "Connection", value: "close")
        head.headers.add(name: "Content-Length", value: String(bodyLength))
        if bodyLength > 0 { head.headers.add(name: "Content-Type", value: "application/json") }
        if let token { head.headers.add(name: "Authorization", value: "Bearer \(token)") }
        return head
    }

    /// Sends one request and collects the whole response.
    public func send(_ method: HTTPMethod, _ path: String) async throws -> Reply {
        try await sendRaw(method, path, body: Data())
    }

    /// Sends one request with `body` as JSON.
    public func send(_ method: HTTPMethod, _ path: String, json body: some Encodable) async throws -> Reply {
        try await sendRaw(method, path, body: Data(try JSONText.line(body).utf8))
    }

    /// Sends one request with `body` as it is (JSON content type when not empty).
    public func sendRaw(_ method: HTTPMethod, _ path: String, body: Data) async throws -> Reply {
        try await bounded { try await exchange(method, path, body: body) }
    }

    private func exchange(_ method: HTTPMethod, _ path: String, body: Data) async throws -> Reply {
        let channel = try await connect()
        return try await channel.executeThenClose { inbound, outbound in
            var parts: [HTTPClientRequestPart] = [.head(head(method, path, bodyLength: body.count))]
            if !body.isEmpty { parts.append(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
            parts.append(.end(nil))
            // One write, one flush: a server that answers at once and closes cannot race a second write.
            try await outbound.write(contentsOf: parts)
            var reply = Reply(status: 0, headers: [], body: Data())
            for try await part in inbound {
                switch part {
                case .head(let head):
                    reply.status = Int(head.status.code)
                    reply.headers = head.headers.map { ($0.name, $0.value) }
                case .body(let buffer): reply.body.append(contentsOf: buffer.readableBytesView)
                case .end: return reply
                }
            }
            return reply
        }
    }

    /// Follows a Server-Sent Events stream: `onEvent(kind, data)` for each event until it returns false.
    /// Throws when the answer is not 200 (with the error message).
    public func events(_ path: String, onEvent: (String, String) async -> Bool) async throws {
        let channel = try await connect()
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(contentsOf: [.head(head(.GET, path, bodyLength: 0)), .end(nil)])
            var parser = ServerSentEventParser()
            var status = 0
            var errorBody = Data()
            for try await part in inbound {
                switch part {
                case .head(let head): status = Int(head.status.code)
                case .body(let buffer):
                    guard status == 200 else {
                        if errorBody.count < ServerSentEventParser.maximumEventBytes {
                            errorBody.append(contentsOf: buffer.readableBytesView)
                        }
                        continue
                    }
                    let events = parser.feed(buffer.readableBytesView)
                    for event in events { guard await onEvent(event.kind, event.data) else { return } }
                    if parser.isOverLimit {
                        throw APIClientError.status(
                            status, "an event of more than \(ServerSentEventParser.maximumEventBytes) bytes")
                    }
                case .end:
                    if status != 200 {
                        let reply = Reply(status: status, headers: [], body: errorBody)
                        throw APIClientError.status(status, reply.errorMessage ?? "")
                    }
                    return
                }
            }
        }
    }
}

/// A refused request.
public enum APIClientError: Error, CustomStringConvertible {
    /// The API answered with an error status and message.
    case status(Int, String)
    /// The API did not answer within the client's timeout.
    case timedOut(Duration)
    /// The socket exists but this user may not connect to it (not in its group).
    case permissionDenied(String)

    /// A one-line description for messages and logs.
    public var description: String {
        switch self {
        case .status(let code, let message): "HTTP \(code): \(message)"
        case .timedOut(let timeout): "the daemon did not answer within \(timeout)"
        case .permissionDenied(let path):
            "permission denied on \(path): the daemon's socket is for members of its group "
                + "(sudo usermod -aG hrbridge $USER, then log in again)"
        }
    }
}
