import Testing

@testable import RemoteSensors

@Suite("How loud a refusal is logged: once per gateway and reason, bounded against made-up gateways")
struct RefusalLogTests {
    @Test("the first of a key at notice, again counted only; past the capacity one notice says so, then debug")
    func levels() {
        var log = RefusalLog(capacity: 2)
        let keys = ["room-1/replayed", "room-1/replayed", "room-2/replayed", "x/bad_topic", "y/bad_topic"]
        let levels = keys.map { log.level(for: $0) }
        #expect(levels == [.notice, .counted, .notice, .noticeFull, .debug])
        #expect(log.level(for: "x/bad_topic") == .debug, "not remembered past the capacity")
        #expect(log.level(for: "room-1/replayed") == .counted, "the keys remembered stay remembered")
        #expect(log.level(for: "room-2/replayed") == .counted)
        #expect(log.level(for: "z/bad_signature") == .debug, "the full notice comes once")
    }

    @Test("the default remembers 1,024 keys: the 1,025th gets the one full notice")
    func defaultCapacity() {
        var log = RefusalLog()
        let levels = (0...1025).map { log.level(for: "node-\($0)/bad_signature") }
        #expect(levels.prefix(1024).allSatisfy { $0 == .notice })
        #expect(Array(levels.suffix(2)) == [.noticeFull, .debug])
    }
}
