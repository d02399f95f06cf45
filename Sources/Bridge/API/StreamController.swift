import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore

/// `/v1/events` (Server-Sent Events) and `/v1/ws` (WebSocket): the live stream, optionally
/// filtered by session and sensor, starting with the current state.
struct StreamController {
    let core: BridgeCore

    func addRoutes(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.get("events") { request, _ in
            let (session, sensor) = try Self.filter(request.uri)
            // Subscribe first, then snapshot: a late subscriber misses nothing.
            let messages = core.hub.subscribe(session: session, sensor: sensor)
            let initial = await core.currentState()
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    for message in initial where message.matches(session: session, sensor: sensor) {
                        try await writer.write(ByteBuffer(string: "event: \(message.kind)\ndata: \(message.json)\n\n"))
                    }
                    for await delivery in messages {
                        try await writer.write(
                            ByteBuffer(string: "event: \(delivery.kind)\ndata: \(delivery.json)\n\n"))
                    }
                    try await writer.finish(nil)
                })
        }
        v1.ws("ws") { request, _ in
            _ = try Self.filter(request.uri)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let (session, sensor) = (try? Self.filter(context.request.uri)) ?? (nil, nil)
            let messages = core.hub.subscribe(session: session, sensor: sensor)
            let initial = await core.currentState()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // Nothing is expected from the client; reading notices when it goes away.
                    for try await _ in inbound {}
                }
                group.addTask {
                    for message in initial where message.matches(session: session, sensor: sensor) {
                        try await outbound.write(.text(message.json))
                    }
                    for await delivery in messages { try await outbound.write(.text(delivery.json)) }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// The stream filters: `?session=ID&sensor=ADDRESS`.
    static func filter(_ uri: URI) throws -> (session: UUID?, sensor: String?) {
        let parameters = uri.queryParameters
        var session: UUID?
        if let text = parameters.get("session") {
            guard let id = UUID(uuidString: text) else { throw APIError.badRequest("'session' is not a session id") }
            session = id
        }
        return (session, parameters.get("sensor"))
    }
}
