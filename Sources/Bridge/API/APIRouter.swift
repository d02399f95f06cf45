import Foundation
import HTTPTypes
public import Hummingbird
import JSONSupport
import NIOCore
import Sensors
import Wire

/// Builds the `/v1` API: REST (JSON), a Server-Sent Events stream and a WebSocket stream. Each
/// resource has its controller; this wires the middleware and the few routes of the API itself.
public enum APIRouter {
    /// The router for one listener; `requiresToken` is true on TCP.
    public static func make(core: BridgeCore, requiresToken: Bool) -> Router<BridgeRequestContext> {
        let router = withMiddleware(core: core, requiresToken: requiresToken)
        let v1 = router.group("v1")
        v1.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: EmbeddedFiles.openAPI)))
        }
        v1.get("health") { _, _ in try json(await health(core)) }
        router.get("metrics") { _, _ in
            guard let metrics = core.metrics else { throw APIError.notFound("this daemon exports no metrics") }
            await MetricsGauges.refresh(core)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: metrics.render())))
        }
        SensorController(core: core).addRoutes(to: v1)
        SessionController(core: core).addRoutes(to: v1)
        ClassController(core: core).addRoutes(to: v1)
        WorkoutController(core: core).addRoutes(to: v1)
        SampleChangesController(core: core).addRoutes(to: v1)
        AthleteController(core: core).addRoutes(to: v1)
        StreamController(core: core).addRoutes(to: v1)
        PageController().addRoutes(to: router)
        return router
    }

    /// The router a request asking for a WebSocket upgrade goes to: `GET /v1/ws` and nothing else,
    /// behind the same middleware (the token above all). Any other upgrade is declined unrun.
    public static func makeWebSocket(core: BridgeCore, requiresToken: Bool) -> Router<BridgeRequestContext> {
        let router = withMiddleware(core: core, requiresToken: requiresToken)
        StreamController(core: core).addWebSocketRoute(to: router.group("v1"))
        return router
    }

    private static func withMiddleware(core: BridgeCore, requiresToken: Bool) -> Router<BridgeRequestContext> {
        let router = Router(context: BridgeRequestContext.self)
        router.middlewares.add(SecurityHeadersMiddleware())
        router.middlewares.add(RefusalMiddleware())
        router.middlewares.add(TokenMiddleware(tokens: core.configuration.tokens, requiresToken: requiresToken))
        router.middlewares.add(MethodMiddleware())
        router.middlewares.add(QueryParametersMiddleware())
        router.middlewares.add(StoreErrorMiddleware())
        return router
    }

    static func health(_ core: BridgeCore) async -> HealthJSON {
        let storage = await core.sessions.storeHealth()
        var health = HealthJSON(
            status: "ok", adapter: "\(await core.sensors.availability)",
            adapters: await core.sensors.adapter.adapterStatuses().map(AdapterJSON.init),
            sensorsStreaming: await core.sensors.readyCount,
            sessionsActive: await core.sessions.activeCount)
        if let problem = StoreHealthJSON.problem(storage) {
            health.status = "degraded"
            health.problems = [problem]
            health.store = StoreHealthJSON(storage)
        }
        health.peripheral = await core.outputs.peripheral?.snapshot()
        return health
    }

    /// A JSON response of a typed value.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: try JSONText.line(value))))
    }
}
