import Foundation
import HTTPTypes
import HummingbirdTesting
import Samples
import Sensors
import Testing
import Wire
import WorkoutStore
import Workouts

@testable import Bridge

/// `GET /v1/samples/changes`: the store's anchored query over the API.
@Suite("GET /v1/samples/changes: each added and deleted sample once, page after page", .serialized)
struct SampleChangesAPITests {
    @Test(
        "pages of 10 hand out 25 samples once each, then their 25 deletions; bad parameters are 400s naming them")
    func anchoredPages() async throws {
        let bridge = try await InProcessBridge()
        let store = try #require(bridge.core.store)
        // No session runs: the only stored samples are these.
        let workout = UUID()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: workout, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                start: start, state: .running))
        let strap = SampleSource(adapter: "hci0", address: "C0:FF:EE:00:00:01", name: nil)
        let beats = try (0..<25).map { second in
            try QuantitySample(
                type: .heartRate,
                quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: Double(100 + second)),
                start: start.addingTimeInterval(Double(second)), end: start.addingTimeInterval(Double(second)),
                source: strap)
        }
        #expect(try await store.append(beats, workout: workout) == 25)

        try await bridge.test { client in
            func changes(_ query: String) async throws -> SampleChangesJSON {
                let reply = try await client.send(.get, "/v1/samples/changes\(query)")
                #expect(reply.status == .ok, "\(query)")
                return try #require(reply.decode(SampleChangesJSON.self), "\(query)")
            }
            var anchor: Int64?
            var pages: [[SampleChangesJSON.Added]] = []
            while true {
                let page = try await changes("?limit=10" + (anchor.map { "&anchor=\($0)" } ?? ""))
                #expect(page.type == "heartRate" && page.deleted.isEmpty)
                if let anchor { #expect(page.anchor >= anchor, "an anchor never goes back") }
                anchor = page.anchor
                if page.added.isEmpty { break }
                pages.append(page.added)
                #expect(pages.count <= 3, "25 samples are three pages of 10")
                if pages.count > 3 { break }
            }
            #expect(pages.map(\.count) == [10, 10, 5])
            let added = pages.flatMap { $0 }
            #expect(added.map(\.sample.value) == beats.map(\.quantity.value), "every sample once, oldest first")
            #expect(zip(added, added.dropFirst()).allSatisfy { $0.id < $1.id })
            #expect(added.allSatisfy { $0.sample.source.address == strap.address && $0.sample.unit == "count/min" })
            #expect(try await changes("?type=heartbeatSeries").added.isEmpty, "another type's changes are its own")
            let caughtUp = try #require(anchor)

            try await store.deleteWorkout(workout)
            // The limit bounds deletions too: pages of 10, 10 and 5 name the 25 once each.
            var deletedPages: [[Int64]] = []
            var deletionAnchor = caughtUp
            while deletedPages.count < 4 {
                let page = try await changes("?limit=10&anchor=\(deletionAnchor)")
                #expect(page.added.isEmpty && page.anchor >= deletionAnchor)
                deletionAnchor = page.anchor
                if page.deleted.isEmpty { break }
                deletedPages.append(page.deleted)
            }
            #expect(deletedPages.map(\.count) == [10, 10, 5])
            #expect(deletedPages.flatMap { $0 }.sorted() == added.map(\.id), "each deleted sample named once")
            let whole = try await changes("?anchor=\(caughtUp)")
            #expect(whole.deleted.count == 25 && whole.anchor == deletionAnchor, "one answer when the limit allows")
            let after = try await changes("?anchor=\(deletionAnchor)")
            #expect(after.added.isEmpty && after.deleted.isEmpty && after.anchor == deletionAnchor)
            // The document's bound (int64) is the API's: its largest anchor is an answer, not a 400.
            let largest = try await changes("?anchor=\(Int64.max)")
            #expect(largest.added.isEmpty && largest.deleted.isEmpty)

            for (query, names) in [
                ("?anchor=-1", "'anchor'"), ("?anchor=seven", "'anchor'"), ("?anchor=9223372036854775808", "'anchor'"),
                ("?limit=0", "'limit'"), ("?limit=10001", "'limit'"), ("?type=steps", "'type'"),
            ] {
                let reply = try await client.send(.get, "/v1/samples/changes\(query)")
                #expect(reply.status == .badRequest, "\(query)")
                #expect(reply.errorCode == "invalid_request", "\(query)")
                #expect(reply.decode(ErrorJSON.self)?.error.message.contains(names) == true, "\(query)")
            }
        }
        try await bridge.stop()
    }
}
