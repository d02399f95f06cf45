import Foundation
import Samples
import WorkoutStore

/// A workout's samples of one type, oldest first, a page at a time. A page starts a little
/// before the last start of the one before (a date read back need not compare equal in the
/// database's own representation), and the samples already given from there on are remembered:
/// none is repeated and, however many share a start, none is missed.
struct SamplePages: Sendable {
    /// How far before the last page's last start the next one begins.
    static let overlap: TimeInterval = 0.001

    let type: QuantityType
    let workout: UUID
    let store: WorkoutStore
    let size: Int
    private var from = Date.distantPast
    private var given: Set<QuantitySample> = []
    private var ended = false

    init(type: QuantityType, workout: UUID, store: WorkoutStore, size: Int) {
        self.type = type
        self.workout = workout
        self.store = store
        self.size = size
    }

    /// The next page (nil once every sample was given; the first page may be empty).
    mutating func next() async throws(StoreError) -> [QuantitySample]? {
        guard !ended else { return nil }
        // The samples given already from `from` on come again: ask for that many more.
        let limit = size + given.count
        let page = try await store.samples(type: type, from: from, workout: workout, limit: limit, ascending: true)
        let fresh = page.filter { !given.contains($0) }
        if page.count < limit {
            ended = true
        } else if let last = page.last?.start {
            from = last.addingTimeInterval(-Self.overlap)
            // Kept a little wider than the query reaches: what it returns is never given twice.
            let kept = from.addingTimeInterval(-Self.overlap)
            given = given.union(page).filter { $0.start >= kept }
        }
        return fresh
    }
}
