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
        for id in ids { log.remember("reply \(id)", for: id) }
        #expect(log.reply(to: asked) == expected)
        #expect(log.count == min(Set(ids).count, limit))
    }

    @Test("a reply remembered again replaces the first")
    func replaced() {
        var log = CommandRequestLog(limit: 2)
        log.remember("first", for: "a")
        log.remember("second", for: "a")
        #expect(log.reply(to: "a") == "second" && log.count == 1)
    }

    @Test("requestId: up to 128 characters taken whole; a longer one is an invalid_request, never cut")
    func requestIDs() throws {
        #expect(try CommandRequestLog.requestID(nil) == nil)
        #expect(try CommandRequestLog.requestID(.number(5)) == nil)
        let longest = String(repeating: "\u{E9}", count: 128)
        #expect(try CommandRequestLog.requestID(.string(longest)) == longest)
        #expect(throws: APIError.self) { try CommandRequestLog.requestID(.string(longest + "x")) }
        do {
            _ = try CommandRequestLog.requestID(.string(longest + "x"))
        } catch {
            #expect(error.code == "invalid_request")
        }
    }
}
