import Foundation
import Samples
import Sensors
import Testing

@testable import WorkoutStore

/// `SampleChanges.page`: which of the rows a backend read past the anchor go out, and the anchor.
@Suite("an anchored answer: the first `limit` changes of additions and deletions together, the anchor the last one's")
struct SampleChangesPageTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        /// Rows read (id, whether it decoded) and tombstones read (anchor, deleted id).
        var added: [(Int64, Bool)]
        var tombstones: [(Int64, Int64)]
        var limit: Int
        var start: Int64 = 0
        var horizon: Int64
        var expectedAdded: [Int64]
        var expectedDeleted: [Int64]
        var expectedAnchor: Int64
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "few additions: all, and the anchor is the horizon", added: [(3, true), (4, true)], tombstones: [],
            limit: 10, horizon: 9, expectedAdded: [3, 4], expectedDeleted: [], expectedAnchor: 9),
        Case(
            name: "a full page of additions ends at its last", added: [(1, true), (2, true), (5, true)],
            tombstones: [], limit: 3, horizon: 20, expectedAdded: [1, 2, 5], expectedDeleted: [], expectedAnchor: 5),
        Case(
            name: "a full page of tombstones ends at its last", added: [],
            tombstones: [(11, 1), (12, 2), (13, 3)], limit: 3, horizon: 40, expectedAdded: [],
            expectedDeleted: [1, 2, 3],
            expectedAnchor: 13),
        Case(
            name: "neither list full, together too many: the first `limit` by key",
            added: [(1, true), (2, true), (5, true)], tombstones: [(3, 7), (4, 8), (6, 9)], limit: 4, horizon: 6,
            expectedAdded: [1, 2], expectedDeleted: [7, 8], expectedAnchor: 4),
        Case(
            name: "full additions before the tombstones: no deletion yet",
            added: [(1, true), (2, true), (3, true)], tombstones: [(10, 7), (11, 8)], limit: 3, horizon: 11,
            expectedAdded: [1, 2, 3], expectedDeleted: [], expectedAnchor: 3),
        Case(
            name: "full tombstones before later additions: the additions wait",
            added: [(9, true)], tombstones: [(4, 1), (5, 2)], limit: 2, horizon: 9, expectedAdded: [],
            expectedDeleted: [1, 2], expectedAnchor: 5),
        Case(
            name: "a row that did not decode still counts for the anchor", added: [(1, false), (2, true)],
            tombstones: [], limit: 2, horizon: 8, expectedAdded: [2], expectedDeleted: [], expectedAnchor: 2),
        Case(
            name: "nothing past an anchor beyond the horizon: the anchor stays", added: [], tombstones: [], limit: 5,
            start: 30, horizon: 12, expectedAdded: [], expectedDeleted: [], expectedAnchor: 30),
    ]

    @Test("cases", arguments: cases)
    func page(_ item: Case) throws {
        let sample = try QuantitySample(
            type: .heartRate, quantity: Quantity(unit: QuantityType.heartRate.canonicalUnit, value: 100),
            start: Date(timeIntervalSince1970: 0), end: Date(timeIntervalSince1970: 0),
            source: SampleSource(adapter: "hci0", address: "C0:FF:EE:00:00:01", name: nil))
        let answer = SampleChanges.page(
            added: item.added.map { (id: $0.0, sample: $0.1 ? sample : nil) },
            tombstones: item.tombstones.map { (anchor: $0.0, sampleID: $0.1) }, limit: item.limit, start: item.start,
            horizon: item.horizon)
        #expect(answer.added.map(\.id) == item.expectedAdded)
        #expect(answer.deleted == item.expectedDeleted)
        #expect(answer.anchor == item.expectedAnchor)
        #expect(answer.added.count + answer.deleted.count <= item.limit)
    }
}
