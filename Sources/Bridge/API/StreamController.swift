import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore
import Sensors
import Wire

/// `/v1/events` (Server-Sent Events) and `/v1/ws` (WebSocket): the live stream, optionally
/// filtered by session, sensor and kinds, starting with the current state.
struct StreamController {
    let core: BridgeCore

    func addRoutes(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.get("events") { request, _ in
            let (session, sensor, kinds) = try Self.filter(request.uri)
            // Subscribe first, then snapshot: a late subscriber misses nothing.
            let messages = core.hub.subscribe(session: session, sensor: sensor, kinds: kinds)
            let initial = await core.currentState()
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    // A stream with nothing to send never writes: only the client closing its side
                    // tells that it went away, which ends the subscription (cancelled) with it.
                    try await request.body.consumeWithCancellationOnInboundClose { _ in
                        for message in initial
                        where message.matches(session: session, sensor: sensor) && kinds.contains(message.kind) {
                            try await writer.write(
                                ByteBuffer(string: "event: \(message.kind)\ndata: \(message.json)\n\n"))
                        }
                        for await delivery in messages {
                            try await writer.write(
                                ByteBuffer(string: "event: \(delivery.kind)\ndata: \(delivery.json)\n\n"))
                        }
                    }
                    try await writer.finish(nil)
                })
        }
        // Without an upgrade: the upgrade itself goes to the WebSocket router (addWebSocketRoute).
        v1.get("ws") { _, _ -> Response in
            var error = APIError(
                .methodNotAllowed, "method_not_allowed",
                "/v1/ws is a WebSocket: ask for an upgrade (Connection: Upgrade, Upgrade: websocket)")
            error.headers[.allow] = "GET"
            throw error
        }
    }

    /// `GET /v1/ws` with an upgrade: the WebSocket router's only route.
    func addWebSocketRoute(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.ws("ws") { request, _ in
            _ = try Self.filter(request.uri)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let (session, sensor, kinds) =
                (try? Self.filter(context.request.uri)) ?? (nil, nil, LiveMessageKind.streamedByDefault)
            let messages = core.hub.subscribe(session: session, sensor: sensor, kinds: kinds)
            let initial = await core.currentState()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // Nothing is expected from the client; reading notices when it goes away.
                    for try await _ in inbound {}
                }
                group.addTask {
                    for message in initial
                    where message.matches(session: session, sensor: sensor) && kinds.contains(message.kind) {
                        try await outbound.write(.text(message.json))
                    }
                    for await delivery in messages { try await outbound.write(.text(delivery.json)) }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// The stream filters: `?session=ID&sensor=ADDRESS&kinds=K1,K2` (`kinds=all`: every kind but
    /// the raw signals). Without `kinds`, every kind but `sample`: a session's samples are several
    /// messages per frame (heart rate and each RR interval), which a board does not read, so a
    /// client asks for them. `ecg` and `acc` (130 Hz and more per strap) come only when named.
    static func filter(_ uri: URI) throws -> (session: UUID?, sensor: String?, kinds: Set<LiveMessageKind>) {
        let parameters = uri.queryParameters
        var session: UUID?
        if let text = parameters.get("session") {
            guard let id = UUID(uuidString: text) else { throw APIError.badRequest("'session' is not a session id") }
            session = id
        }
        var sensor: String?
        if let text = parameters.get("sensor") {
            // Messages name sensors in upper case; anything else would match nothing, silently.
            guard BluetoothAddress.isValid(text.uppercased()) else {
                throw APIError.badRequest("'sensor' is not a Bluetooth address such as C0:FF:EE:00:00:01")
            }
            sensor = text.uppercased()
        }
        return (session, sensor, try kinds(parameters.get("kinds")))
    }

    /// The kinds a `kinds` parameter names; an unknown one is refused, naming it.
    static func kinds(_ text: String?) throws -> Set<LiveMessageKind> {
        guard let text else { return LiveMessageKind.streamedByDefault }
        if text == "all" { return LiveMessageKind.everyKind }
        let names = text.split(separator: ",", omittingEmptySubsequences: false)
        guard names.count <= 64 else { throw APIError.badRequest("'kinds': at most 64 names") }
        var kinds: Set<LiveMessageKind> = []
        for name in names {
            guard let kind = LiveMessageKind(rawValue: String(name)) else {
                let known = LiveMessageKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw APIError.badRequest("'kinds': '\(name.prefix(40))' is not a message kind (\(known), or all)")
            }
            kinds.insert(kind)
        }
        return kinds
    }
}
