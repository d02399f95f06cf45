import Foundation
import Testing
import Wire

@Suite("hrbridge workouts changes")
struct WorkoutsChangesCommandTests {
    @Test(
        "pages of 50 with the anchor passed back are the whole store's heart rate, each sample once; bad options exit 64"
    )
    func pagesWithAnchors() async throws {
        let directory = try scratchDirectory("changes")
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try await runHRBridge(
            ["workout", "run", "--speed", "max", "--duration", "60s", "--json", "--store", "store.sqlite"],
            in: directory)
        #expect(run.status == 0, "\(run.stderr)")

        func changes(_ arguments: [String]) async throws -> SampleChangesJSON {
            let result = try await runHRBridge(
                ["workouts", "changes", "--store", "store.sqlite"] + arguments, in: directory)
            #expect(result.status == 0, "\(result.stderr)")
            return try JSONDecoder().decode(SampleChangesJSON.self, from: Data(result.stdout.utf8))
        }
        let whole = try await changes(["--limit", "10000"])
        #expect(whole.added.count > 50, "a minute of heart rate: \(whole.added.count) samples")
        #expect(whole.deleted.isEmpty && whole.type == "heartRate")
        var anchor: Int64?
        var paged: [SampleChangesJSON.Added] = []
        for _ in 0...(whole.added.count / 50 + 1) {
            let page = try await changes(["--limit", "50"] + (anchor.map { ["--anchor", "\($0)"] } ?? []))
            anchor = page.anchor
            if page.added.isEmpty { break }
            paged += page.added
        }
        #expect(paged == whole.added, "the pages together are the whole, in order, each sample once")
        #expect(anchor == whole.anchor)
        #expect(try await changes(["--type", "heartbeatSeries", "--limit", "5"]).added.count == 5)

        for arguments in [
            ["--limit", "0"], ["--limit", "10001"], ["--anchor=-1"], ["--anchor", "x"], ["--type", "steps"],
        ] {
            let refused = try await runHRBridge(
                ["workouts", "changes", "--store", "store.sqlite"] + arguments, in: directory)
            #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
        }
    }
}
