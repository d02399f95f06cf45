import PostgresNIO
import WorkoutStore

/// PostgreSQL's and postgres-nio's errors as the store's.
enum PostgresErrors {
    /// SQLSTATE classes after which the same request can succeed: connection exceptions (08),
    /// insufficient resources (53), operator intervention such as a shutdown (57), and
    /// serialization failures and deadlocks (40001, 40P01).
    static func isTransient(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || sqlState.hasPrefix("53") || sqlState.hasPrefix("57")
            || sqlState == "40001" || sqlState == "40P01"
    }

    /// Whether the error is about the connection rather than the request: the connection is not reused.
    static func isConnectionLevel(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return !(error is StoreError) }
        guard error.code == .server else { return true }
        let state = error.serverInfo?[.sqlState] ?? ""
        return state.hasPrefix("08") || state.hasPrefix("57")
    }

    /// The store's error for `error` at `location`.
    static func storeError(_ error: any Error, location: String) -> StoreError {
        switch error {
        case let error as StoreError: return error
        case let error as PSQLError where error.code == .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "\(error.code)"
            if state == "53100" { return .diskFull(path: location) }
            if isTransient(sqlState: state) { return .unreachable("\(location): \(message) (SQLSTATE \(state))") }
            return .database("\(location): \(message) (SQLSTATE \(state))")
        case let error as PSQLError:
            let underlying = error.underlying.map { ": \($0)" } ?? ""
            return .unreachable("\(location): \(error.code)\(underlying)")
        case let error as PostgresDecodingError:
            return .corrupt("\(location): column \(error.columnName) (\(error.postgresType)): \(error.code)")
        default:
            return .unreachable("\(location): \(error)")
        }
    }
}
