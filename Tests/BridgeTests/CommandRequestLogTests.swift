import JSONSupport
import Testing

@testable import Bridge

@Suite("MQTT commands: the request ids remembered")
struct CommandRequestLogTests {
    @Test(
        "the last `limit` ids answer with their reply; an older one is forgotten; a repeated id keeps its place",
        arguments: [
            // (ids remembered in order, limit, id asked, reply expected)
            (["a", "b", "c"], 3, "a", "reply a"),
            (["a", "b", "c", "d"], 3, "a", nil),
            (["a", "b", "c", "d"], 3, "d", "reply d"),
            (["a", "b", "a", "c"], 3, "a", "reply a"),
            (["a", "b", "a", "c", "d"], 3, "a", nil),
            ([], 3, "a", nil),
        ] as [([String], Int, String, String?)])
    func remembered(ids: [String], limit: Int, asked: String, expected: String?) {
        var log = CommandRequestLog(limit: limit)
        for id in ids { log.remember("reply \(id)", for: id, command: "session/start") }
        #expect(log.reply(to: asked, command: "session/start") == expected)
        #expect(log.count == min(Set(ids).count, limit))
    }

    @Test("a reply remembered again replaces the first")
    func replaced() {
        var log = CommandRequestLog(limit: 2)
        log.remember("first", for: "a", command: "session/start")
        log.remember("second", for: "a", command: "session/start")
        #expect(log.reply(to: "a", command: "session/start") == "second" && log.count == 1)
    }

    @Test("an id is one command's: the same id with another command, or canonically equal bytes, is another request")
    func keyedByCommandAndBytes() {
        var log = CommandRequestLog(limit: 4)
        log.remember("stopped A", for: "1", command: "session/A/stop")
        #expect(log.reply(to: "1", command: "session/B/stop") == nil, "B's stop runs, not answered with A's")
        #expect(log.reply(to: "1", command: "session/A/stop") == "stopped A")
        log.remember("started", for: "\u{E9}", command: "session/start")
        #expect(log.reply(to: "e\u{301}", command: "session/start") == nil, "é and e + U+0301 are two ids")
    }

    @Test("requestId: up to 128 bytes taken whole; a longer one, or one not a string, is an invalid_request, never cut")
    func requestIDs() throws {
        #expect(try CommandRequestLog.requestID(nil) == nil)
        let longest = String(repeating: "\u{E9}", count: 64)
        #expect(try CommandRequestLog.requestID(.string(longest)) == longest)
        for refused: JSONValue in [
            .string(longest + "x"), .number(5), .bool(true), .null,
            // One character, thousands of bytes.
            .string("a" + String(repeating: "\u{301}", count: 30_000)),
        ] {
            do {
                _ = try CommandRequestLog.requestID(refused)
                Issue.record("accepted: \(String(describing: refused).prefix(40))")
            } catch {
                #expect(error.code == "invalid_request")
                #expect(error.message.utf8.count < 100)
            }
        }
    }
}
