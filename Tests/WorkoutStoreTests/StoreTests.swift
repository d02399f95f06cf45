import Foundation
import GRDB
import Samples
import Sensors
import Testing
import Workouts

@testable import WorkoutStore

private let sourceA = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:01", name: "A")
private let sourceB = SampleSource(adapter: "mock", address: "C0:FF:EE:00:00:02", name: "B")
private let origin = Date(timeIntervalSinceReferenceDate: 800_006_400)  // hour-aligned

private func temporaryStorePath() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)/store.sqlite").path
}

private func sample(_ type: QuantityType, _ value: Double, _ seconds: Double, _ source: SampleSource) -> QuantitySample
{
    try! QuantitySample(
        type: type, quantity: Quantity(unit: type.canonicalUnit, value: value),
        start: origin.addingTimeInterval(seconds),
        end: origin.addingTimeInterval(seconds + (type.aggregationStyle == .cumulative ? 10 : 0)), source: source)
}

@Suite("Workout store (SQLite through GRDB)")
struct StoreTests {
    @Test("a new store: WAL, mode 0600, migrated, integrity ok")
    func newStore() throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try WorkoutStore(path: path)
        #expect(try store.sqlite?.integrityCheck() == "ok")
        #expect(try store.appliedMigrations() == ["v1", "v2-hourly-rollups", "v3-plan-schedule", "v4-sample-key"])
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let mode = try DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }

    @Test("migrating from the first schema keeps samples and builds the rollups from them")
    func migrationFromV1() throws {
        let path = temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try SQLiteSchema.migrator.migrate(queue, upTo: "v1")
        try queue.write { db in
            try db.execute(sql: "INSERT INTO source (adapter, address) VALUES ('mock', 'X')")
            for minute in 0..<180 {
                try db.execute(
                    sql: "INSERT INTO sample (type, value, start, end, sourceId) VALUES ('heartRate', ?, ?, ?, 1)",
                    arguments: [
                        Double(100 + minute % 7), origin.timeIntervalSinceReferenceDate + Double(minute * 60),
                        origin.timeIntervalSinceReferenceDate + Double(minute * 60),
                    ])
            }
        }
        try queue.close()
        let store = try WorkoutStore(path: path)
        #expect(try store.appliedMigrations() == ["v1", "v2-hourly-rollups", "v3-plan-schedule", "v4-sample-key"])
        let hours = try store.statisticsCollection(
            type: .heartRate, from: origin, to: origin.addingTimeInterval(3 * 3600), anchor: origin, interval: .hour)
        #expect(hours.map(\.count) == [60, 60, 60])
        #expect(try store.samples(type: .heartRate).count == 180)
    }
}
