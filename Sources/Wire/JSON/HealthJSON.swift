import Foundation

/// `GET /v1/health`: `ok`, or `degraded` with the problems and what the store holds back.
public struct HealthJSON: Codable, Sendable, Equatable {
    /// `ok` or `degraded`.
    public var status: String
    /// The adapters' availability (ready while one adapter is).
    public var adapter: String
    /// Each adapter with its links in use and counters.
    public var adapters: [AdapterJSON]
    public var sensorsStreaming: Int
    public var sessionsActive: Int
    /// When degraded: `disk full`, `store unreachable` (a database server), `store unwritable`, `samples lost`.
    public var problems: [String]?
    public var store: StoreHealthJSON?
    /// hrbridge as a Bluetooth heart-rate sensor, when `[peripheral]` is enabled.
    public var peripheral: PeripheralJSON?

    public init(
        status: String, adapter: String, adapters: [AdapterJSON], sensorsStreaming: Int, sessionsActive: Int,
        problems: [String]? = nil, store: StoreHealthJSON? = nil, peripheral: PeripheralJSON? = nil
    ) {
        self.status = status
        self.adapter = adapter
        self.adapters = adapters
        self.sensorsStreaming = sensorsStreaming
        self.sessionsActive = sessionsActive
        self.problems = problems
        self.store = store
        self.peripheral = peripheral
    }
}
