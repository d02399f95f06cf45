import Foundation
import Testing

@Suite("Shared state: no closure kept in a lock as it is")
struct LockedClosureRuleTests {
    /// `Sources/`, found from this file.
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    @Test("no lock in Sources keeps a closure as it is (each read would wrap it again); a struct holds it")
    func noBareClosureInALock() throws {
        // `Mutex<` (or NIO's box) then a function type, with no brackets between: `[() -> Void]`
        // and structs are stored as they are; a function type, optional or in a tuple, is not.
        let pattern = try Regex(#"(Mutex|NIOLockedValueBox|OSAllocatedUnfairLock)<[^\[\]<>]*->"#)
        let files = try #require(FileManager.default.enumerator(atPath: Self.sources.path))
        var checked = 0
        var found: [String] = []
        for case let path as String in files where path.hasSuffix(".swift") {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(path), encoding: .utf8)
            checked += 1
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(pattern) {
                found.append("\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(checked > 100, "the sources were found")
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
        #expect(
            "    private let wanted = Mutex<(@Sendable () -> Bool)?>(nil)".contains(pattern), "the pattern sees one")
        #expect(!"    let handlers = Mutex<[@Sendable () -> Void]>([])".contains(pattern))
    }
}
