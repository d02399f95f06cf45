import Foundation
import Testing

/// Runs the built `hrbridge` executable, as a user would.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

func runHRBridge(_ arguments: [String], in directory: URL? = nil) throws -> CommandResult {
    let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("hrbridge")
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    // Each run its own default store: tests never write the user's store, nor share one.
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_DATA_HOME"] =
        FileManager.default.temporaryDirectory
        .appendingPathComponent("hrbridge-data-\(UUID().uuidString)").path
    process.environment = environment
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}

private func json(_ text: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

@Suite("hrbridge decode")
struct DecodeCommandTests {
    @Test("the documented example prints exactly the five keys")
    func documentedExample() throws {
        let result = try runHRBridge(["decode", "2a37", "1e 55 32 00 21 00"])
        #expect(result.status == 0)
        let object = try json(result.stdout)
        #expect(Set(object.keys) == ["heartRate", "sensorContact", "energyExpended", "energySaturated", "rrIntervals"])
        #expect(object["heartRate"] as? Int == 85)
        #expect(object["sensorContact"] as? String == "detected")
        #expect(object["energyExpended"] as? Int == 50)
        #expect(object["energySaturated"] as? Bool == false)
        #expect(object["rrIntervals"] as? [Double] == [0.0322265625])
        #expect(result.stderr.isEmpty)
    }

    @Test("names, colons and split arguments are accepted; absent EE is null")
    func inputForms() throws {
        let result = try runHRBridge(["decode", "heart-rate-measurement", "10:43", "72", "03"])
        #expect(result.status == 0)
        let object = try json(result.stdout)
        #expect(object["energyExpended"] is NSNull)
        #expect(object["sensorContact"] as? String == "notSupported")
        #expect(object["rrIntervals"] as? [Double] == [0.861328125])
        let saturated = try json(try runHRBridge(["decode", "0x2A37", "08 46 FF FF"]).stdout)
        #expect(saturated["energySaturated"] as? Bool == true)
    }

    @Test(
        "malformed frames exit 65 with one line naming field and offset, nothing on stdout",
        arguments: [
            ("17 01 01", "byte offset 3"), ("10 48 2C 03 01", "byte offset 4"),
            ("01 2C", "heartRate truncated at byte offset 1"),
            ("08 46 D0", "energyExpended truncated at byte offset 2"), ("00", "too short"),
        ])
    func malformed(_ frame: String, _ expected: String) throws {
        let result = try runHRBridge(["decode", "2a37", frame])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.stderr.contains(expected), "\(result.stderr)")
    }

    @Test(
        "unknown characteristic or bad hex exits 64 with usage",
        arguments: [["2a99", "00"], ["2a37", "1g"], ["2a37", "123"]])
    func usageErrors(_ arguments: [String]) throws {
        let result = try runHRBridge(["decode"] + arguments)
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("Usage: hrbridge decode"))
    }

    @Test("other characteristics print camelCase fields in SI units")
    func otherCharacteristics() throws {
        let bike = try json(
            try runHRBridge(["decode", "indoor-bike-data", "54 02 CA 0C A0 00 D3 A4 00 2C 01 8F"]).stdout)
        #expect(abs((bike["speed"] as? Double ?? 0) - 9.09444) < 0.0001)
        #expect(bike["cadence"] as? Double == 80)
        #expect(bike["totalDistance"] as? Int == 42195)
        #expect(bike["power"] as? Int == 300)
        #expect(bike["heartRate"] as? Int == 143)
        let power = try json(try runHRBridge(["decode", "2a63", "00 00 FB FF"]).stdout)
        #expect(power["instantaneousPower"] as? Int == -5)
        let battery = try json(try runHRBridge(["decode", "2a19", "64"]).stdout)
        #expect(battery["batteryLevel"] as? Int == 100)
        let location = try json(try runHRBridge(["decode", "2a38", "07"]).stdout)
        #expect(location["bodySensorLocation"] as? String == "unknown")
        #expect(location["rawValue"] as? Int == 7)
        let csc = try json(try runHRBridge(["decode", "2a5b", "01 39 30 00 00 E8 03"]).stdout)
        #expect(csc["wheelEventTime"] as? Double == 0.9765625)
        let model = try json(try runHRBridge(["decode", "model-number", "48 31 30 00 00"]).stdout)
        #expect(model["modelNumber"] as? String == "H10")
        #expect(try runHRBridge(["decode", "2a19", "65"]).status == 65)
    }

    @Test("--samples prints the samples, RR back-dated from --received-at")
    func samples() throws {
        let result = try runHRBridge([
            "decode", "2a37", "16 42 18 04 70 01", "--samples", "--received-at", "2026-01-01T10:00:00Z",
        ])
        #expect(result.status == 0)
        let samples = try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(samples.map { $0["type"] as? String } == ["heartRate", "heartbeatSeries", "heartbeatSeries"])
        #expect(samples[0]["value"] as? Double == 66)
        #expect(samples[0]["unit"] as? String == "count/min")
        #expect(samples[2]["end"] as? String == "2026-01-01T10:00:00.000Z")
        #expect(samples[2]["start"] as? String == "2026-01-01T09:59:59.640Z")
        #expect((samples[1]["metadata"] as? [String: Any])?["rawRRInterval"] as? Int == 1048)
    }

    @Test("--help documents exit codes and the JSON keys")
    func help() throws {
        let result = try runHRBridge(["decode", "--help"])
        #expect(result.status == 0)
        for phrase in ["65", "64", "energySaturated", "rrIntervals", "--samples", "heart-rate-measurement"] {
            #expect(result.stdout.contains(phrase), "help lacks \(phrase)")
        }
    }
}
