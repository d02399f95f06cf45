import BridgeOut
import Testing

/// Datagrams byte for byte as python-osc 1.10.2 builds them (bridge-out.md, "Exact bytes";
/// the full datagrams of the rows the reference gives only in part were built with python-osc).
@Suite struct OSCMessageTests {
    static let golden: [(OSCMessage, String)] = [
        (
            OSCMessage("/avatar/parameters/HR", [.int32(72)]),
            "2f 61 76 61 74 61 72 2f 70 61 72 61 6d 65 74 65 72 73 2f 48 52 00 00 00 2c 69 00 00 00 00 00 48"
        ),
        (
            OSCMessage("/avatar/parameters/floatHR", [.float32(-0.435)]),
            "2f 61 76 61 74 61 72 2f 70 61 72 61 6d 65 74 65 72 73 2f 66 6c 6f 61 74 48 52 00 00 2c 66 00 00"
                + " be de b8 52"
        ),
        (
            OSCMessage("/avatar/parameters/isHRConnected", [.bool(true)]),
            "2f 61 76 61 74 61 72 2f 70 61 72 61 6d 65 74 65 72 73 2f 69 73 48 52 43 6f 6e 6e 65 63 74 65 64"
                + " 00 00 00 00 2c 54 00 00"
        ),
        (
            OSCMessage("/avatar/parameters/isHRBeat", [.bool(false)]),
            "2f 61 76 61 74 61 72 2f 70 61 72 61 6d 65 74 65 72 73 2f 69 73 48 52 42 65 61 74 00 2c 46 00 00"
        ),
        (
            OSCMessage("/chatbox/input", [.string("❤ 72 bpm"), .bool(true), .bool(false)]),
            "2f 63 68 61 74 62 6f 78 2f 69 6e 70 75 74 00 00 2c 73 54 46 00 00 00 00 e2 9d a4 20 37 32 20 62 70 6d"
                + " 00 00"
        ),
        // A string whose length is a multiple of 4 still gets its NUL: four of them.
        (OSCMessage("/a", [.string("abcd")]), "2f 61 00 00 2c 73 00 00 61 62 63 64 00 00 00 00"),
        (
            OSCMessage("/avatar/parameters/HR", [.int32(-1)]),
            "2f 61 76 61 74 61 72 2f 70 61 72 61 6d 65 74 65 72 73 2f 48 52 00 00 00 2c 69 00 00 ff ff ff ff"
        ),
    ]

    @Test(arguments: golden)
    func encodesAsPythonOSCDoes(message: OSCMessage, hex: String) {
        #expect(OSCExpect.hex(message.encoded()) == hex)
    }

    @Test(arguments: golden)
    func everyDatagramIsWholeWords(message: OSCMessage, hex: String) {
        #expect(message.encoded().count % 4 == 0)
    }

    @Test func floatIsBigEndianIEEE754() {
        let bytes = OSCMessage("/f", [.float32(-0.435)]).encoded()
        #expect(Array(bytes.suffix(4)) == [0xBE, 0xDE, 0xB8, 0x52])
    }

    @Test func typeTagsNameEachArgument() {
        let message = OSCMessage("/x", [.int32(1), .float32(1), .string("s"), .bool(true), .bool(false)])
        #expect(message.typeTags == ",ifsTF")
        #expect(OSCMessage("/x").typeTags == ",")
        #expect(OSCExpect.hex(OSCMessage("/x").encoded()) == "2f 78 00 00 2c 00 00 00")
    }
}
