import Foundation
import Logging
import PostgresNIO
import WorkoutStore

/// One borrowed connection inside a transaction: run a statement, read its rows.
struct PostgresSession: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    /// Runs a statement; returns the rows it changed.
    @discardableResult
    func execute(_ query: PostgresQuery) async throws -> Int {
        let result = try await connection.query(query, logger: logger).get()
        return result.metadata.rows ?? 0
    }

    /// Runs a query and returns its rows.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRandomAccessRow] {
        try await connection.query(query, logger: logger).get().rows.map { $0.makeRandomAccess() }
    }
}

extension PostgresRandomAccessRow {
    func text(_ column: Int) throws -> String { try self[column].decode(String.self) }
    func optionalText(_ column: Int) throws -> String? { try self[column].decode(String?.self) }
    func double(_ column: Int) throws -> Double { try self[column].decode(Double.self) }
    func optionalDouble(_ column: Int) throws -> Double? { try self[column].decode(Double?.self) }
    func int(_ column: Int) throws -> Int64 { try self[column].decode(Int64.self) }
    /// A `timestamptz` column.
    func date(_ column: Int) throws -> Date { try self[column].decode(Date.self) }
    func optionalDate(_ column: Int) throws -> Date? { try self[column].decode(Date?.self) }
    func optionalInt(_ column: Int) throws -> Int64? { try self[column].decode(Int64?.self) }
}
