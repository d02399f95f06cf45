import Foundation
import Hummingbird
import JSONSupport
import Logging
import NIOCore
import Samples
import Sensors
import Wire
import WorkoutExport
import WorkoutStore
import Workouts

/// `/v1/workouts`: the stored workouts, their samples and exports (FIT, TCX, CSV), and deletion.
struct WorkoutController {
    let core: BridgeCore

    func addRoutes(to v1: RouterGroup<BridgeRequestContext>) {
        let core = core
        v1.get("workouts") { request, _ in
            let store = try Self.store(core)
            let parameters = request.uri.queryParameters
            var limit = 50
            if let text = parameters.get("limit") {
                guard let value = Int(text), (1...1000).contains(value) else {
                    throw APIError.badRequest("'limit' must be 1–1000")
                }
                limit = value
            }
            var activity: WorkoutActivityType?
            if let text = parameters.get("activity") {
                guard let value = WorkoutActivityType(rawValue: text) else {
                    throw APIError.badRequest("'activity' is not an activity type: \(text.prefix(64).debugDescription)")
                }
                activity = value
            }
            let from = try Self.date(parameters.get("from"), named: "from") ?? .distantPast
            let to = try Self.date(parameters.get("to"), named: "to") ?? .distantFuture
            let athlete = parameters.get("athlete")
            if let athlete, !(1...64).contains(athlete.count) {
                throw APIError.badRequest("'athlete' must be an athlete id of 1 to 64 characters")
            }
            // Filters and the limit are the database's: nothing is loaded to be dropped.
            let workouts = try await store.workouts(
                from: from, to: to, activityType: activity, athlete: athlete, limit: limit)
            return try APIRouter.json(["workouts": workouts.map(WorkoutListingJSON.init)])
        }
        v1.get("workouts/:id") { _, context in
            let stored = try await Self.stored(context, core)
            return try APIRouter.json(WorkoutDetailJSON(stored))
        }
        v1.get("workouts/:id/export") { request, context in
            let text = request.uri.queryParameters.get("format") ?? "fit"
            guard let format = ExportFormat(rawValue: text) else {
                throw APIError.badRequest("'format' must be fit, tcx or csv")
            }
            let stored = try await Self.stored(context, core)
            guard stored.summary != nil else {
                throw APIError(.conflict, "workout_active", "the workout is still being recorded")
            }
            let store = try Self.store(core)
            let bytes: [UInt8]
            do {
                bytes = try await core.exports.run {
                    try await WorkoutFile.bytes(workout: stored.id, format: format, store: store)
                }
            } catch let busy as ExportGate.Busy {
                core.logger.notice(
                    "export refused: every slot is taken",
                    metadata: ["running": "\(busy.running)", "waiting": "\(busy.waiting)"])
                var error = APIError(
                    .serviceUnavailable, "exports_busy",
                    "\(busy.running) exports are being built and \(busy.waiting) wait their turn; try again in a few seconds"
                )
                error.headers[.retryAfter] = "5"
                throw error
            } catch let error as StoreError {
                // A store fault is not the workout's: StoreErrorMiddleware logs it and answers 503/507/500.
                throw error
            } catch let error as CancellationError {
                throw error
            } catch {
                throw APIError(.conflict, "export_failed", "\(error)")
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: WorkoutFile.contentType(format),
                    .contentDisposition:
                        "attachment; filename=\"workout-\(stored.id.uuidString.lowercased()).\(format.rawValue)\"",
                ],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        v1.get("workouts/:id/waveforms/:kind") { _, context in
            let name = try context.parameters.require("kind")
            guard let kind = WaveformKind(rawValue: name) else {
                throw APIError.badRequest("a raw signal is ecg or acc, not \(name.prefix(64).debugDescription)")
            }
            let stored = try await Self.stored(context, core)
            guard stored.summary != nil else {
                throw APIError(.conflict, "workout_active", "the workout is still being recorded")
            }
            return try await Self.waveformCSV(stored.id, kind, store: try Self.store(core))
        }
        v1.delete("workouts/:id") { _, context in
            try context.require(.control)
            let stored = try await Self.stored(context, core)
            guard !stored.isActive else {
                throw APIError(.conflict, "workout_active", "stop the session before deleting its workout")
            }
            // A store fault goes to StoreErrorMiddleware, which logs it and answers 503/507/500.
            try await Self.store(core).deleteWorkout(stored.id)
            return Response(status: .noContent)
        }
        v1.get("workouts/:id/samples") { request, context in
            let type = try Self.quantityType(request.uri.queryParameters.get("type"))
            let stored = try await Self.stored(context, core)
            return try await Self.samplesJSON(type: type, workout: stored.id, store: try Self.store(core))
        }
    }

    /// Samples read and written per page of `GET /v1/workouts/{id}/samples`.
    static let samplesPage = 4096

    /// A workout's samples of `type` as `{"samples":[…]}`, streamed a page at a time: hours of
    /// heart rate and RR intervals are megabytes, never held whole however many clients ask.
    /// The first page is read before the answer starts, so a store fault is still its status.
    static func samplesJSON(type: QuantityType, workout: UUID, store: WorkoutStore) async throws -> Response {
        var pages = SamplePages(type: type, workout: workout, store: store, size: samplesPage)
        let first = try await pages.next()
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody { [pages] writer in
                var pages = pages
                var page = first
                var separator = ""
                try await writer.write(ByteBuffer(string: #"{"samples":["#))
                while let samples = page {
                    var text = ""
                    for sample in samples {
                        text += separator
                        text += try JSONText.line(SampleJSON(sample))
                        separator = ","
                    }
                    try await writer.write(ByteBuffer(string: text))
                    page = try await pages.next()
                }
                try await writer.write(ByteBuffer(string: "]}"))
                try await writer.finish(nil)
            })
    }

    /// A raw signal's CSV, streamed a page of frames at a time (hours of ECG are tens of MB).
    static func waveformCSV(_ id: UUID, _ kind: WaveformKind, store: WorkoutStore) async throws -> Response {
        let held = try await store.waveformSummaries(of: id).contains { $0.kind == kind }
        guard held else {
            throw APIError(.conflict, "no_raw_signals", "the workout holds no \(kind.rawValue) raw signal")
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/csv",
                .contentDisposition:
                    "attachment; filename=\"workout-\(id.uuidString.lowercased())-\(kind.rawValue).csv\"",
            ],
            body: ResponseBody { writer in
                try await WorkoutWaveformFile.csv(workout: id, kind: kind, store: store) { text in
                    try await writer.write(ByteBuffer(string: text))
                }
                try await writer.finish(nil)
            })
    }

    static func store(_ core: BridgeCore) throws -> WorkoutStore {
        guard let store = core.store else { throw APIError(.notFound, "no_store", "this bridge keeps no store") }
        return store
    }

    /// The workout the path names: 400 for a malformed id, 404 for an unknown one.
    static func stored(_ context: BridgeRequestContext, _ core: BridgeCore) async throws -> StoredWorkout {
        let text = try context.parameters.require("id")
        guard let id = UUID(uuidString: text) else {
            throw APIError.badRequest("\(APIError.shown(text)) is not a workout id")
        }
        let store = try store(core)
        do {
            return try await store.workout(id)
        } catch .unknownWorkout {
            throw APIError(.notFound, "unknown_workout", "no workout \(id.uuidString.lowercased())")
        }
    }

    /// A `type` query parameter (absent: heart rate; 400 naming the types when unknown).
    static func quantityType(_ text: String?) throws -> QuantityType {
        guard let text else { return .heartRate }
        guard let type = QuantityType(rawValue: text) else {
            throw APIError.badRequest(
                "'type' must be one of \(QuantityType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return type
    }

    /// An ISO 8601 query parameter (nil when absent; 400 when malformed).
    static func date(_ text: String?, named name: String) throws -> Date? {
        guard let text else { return nil }
        guard let date = ISO8601.parse(text) else {
            throw APIError.badRequest("'\(name)' must be an ISO 8601 date, not \(text.prefix(64).debugDescription)")
        }
        return date
    }
}
