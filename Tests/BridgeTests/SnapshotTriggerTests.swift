import Foundation
import Synchronization
import Testing

@testable import Bridge

@Suite("Snapshot trigger: the reader check")
struct SnapshotTriggerTests {
    /// Where on the stack the check ran: a local's address (the stack grows down).
    static func stackAddress() -> UInt {
        var marker = 0
        return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
    }

    @Test("the 10,000th look at the reader check runs as deep as the first: nothing wraps it per read")
    func readerCheckDoesNotGrow() {
        let trigger = SnapshotTrigger()
        #expect(trigger.hasReader, "no check yet: every publication has a reader")
        let addresses = Mutex<[UInt]>([])
        let readers = Mutex(true)
        trigger.whenWanted {
            addresses.withLock { $0.append(Self.stackAddress()) }
            return readers.withLock { $0 }
        }
        var answers = 0
        for _ in 0..<10_000 where trigger.hasReader { answers += 1 }
        readers.withLock { $0 = false }
        #expect(!trigger.hasReader, "the check decides")
        let seen = addresses.withLock { $0 }
        #expect(answers == 10_000 && seen.count == 10_001)
        // A closure kept in a Mutex as it is gets re-wrapped in two reabstraction thunks by every
        // read: after 10,000 reads the check ran 20,000 frames deeper, and had kept as many allocations.
        // The loop's first and last reads, from the same call site.
        let sunk = seen.count > 9_999 ? seen[0] &- seen[9_999] : 0
        #expect(sunk == 0, "the check ran \(sunk) bytes deeper on the stack after 10,000 reads")
    }

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
