import BridgeOut
import Testing

@Suite struct OSCSettingsTests {
    @Test func defaultsAreValidAndTheDaemons() throws {
        let settings = OSCSettings()
        #expect(!settings.enabled)
        #expect(settings.target == OSCTarget(host: "127.0.0.1", port: 9000))
        #expect(settings.source == .session)
        let configuration = try settings.feedConfiguration()
        #expect(configuration.preset == .hrtovrchat)
        #expect(configuration.minHeartRate == 40 && configuration.maxHeartRate == 200)
        #expect(configuration.beatPulse == .milliseconds(100))
        #expect(configuration.beatDelay == .seconds(1))
        #expect(configuration.resendInterval == .seconds(1))
        #expect(configuration.onDrop == .zero)
        #expect(configuration.chatbox == nil)
    }

    @Test func everyKeyReachesTheFeed() throws {
        var settings = OSCSettings()
        try settings.set(.target, to: "[::1]:9001")
        try settings.set(.source, to: "AA:BB:CC:DD:EE:FF")
        try settings.set(.preset, to: "custom")
        try settings.setCustomName("hr", to: "Pulse")
        try settings.setCustomName("beat_toggle", to: "Flip")
        try settings.set(.onDrop, to: "hold")
        try settings.set(.chatboxFormat, to: "HR {hr}")
        settings.chatbox = true
        settings.chatboxEverySeconds = 2.5
        settings.minHR = 50
        settings.maxHR = 180
        settings.beatPulseMs = 150
        settings.beatDelayMs = 0
        #expect(settings.target == OSCTarget(host: "::1", port: 9001))
        #expect(settings.source == .strap(address: "AA:BB:CC:DD:EE:FF"))
        let configuration = try settings.feedConfiguration()
        #expect(
            configuration.preset.parameters == [
                OSCParameter(name: "Pulse", quantity: .heartRate), OSCParameter(name: "Flip", quantity: .beatToggle),
            ])
        #expect(configuration.minHeartRate == 50 && configuration.maxHeartRate == 180)
        #expect(configuration.beatPulse == .milliseconds(150) && configuration.beatDelay == .zero)
        #expect(configuration.onDrop == .hold)
        #expect(configuration.chatbox == OSCChatbox(format: "HR {hr}", every: .milliseconds(2500)))
    }

    static func changed(_ change: (inout OSCSettings) -> Void) -> OSCSettings {
        var settings = OSCSettings()
        change(&settings)
        return settings
    }

    /// Each invalid value is refused with the key it came from.
    @Test(arguments: [
        (changed { $0.minHR = -1 }, "min_hr"),
        (changed { $0.maxHR = 301 }, "max_hr"),
        (changed { $0.maxHR = 40 }, "max_hr"),
        (changed { $0.beatPulseMs = 5 }, "beat_pulse_ms"),
        (changed { $0.beatDelayMs = 6000 }, "beat_delay_ms"),
        (changed { $0.chatboxEverySeconds = 0.5 }, "chatbox_every_s"),
        (changed { $0.chatboxFormat = "  " }, "chatbox_format"),
        (changed { $0.chatboxFormat = "a\0b" }, "chatbox_format"),
        (changed { $0.preset = .custom }, "custom"),
        (changed { $0.customNames = [.heartRate: "HR"] }, "custom.hr"),
        (
            changed {
                $0.preset = .custom
                $0.customNames = [.heartRate: "my HR"]
            }, "custom.hr"
        ),
        (
            changed {
                $0.preset = .custom
                $0.customNames = [.heartRate: "HR", .signedUnit: "HR"]
            }, "custom.float_hr"
        ),
    ])
    func validationNamesTheKey(settings: OSCSettings, key: String) {
        #expect {
            try settings.validate()
        } throws: { error in
            (error as? OSCSettingsError)?.key == key && "\(error)".hasPrefix("[osc] \(key): ")
        }
    }

    @Test(arguments: [
        (OSCSettings.Key.target, "localhost", "target"), (.target, "host:99999", "target"),
        (.source, "nobody", "source"), (.preset, "hrtovr", "preset"), (.onDrop, "keep", "on_drop"),
        (.minHR, "40", "min_hr"),
    ])
    func textValuesAreRefusedNamingTheKey(key: OSCSettings.Key, text: String, named: String) {
        var settings = OSCSettings()
        #expect {
            try settings.set(key, to: text)
        } throws: { error in
            (error as? OSCSettingsError)?.key == named
        }
    }

    @Test func anUnknownCustomNameKeyIsRefused() {
        var settings = OSCSettings()
        #expect {
            try settings.setCustomName("heart", to: "HR")
        } throws: { error in
            (error as? OSCSettingsError)?.key == "custom.heart" && "\(error)".contains("hr, ones_hr")
        }
    }

    @Test func theErrorSaysWhatIsWrong() {
        var settings = OSCSettings()
        settings.maxHR = 30
        #expect(throws: OSCSettingsError(key: "max_hr", .notAbove("min_hr"))) { try settings.validate() }
        #expect("\(OSCSettingsError(key: "max_hr", .notAbove("min_hr")))" == "[osc] max_hr: must be above min_hr")
    }
}
