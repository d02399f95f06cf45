import BridgeOut
import Testing

@Suite struct OSCChatboxTests {
    @Test func theFormatTakesTheHeartRate() {
        #expect(OSCChatbox().text(heartRate: 72) == "❤ 72 bpm")
        #expect(OSCChatbox(format: "Heartrate is {hr} bpm ({hr})").text(heartRate: 5) == "Heartrate is 5 bpm (5)")
        #expect(OSCChatbox(format: "no placeholder").text(heartRate: 5) == "no placeholder")
    }

    /// 144 is VRChat's limit, counted as C# counts (UTF-16 units); cuts fall between characters.
    @Test(arguments: [
        (String(repeating: "a", count: 200), String(repeating: "a", count: 144)),
        (String(repeating: "💓", count: 100), String(repeating: "💓", count: 72)),
        ("a" + String(repeating: "💓", count: 72), "a" + String(repeating: "💓", count: 71)),
        (String(repeating: "e\u{301}", count: 100), String(repeating: "e\u{301}", count: 72)),
        ("short {hr}", "short 72"),
    ])
    func textIsCutToTheLimitOnACharacterBoundary(format: String, expected: String) {
        let text = OSCChatbox(format: format).text(heartRate: 72)
        #expect(text == expected)
        #expect(text.utf16.count <= OSCChatbox.characterLimit)
    }

    @Test func theMessageSendsAtOnceWithoutASound() {
        #expect(
            OSCChatbox().message(heartRate: 72)
                == OSCMessage("/chatbox/input", [.string("❤ 72 bpm"), .bool(true), .bool(false)]))
    }
}
