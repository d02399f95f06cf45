import BridgeOut
import Testing

@Suite struct OSCTargetTests {
    @Test(arguments: [
        ("127.0.0.1:9000", OSCTarget(host: "127.0.0.1", port: 9000)),
        (" 192.168.1.50:9000 ", OSCTarget(host: "192.168.1.50", port: 9000)),
        ("quest.lan:9001", OSCTarget(host: "quest.lan", port: 9001)),
        ("[::1]:9000", OSCTarget(host: "::1", port: 9000)),
        ("[fe80::1%eth0]:65535", OSCTarget(host: "fe80::1%eth0", port: 65535)),
    ])
    func parses(text: String, expected: OSCTarget) throws {
        let target = try OSCTarget(parsing: text)
        #expect(target == expected)
        #expect(try OSCTarget(parsing: target.description) == target, "description reads back")
    }

    @Test(arguments: [
        ("127.0.0.1", OSCTargetError.missingPort("127.0.0.1")),
        ("127.0.0.1:", .missingPort("127.0.0.1:")),
        ("[::1]", .missingPort("[::1]")),
        ("[::1]9000", .missingPort("[::1]9000")),
        (":9000", .emptyHost(":9000")),
        ("[]:9000", .emptyHost("[]:9000")),
        ("host:0", .badPort("host:0", port: "0")),
        ("host:65536", .badPort("host:65536", port: "65536")),
        ("host:90x0", .badPort("host:90x0", port: "90x0")),
        ("host:-1", .badPort("host:-1", port: "-1")),
        ("::1:9000", .unbracketedIPv6("::1:9000")),
        ("[::1:9000", .unclosedBracket("[::1:9000")),
    ])
    func refusesNamingWhatIsWrong(text: String, expected: OSCTargetError) {
        #expect(throws: expected) { try OSCTarget(parsing: text) }
    }

    @Test func messagesSayWhatToWrite() {
        #expect("\(OSCTargetError.missingPort("x"))".contains("host:port"))
        #expect("\(OSCTargetError.badPort("x:0", port: "0"))".contains("port \"0\""))
        #expect("\(OSCTargetError.unbracketedIPv6("::1:9"))".contains("[::1]:9000"))
    }
}
