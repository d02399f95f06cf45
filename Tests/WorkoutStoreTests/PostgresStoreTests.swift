import BusHarness
import Foundation
import Logging
import PostgresStore
import Samples
import Sensors
import Testing
import WorkoutStore

@Suite("PostgreSQL store: URL, migrations, a server that restarts")
struct PostgresStoreTests {
    @Test("store URLs: every part checked, the password never shown")
    func urls() throws {
        let tcp = try PostgresStoreLocation(url: "postgresql://hub:secret@db.example:6543/gym?sslmode=require&pool=8")
        #expect(tcp.host == "db.example" && tcp.port == 6543 && tcp.database == "gym" && tcp.username == "hub")
        #expect(tcp.password == "secret" && tcp.tls == .require && tcp.poolSize == 8)
        #expect(!tcp.redacted.contains("secret"))
        let socket = try PostgresStoreLocation(url: "postgresql://hub@/gym?host=/run/postgresql&port=5433")
        #expect(socket.socketPath == "/run/postgresql/.s.PGSQL.5433" && socket.host == nil)
        for (url, reason) in [
            ("postgresql://db/gym", "no user"),
            ("postgresql://hub@db", "no database"),
            ("postgresql://hub@db/gym?sslmode=maybe", "sslmode"),
            ("postgresql://hub@db/gym?pool=500", "pool"),
            ("postgresql://hub@db/gym?host=relative", "socket directory"),
            ("postgresql://hub@db/gym?options=-c", "unknown parameter"),
            ("mysql://hub@db/gym", "expected postgresql://"),
        ] {
            #expect(throws: PostgresStoreLocation.Invalid.self, "\(url)") { try PostgresStoreLocation(url: url) }
            do {
                _ = try PostgresStoreLocation(url: url)
            } catch {
                #expect(error.reason.contains(reason), "\(url): \(error.reason)")
            }
        }
    }

    @Test(
        "two stores opening one database migrate it once; a restarted server is reconnected, its downtime a passing error"
    )
    func restart() async throws {
        let server = try await PostgresServer()
        do {
            try await restartChecks(server)
        } catch {
            await server.remove()
            throw error
        }
        await server.remove()
    }

    private func restartChecks(_ server: PostgresServer) async throws {
        let location = try PostgresStoreLocation(url: server.url())
        let logger = Logger(label: "test.store")
        async let first = Task.detached { try PostgresStore(location, logger: logger) }.value
        async let second = Task.detached { try PostgresStore(location, logger: logger) }.value
        let (one, two) = try await (first, second)
        #expect(try one.appliedMigrations() == ["v1"])
        #expect(try await server.query("SELECT count(*) FROM hrbridge_migration") == ["1"])
        two.close()
        let store = WorkoutStore(backend: one)
        let source = SampleSource(adapter: "mqtt", address: "C0:FF:EE:00:00:07", name: "Ana")
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
        func beats(_ range: Range<Int>) -> [QuantitySample] {
            range.map {
                try! QuantitySample(
                    type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 120),
                    start: start.addingTimeInterval(Double($0)),
                    end: start.addingTimeInterval(Double($0)), source: source)
            }
        }
        #expect(try store.append(beats(0..<10), workout: nil) == 10)
        await server.stop()
        do {
            try store.append(beats(10..<20), workout: nil)
            Issue.record("a write with the server stopped succeeded")
        } catch {
            guard case .unreachable = error else { throw error }
            #expect(error.isTransient)
        }
        try await server.start()
        // While it was down one caller retries every 2 s and the others fail at once; the same
        // batch again once the server answers: stored once.
        var stored = 0
        try await eventually("the store answers again") {
            guard let count = try? store.append(beats(10..<20), workout: nil) else { return false }
            stored += count
            return true
        }
        #expect(stored == 10)
        #expect(try store.append(beats(0..<20), workout: nil) == 0)
        #expect(try store.samples(type: .heartRate).count == 20)
        one.close()
    }
}
