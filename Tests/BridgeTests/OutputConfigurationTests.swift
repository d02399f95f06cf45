import Bridge
import BridgeOut
import GATT
import Testing

/// `[peripheral]` and `[osc]`: read with their defaults, every bad value named with its line.
@Suite("configuration: [peripheral] and [osc]")
struct OutputConfigurationTests {
    private func problem(_ text: String) -> (line: Int, message: String)? {
        do {
            _ = try ConfigurationLoader.parse(text)
            return nil
        } catch {
            return error.problems.first.map { ($0.line, $0.message) }
        }
    }

    @Test("[peripheral] off unless enabled; its values read")
    func peripheral() throws {
        #expect(try ConfigurationLoader.parse("").peripheral == nil)
        #expect(try ConfigurationLoader.parse("[peripheral]\nname = \"x\"").peripheral == nil, "not enabled")
        let read = try #require(
            try ConfigurationLoader.parse(
                """
                [adapter]
                kind = "bluez"
                [peripheral]
                enabled = true
                adapter = "hci1"
                source = "c0:ff:ee:00:00:01"
                name = "Gym HR"
                forward_rr = false
                forward_energy = true
                location = "wrist"
                alpha1 = true
                alpha1_adapter = "hci2"
                """
            ).peripheral)
        #expect(read.adapter == "hci1" && read.source == .strap(address: "C0:FF:EE:00:00:01") && read.name == "Gym HR")
        #expect(!read.forwardRR && read.forwardEnergy && read.location == .wrist && read.alpha1)
        #expect(read.alpha1Adapter == "hci2")
        let defaults = try #require(try ConfigurationLoader.parse("[peripheral]\nenabled = true").peripheral)
        #expect(defaults.adapter == nil && defaults.source == .session && defaults.forwardRR && !defaults.alpha1)
        #expect(defaults.location == .chest && defaults.name == "hrbridge HR")
    }

    @Test(
        "[peripheral] problems",
        arguments: [
            ("[peripheral]\nenabled = true\nsource = \"somebody\"", 3, "is not a Bluetooth address"),
            ("[peripheral]\nenabled = true\nadapter = \"hci 1\"", 3, "is not an adapter name"),
            ("[peripheral]\nenabled = true\nname = \"A\\u202Eevil\"", 3, "cannot be advertised as it is"),
            (
                "[peripheral]\nenabled = true\nname = \"a name far too long for an advertisement\"", 3,
                "cannot be advertised"
            ),
            ("[peripheral]\nenabled = true\nlocation = \"knee\"", 3, "is not one of"),
            ("[peripheral]\nenabled = 1", 2, "true or false"),
            ("[peripheral]\nenabled = true\nalpha = true", 3, "unknown key 'alpha'"),
            (
                "[adapter]\nkind = \"bluez\"\n[peripheral]\nenabled = true\nsource = \"simulator\"", 5,
                "simulated adapter"
            ),
            ("[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://b:1883\"\n[peripheral]\nenabled = true", 5, "has no adapter"),
            (
                "[peripheral]\nenabled = true\nadapter = \"hci1\"\nalpha1 = true\nalpha1_adapter = \"hci1\"", 4,
                "an adapter of its own"
            ),
        ])
    func peripheralProblems(text: String, line: Int, message: String) throws {
        let found = try #require(problem(text), "accepted: \(text)")
        #expect(found.line == line && found.message.contains(message), "\(found)")
    }

    @Test("[osc] off unless enabled; its values and custom names read")
    func osc() throws {
        #expect(try ConfigurationLoader.parse("").osc == nil)
        let read = try #require(
            try ConfigurationLoader.parse(
                """
                [osc]
                enabled = true
                target = "192.168.1.20:9000"
                source = "session"
                preset = "custom"
                min_hr = 50
                max_hr = 190
                beat_pulse_ms = 80
                beat_delay_ms = 500
                on_drop = "hold"
                chatbox = true
                chatbox_format = "{hr} bpm"
                chatbox_every_s = 10
                [osc.custom]
                hr = "Pulse"
                connected = "PulseOn"
                """
            ).osc)
        #expect(read.target.host == "192.168.1.20" && read.target.port == 9000 && read.preset == .custom)
        #expect(read.minHR == 50 && read.maxHR == 190 && read.beatPulseMs == 80 && read.beatDelayMs == 500)
        #expect(
            read.onDrop == .hold && read.chatbox && read.chatboxFormat == "{hr} bpm" && read.chatboxEverySeconds == 10)
        #expect(read.customNames[.heartRate] == "Pulse" && read.customNames[.connected] == "PulseOn")
        let defaults = try #require(try ConfigurationLoader.parse("[osc]\nenabled = true").osc)
        #expect(defaults.target.port == 9000 && defaults.preset == .hrtovrchat && defaults.source == .session)
    }

    @Test(
        "[osc] problems",
        arguments: [
            ("[osc]\nenabled = true\ntarget = \"localhost\"", 3, "target"),
            ("[osc]\nenabled = true\ntarget = \"localhost:99999\"", 3, "target"),
            ("[osc]\nenabled = true\npreset = \"vrchat-ultra\"", 3, "preset"),
            ("[osc]\nenabled = true\nmin_hr = 120\nmax_hr = 100", 4, "max_hr"),
            ("[osc]\nenabled = true\nbeat_pulse_ms = 5", 3, "out of range"),
            ("[osc]\nenabled = true\non_drop = \"explode\"", 3, "on_drop"),
            ("[osc]\nenabled = true\npreset = \"custom\"", 1, "custom"),
            ("[osc]\nenabled = true\nfrequency = 2", 3, "unknown key 'frequency'"),
            ("[adapter]\nkind = \"bluez\"\n[osc]\nenabled = true\nsource = \"simulator\"", 5, "simulated adapter"),
        ])
    func oscProblems(text: String, line: Int, message: String) throws {
        let found = try #require(problem(text), "accepted: \(text)")
        #expect(found.line == line && found.message.contains(message), "\(found)")
    }
}
