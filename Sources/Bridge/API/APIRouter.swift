import Foundation
import HTTPTypes
public import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import NIOCore
import Samples
import Sensors
import WorkoutExport
import WorkoutStore
import Workouts

/// Builds the `/v1` API: REST (JSON), a Server-Sent Events stream and a WebSocket stream.
public enum APIRouter {
    /// The router for one listener; `requiresToken` is true on TCP.
    public static func make(core: BridgeCore, requiresToken: Bool) -> Router<BridgeRequestContext> {
        let router = Router(context: BridgeRequestContext.self)
        router.middlewares.add(SecurityHeadersMiddleware())
        router.middlewares.add(TokenMiddleware(tokens: core.configuration.tokens, requiresToken: requiresToken))
        router.middlewares.add(MethodMiddleware())
        router.middlewares.add(StoreErrorMiddleware())
        let v1 = router.group("v1")
        v1.get("openapi.json") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: EmbeddedFiles.openAPI)))
        }
        v1.get("health") { _, _ in
            let storage = await core.sessions.storeHealth()
            var object: [String: Any] = [
                "status": "ok", "adapter": "\(await core.sensors.availability)",
                "sensorsStreaming": await core.sensors.readyCount, "sessionsActive": await core.sessions.activeCount,
            ]
            if let problem = StoreHealthJSON.problem(storage) {
                object["status"] = "degraded"
                object["problems"] = [problem]
                object["store"] = StoreHealthJSON.object(storage)
            }
            return try json(object)
        }
        addSensorRoutes(v1, core: core)
        addSessionRoutes(v1, core: core)
        addWorkoutRoutes(v1, core: core)
        addAthleteRoutes(v1, core: core)
        addStreams(v1, core: core)
        addWorkoutSamples(v1, core: core)
        addPages(router)
        return router
    }

    // MARK: Helpers

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) throws -> Response {
        let text = try JSONText.render(object)
        return Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// The request's JSON object body (an empty body is an empty object).
    static func body(_ request: Request) async throws -> [String: Any] {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: 64 * 1024)
        } catch {
            throw APIError(.contentTooLarge, "too_large", "the body is larger than 64 KiB")
        }
        guard buffer.readableBytes > 0 else { return [:] }
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)),
            let dictionary = object as? [String: Any]
        else {
            throw APIError.badRequest("the body must be a JSON object")
        }
        return dictionary
    }

    static func sessionError(_ body: () async throws(SessionError) -> Response) async throws -> Response {
        do {
            return try await body()
        } catch {
            throw APIError(error)
        }
    }

    static func adapterError(_ error: any Error) -> APIError {
        if let error = error as? SensorAdapterError {
            switch error {
            case .unknownSensor: return APIError(.notFound, "unknown_sensor", error.description)
            case .notConnected: return APIError(.conflict, "not_connected", error.description)
            case .adapterUnavailable: return APIError(.conflict, "adapter_unavailable", error.description)
            default: return APIError(.conflict, "sensor_failed", error.description)
            }
        }
        return APIError(.conflict, "sensor_failed", "\(error)")
    }

    /// Whether `text` is a Bluetooth address: six hex pairs separated by colons.
    static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && UInt8($0, radix: 16) != nil }
    }

    static func address(_ context: BridgeRequestContext) throws -> String {
        let raw = try context.parameters.require("address")
        let address = (raw.removingPercentEncoding ?? raw).uppercased()
        guard isAddress(address) else {
            throw APIError.badRequest("'\(address)' is not a Bluetooth address such as C0:FF:EE:00:00:01")
        }
        return address
    }

    // MARK: Sensors

    static func addSensorRoutes(_ v1: RouterGroup<BridgeRequestContext>, core: BridgeCore) {
        v1.get("sensors") { _, _ in try json(["sensors": await core.sensors.list().map(\.fields)]) }
        v1.get("sensors/:address") { _, context in
            let address = try address(context)
            guard let status = await core.sensors.status(address) else {
                throw APIError(.notFound, "unknown_sensor", "no sensor \(address)")
            }
            return try json(status.fields)
        }
        for action in ["connect", "disconnect", "pair"] {
            v1.post("sensors/:address/\(action)") { _, context in
                try context.require(.control)
                let address = try address(context)
                // Only sensors that are configured or were seen advertising a fitness service: the
                // control role is not a general Bluetooth admin, and nothing is started for others.
                guard await core.sensors.status(address) != nil else {
                    throw APIError(
                        .notFound, "unknown_sensor", "no fitness sensor \(address) is configured or in range")
                }
                do {
                    switch action {
                    case "connect": try await core.sensors.connect(address)
                    case "disconnect": try await core.sensors.disconnect(address)
                    default: try await core.sensors.pair(address)
                    }
                } catch {
                    throw adapterError(error)
                }
                let status =
                    await core.sensors.status(address)
                    ?? SensorStatus(address: address, adapter: core.sensors.adapter.name)
                return try json(status.fields, status: .accepted)
            }
        }
        v1.delete("sensors/:address") { _, context in
            try context.require(.control)
            let address = try address(context)
            guard let known = await core.sensors.status(address) else {
                throw APIError(.notFound, "unknown_sensor", "no fitness sensor \(address) is configured or in range")
            }
            if let session = known.session {
                throw APIError(
                    .conflict, "sensor_in_use",
                    "sensor \(address) is recording session \(session.uuidString.lowercased())")
            }
            do {
                try await core.sensors.forget(address)
            } catch {
                throw adapterError(error)
            }
            return Response(status: .noContent)
        }
    }

    // MARK: Sessions

    static func sessionRequest(_ body: [String: Any]) throws -> SessionRequest {
        let known = ["activity", "location", "sensors", "athlete", "zones", "guest", "plan"]
        if let unknown = body.keys.sorted().first(where: { !known.contains($0) }) {
            throw APIError.badRequest("unknown field '\(unknown)'; known: \(known.joined(separator: ", "))")
        }
        guard let sensors = body["sensors"] as? [String], !sensors.isEmpty else {
            throw APIError.badRequest("'sensors' must be a non-empty array of sensor addresses")
        }
        // A session is one person's: a few sensors at most.
        guard sensors.count <= 16 else { throw APIError.badRequest("'sensors' holds at most 16 addresses") }
        for sensor in sensors where !isAddress(sensor) {
            throw APIError.badRequest("'\(sensor)' is not a Bluetooth address such as C0:FF:EE:00:00:01")
        }
        var request = SessionRequest(sensors: sensors)
        if let value = body["activity"] {
            guard let text = value as? String, let activity = WorkoutActivityType(rawValue: text) else {
                throw APIError.badRequest(
                    "'activity' must be one of \(WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            request.activity = activity
        }
        if let value = body["location"] {
            guard let text = value as? String, let location = WorkoutLocation(rawValue: text), location != .unknown
            else {
                throw APIError.badRequest("'location' must be indoor or outdoor")
            }
            request.location = location
        }
        if let value = body["athlete"] {
            guard let text = value as? String, (1...64).contains(text.count) else {
                throw APIError.badRequest("'athlete' must be an athlete id of 1 to 64 characters")
            }
            request.athlete = text
        }
        if let value = body["zones"] {
            guard let numbers = value as? [NSNumber], numbers.count <= 10, numbers.allSatisfy({ !isBoolean($0) }) else {
                throw APIError.badRequest("'zones' must be an array of at most 10 heart rates in bpm")
            }
            // Boundaries are a set: their order in the request does not matter.
            request.zones = numbers.map(\.doubleValue).sorted()
        }
        if let value = body["plan"] {
            guard let object = value as? [String: Any], let data = try? JSONSerialization.data(withJSONObject: object)
            else {
                throw APIError.badRequest("'plan' must be a plan object (the plan file format, version 1)")
            }
            request.plan = data
        }
        if let value = body["guest"] {
            guard let number = value as? NSNumber, isBoolean(number) else {
                throw APIError.badRequest("'guest' must be true or false")
            }
            request.guest = number.boolValue
        }
        return request
    }

    static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c" || type(of: number) == type(of: NSNumber(value: true))
    }

    static func addSessionRoutes(_ v1: RouterGroup<BridgeRequestContext>, core: BridgeCore) {
        v1.get("sessions") { _, _ in
            var list: [[String: Any]] = []
            for session in await core.sessions.active { list.append(await session.snapshot()) }
            return try json(["sessions": list])
        }
        v1.post("sessions") { request, context in
            try context.require(.control)
            let parsed = try sessionRequest(try await body(request))
            return try await sessionError { () async throws(SessionError) -> Response in
                let session = try await core.sessions.create(parsed)
                do { return try json(await session.snapshot(), status: .created) } catch { throw .invalid("\(error)") }
            }
        }
        v1.get("sessions/:id") { _, context in
            let id = try context.parameters.require("id")
            return try await sessionError { () async throws(SessionError) -> Response in
                let session = try await core.sessions.session(id)
                do { return try json(await session.snapshot()) } catch { throw .invalid("\(error)") }
            }
        }
        v1.post("sessions/:id/next") { _, context in
            try context.require(.control)
            let id = try context.parameters.require("id")
            return try await sessionError { () async throws(SessionError) -> Response in
                let session = try await core.sessions.session(id)
                try await session.nextStep()
                do { return try json(await session.snapshot()) } catch { throw .invalid("\(error)") }
            }
        }
        for action in ["pause", "resume", "lap", "stop", "activity"] {
            v1.post("sessions/:id/\(action)") { request, context in
                try context.require(.control)
                let id = try context.parameters.require("id")
                let input = try await body(request)
                let session: BridgeSession
                do throws(SessionError) {
                    session = try await core.sessions.session(id)
                } catch {
                    throw APIError(error)
                }
                do {
                    switch action {
                    case "pause": try await session.pause()
                    case "resume": try await session.resume()
                    case "lap": try await session.lap()
                    case "activity":
                        if let unknown = input.keys.sorted().first(where: { $0 != "activity" && $0 != "location" }) {
                            throw APIError.badRequest("unknown field '\(unknown)'; known: activity, location")
                        }
                        guard let text = input["activity"] as? String,
                            let activity = WorkoutActivityType(rawValue: text)
                        else {
                            throw APIError.badRequest("'activity' must name an activity type")
                        }
                        var location: WorkoutLocation?
                        if let value = input["location"] {
                            guard let text = value as? String, let parsed = WorkoutLocation(rawValue: text),
                                parsed != .unknown
                            else {
                                throw APIError.badRequest("'location' must be indoor or outdoor")
                            }
                            location = parsed
                        }
                        try await session.newActivity(activity, location: location)
                    default: try await core.sessions.stop(id)
                    }
                } catch let error as APIError {
                    throw error
                } catch let error as WorkoutSessionError {
                    throw APIError(.conflict, "invalid_state", "\(error)")
                } catch let error as StoreError {
                    throw APIError(error, retry: "the session has ended; stop it again to save it")
                } catch {
                    throw APIError(.conflict, "session_failed", "\(error)")
                }
                return try json(await session.snapshot())
            }
        }
    }

    // MARK: Workouts

    static func workoutID(_ context: BridgeRequestContext) throws -> UUID {
        let text = try context.parameters.require("id")
        guard let id = UUID(uuidString: text) else { throw APIError.badRequest("'\(text)' is not a workout id") }
        return id
    }

    static func store(_ core: BridgeCore) throws -> WorkoutStore {
        guard let store = core.store else { throw APIError(.notFound, "no_store", "this bridge keeps no store") }
        return store
    }

    static func addWorkoutRoutes(_ v1: RouterGroup<BridgeRequestContext>, core: BridgeCore) {
        v1.get("workouts") { request, _ in
            let store = try store(core)
            let parameters = request.uri.queryParameters
            var limit = 50
            if let text = parameters.get("limit") {
                guard let value = Int(text), (1...1000).contains(value) else {
                    throw APIError.badRequest("'limit' must be 1–1000")
                }
                limit = value
            }
            let athlete = parameters.get("athlete")
            let workouts = try store.workouts().filter { athlete == nil || $0.athlete == athlete }
            return try json(["workouts": workouts.suffix(limit).reversed().map(listing)])
        }
        v1.get("workouts/:id") { _, context in
            let id = try workoutID(context)
            let store = try store(core)
            guard let stored = try? store.workout(id) else {
                throw APIError(.notFound, "unknown_workout", "no workout \(id.uuidString.lowercased())")
            }
            var object = listing(stored)
            object["summary"] = stored.summary.map(WorkoutJSON.summary) ?? NSNull()
            return try json(object)
        }
        v1.get("workouts/:id/export") { request, context in
            let id = try workoutID(context)
            let store = try store(core)
            let text = request.uri.queryParameters.get("format") ?? "fit"
            guard let format = ExportFormat(rawValue: text) else {
                throw APIError.badRequest("'format' must be fit, tcx or csv")
            }
            guard let stored = try? store.workout(id) else {
                throw APIError(.notFound, "unknown_workout", "no workout \(id.uuidString.lowercased())")
            }
            guard stored.summary != nil else {
                throw APIError(.conflict, "workout_active", "the workout is still being recorded")
            }
            let bytes: [UInt8]
            do {
                bytes = try WorkoutFile.bytes(workout: id, format: format, store: store)
            } catch {
                throw APIError(.conflict, "export_failed", "\(error)")
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: WorkoutFile.contentType(format),
                    .contentDisposition:
                        "attachment; filename=\"workout-\(id.uuidString.lowercased()).\(format.rawValue)\"",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        v1.delete("workouts/:id") { _, context in
            try context.require(.control)
            let id = try workoutID(context)
            let store = try store(core)
            guard let stored = try? store.workout(id) else {
                throw APIError(.notFound, "unknown_workout", "no workout \(id.uuidString.lowercased())")
            }
            guard !stored.isActive else {
                throw APIError(.conflict, "workout_active", "stop the session before deleting its workout")
            }
            do {
                try store.deleteWorkout(id)
            } catch {
                throw APIError(.conflict, "delete_failed", "\(error)")
            }
            return Response(status: .noContent)
        }
    }

    static func listing(_ stored: StoredWorkout) -> [String: Any] {
        [
            "id": stored.id.uuidString.lowercased(), "athlete": stored.athlete,
            "activity": stored.configuration.activityType.rawValue, "start": ISO8601.format(stored.start),
            "end": stored.end.map { ISO8601.format($0) as Any } ?? NSNull(),
            "elapsedTime": stored.elapsedTime.map { $0 as Any } ?? NSNull(), "active": stored.isActive,
        ]
    }

    static func addWorkoutSamples(_ v1: RouterGroup<BridgeRequestContext>, core: BridgeCore) {
        v1.get("workouts/:id/samples") { request, context in
            let id = try workoutID(context)
            let store = try store(core)
            let name = request.uri.queryParameters.get("type") ?? QuantityType.heartRate.rawValue
            guard let type = QuantityType(rawValue: name) else {
                throw APIError.badRequest(
                    "'type' must be one of \(QuantityType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard (try? store.workout(id)) != nil else {
                throw APIError(.notFound, "unknown_workout", "no workout \(id.uuidString.lowercased())")
            }
            let samples: [QuantitySample]
            do {
                samples = try store.samples(type: type, workout: id)
            } catch {
                throw APIError(.conflict, "store_failed", "\(error)")
            }
            return try json(["samples": samples.map(SampleJSON.object)])
        }
    }

    // MARK: Pages

    /// The dashboard (`/`), the overlay (`/overlay`), the class board (`/board`) and their assets.
    static func addPages(_ router: Router<BridgeRequestContext>) {
        let pages = ["/": "index.html", "/overlay": "overlay.html", "/board": "board.html"]
        for (path, file) in pages {
            router.get(RouterPath(path)) { _, _ in try page(file) }
        }
        for file in EmbeddedFiles.web.keys where !file.hasSuffix(".html") {
            router.get(RouterPath("/" + file)) { _, _ in try page(file) }
        }
    }

    static func page(_ file: String) throws -> Response {
        guard let asset = EmbeddedFiles.web[file] else { throw APIError.notFound("no page \(file)") }
        return Response(
            status: .ok, headers: [.contentType: asset.type, .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: asset.text)))
    }

    // MARK: Athletes

    static func athlete(_ athlete: BridgeConfiguration.Athlete) -> [String: Any] {
        let profile = athlete.profile
        func value(_ number: Double?) -> Any { number.map { $0 as Any } ?? NSNull() }
        let zones = athlete.zones ?? profile.preferredZoneConfiguration(for: .heartRate)
        return [
            "id": profile.id, "name": profile.name ?? NSNull(), "age": profile.age ?? NSNull(),
            "sex": profile.sex?.rawValue ?? NSNull(), "weight": value(profile.weightKilograms),
            "restingHeartRate": value(profile.restingHeartRate),
            "maximumHeartRate": value(profile.effectiveMaximumHeartRate),
            "zones": zones?.zones.map { zone in
                [
                    "index": zone.index, "lower": zone.lower.map { $0 as Any } ?? NSNull(),
                    "upper": zone.upper.map { $0 as Any } ?? NSNull(),
                ]
            } ?? [],
        ]
    }

    static func addAthleteRoutes(_ v1: RouterGroup<BridgeRequestContext>, core: BridgeCore) {
        v1.get("athletes") { _, _ in try json(["athletes": core.configuration.athletes.map(athlete)]) }
        v1.get("athletes/:id") { _, context in
            let id = try context.parameters.require("id")
            guard let found = core.configuration.athlete(id) else {
                throw APIError(.notFound, "unknown_athlete", "no athlete '\(id)'")
            }
            return try json(athlete(found))
        }
    }

    // MARK: Streams

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

    static func addStreams(_ v1: RouterGroup<BridgeRequestContext>, core: BridgeCore) {
        v1.get("events") { request, _ in
            let (session, sensor) = try filter(request.uri)
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
            _ = try filter(request.uri)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let (session, sensor) = (try? filter(context.request.uri)) ?? (nil, nil)
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
}
