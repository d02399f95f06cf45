import BusHarness
import Foundation
import Logging
import PostgresStore
import Testing
import WorkoutStore

/// The backends the conformance suite runs on.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    var testDescription: String { rawValue }

    /// Runs `body` on a new, empty store of this kind and removes it afterwards: a temporary
    /// SQLite file, or a PostgreSQL server started for this test and stopped by PID.
    func withStore(_ body: (WorkoutStore) async throws -> Void) async throws {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            try await body(try WorkoutStore(path: directory.appendingPathComponent("store.sqlite").path))
        case .postgresql:
            let server = try await PostgresServer()
            do {
                let backend = try await PostgresStore.open(
                    try PostgresStoreLocation(url: server.url()), stateDirectory: server.directory.path,
                    logger: Logger(label: "test.store"))
                do {
                    try await body(WorkoutStore(backend: backend))
                } catch {
                    await backend.close()
                    throw error
                }
                await backend.close()
            } catch {
                await server.remove()
                throw error
            }
            await server.remove()
        }
    }
}
