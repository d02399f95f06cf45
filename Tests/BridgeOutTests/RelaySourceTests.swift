import BridgeOut
import Testing

@Suite struct RelaySourceTests {
    @Test(arguments: [
        ("session", RelaySource.session), ("Simulator", .simulator),
        ("c1:00:00:00:00:0a", .strap(address: "C1:00:00:00:00:0A")),
        (" AA:BB:CC:DD:EE:FF ", .strap(address: "AA:BB:CC:DD:EE:FF")),
    ])
    func parses(text: String, expected: RelaySource) throws {
        #expect(try RelaySource(parsing: text) == expected)
    }

    @Test(arguments: [
        "", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FG", "AA-BB-CC-DD-EE-FF", "AAA:BB:CC:DD:EE:F",
        // Full-width digits and letters are hex digits to `Character.isHexDigit`, never in an address.
        "AA:BB:CC:DD:EE:０１", "ＡＡ:BB:CC:DD:EE:FF",
    ])
    func refuses(text: String) {
        #expect(throws: RelaySourceError.self) { try RelaySource(parsing: text) }
    }
}
