import ArgumentParser
import JSONSupport
import Samples
import Wire
import WorkoutStore

/// `hrbridge workouts changes`: the store's anchored query, for a script that keeps its own copy of
/// the samples (the same object as the API's `GET /v1/samples/changes`).
struct WorkoutsChangesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "changes",
        abstract: "Samples of one type added and deleted since an anchor, as one JSON object.",
        discussion: """
            Pass the printed "anchor" back with --anchor next time: each change is printed once. While \
            an answer holds --limit changes (additions and deletions together), ask again at once.
            """)

    @OptionGroup var storeOptions: StoreOptions

    @Option(
        help:
            "The quantity type: \(QuantityType.allCases.map(\.rawValue).joined(separator: ", ")) (or kebab case, as `samples --type`)."
    )
    var type = QuantityType.heartRate.rawValue

    @Option(help: "The anchor of the last answer (default: from the first stored sample).")
    var anchor: Int64?

    @Option(help: "Changes at most, additions and deletions together (1–10000).")
    var limit = 1000

    func validate() throws {
        guard QuantityType(commandLineName: type) != nil else {
            throw ValidationError(
                "'\(type.prefix(64))' is not a quantity type (\(QuantityType.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        if let anchor, anchor < 0 { throw ValidationError("--anchor must be 0 or more: the last answer's anchor") }
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be 1–10000") }
    }

    func run() async throws {
        guard let quantityType = QuantityType(commandLineName: type) else { throw ExitCode(64) }
        let store = try storeOptions.open()
        let changes = try await store.changes(type: quantityType, since: anchor, limit: limit)
        print(try JSONText.line(SampleChangesJSON(type: quantityType, changes)))
    }
}
