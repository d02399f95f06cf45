import Foundation
import JSONSupport
import Testing
import Wire

/// Runs the built `hrbridge` executable, as a user would.
struct CommandResult {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// A fresh directory for a test's store and files (`hrbridge-LABEL-UUID`); the test removes it.
func scratchDirectory(_ label: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "hrbridge-\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

func runHRBridge(_ arguments: [String], in directory: URL? = nil) async throws -> CommandResult {
    // The process is waited for on a thread of its own: a test waiting on the cooperative pool
    // would hold one of its few threads (two on CI) while hrbridge runs, stalling every other test.
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try runHRBridgeBlocking(arguments, in: directory) })
        }
    }
}

private func runHRBridgeBlocking(_ arguments: [String], in directory: URL?) throws -> CommandResult {
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

/// A decoded value's object: free-form, as its keys, `null`s and number kinds are what is checked.
private func json(_ text: String) throws -> [String: JSONValue] {
    try JSONLines.decode([String: JSONValue].self, text)
}

@Suite("hrbridge decode")
struct DecodeCommandTests {
    @Test("the documented example prints exactly the five keys")
    func documentedExample() async throws {
        let result = try await runHRBridge(["decode", "2a37", "1e 55 32 00 21 00"])
        #expect(result.status == 0)
        let object = try json(result.stdout)
        #expect(Set(object.keys) == ["heartRate", "sensorContact", "energyExpended", "energySaturated", "rrIntervals"])
        #expect(object["heartRate"]?.integer == 85)
        #expect(object["sensorContact"]?.string == "detected")
        #expect(object["energyExpended"]?.integer == 50)
        #expect(object["energySaturated"]?.bool == false)
        #expect(object["rrIntervals"] == .array([.number(0.0322265625)]))
        #expect(result.stderr.isEmpty)
        // The help's own examples decode.
        let help = try await runHRBridge(["decode", "--help"])
        #expect(help.stdout.contains("16 55 00 04") && help.stdout.contains("16:55:00:04"))
        for example in ["16 55 00 04", "16:55:00:04"] {
            let decoded = try await runHRBridge(["decode", "2a37", example])
            #expect(decoded.status == 0, "\(example)")
            #expect(try json(decoded.stdout)["heartRate"]?.integer == 85, "\(example)")
        }
    }

    @Test("names, colons and split arguments are accepted; absent EE is null")
    func inputForms() async throws {
        let result = try await runHRBridge(["decode", "heart-rate-measurement", "10:43", "72", "03"])
        #expect(result.status == 0)
        let object = try json(result.stdout)
        #expect(object["energyExpended"] == .null)
        #expect(object["sensorContact"]?.string == "notSupported")
        #expect(object["rrIntervals"] == .array([.number(0.861328125)]))
        let saturated = try json(try await runHRBridge(["decode", "0x2A37", "08 46 FF FF"]).stdout)
        #expect(saturated["energySaturated"]?.bool == true)
    }

    @Test(
        "malformed frames exit 65 with one line naming field and offset, nothing on stdout",
        arguments: [
            ("17 01 01", "byte offset 3"), ("10 48 2C 03 01", "byte offset 4"),
            ("01 2C", "heartRate truncated at byte offset 1"),
            ("08 46 D0", "energyExpended truncated at byte offset 2"), ("00", "too short"),
        ])
    func malformed(_ frame: String, _ expected: String) async throws {
        let result = try await runHRBridge(["decode", "2a37", frame])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.stderr.contains(expected), "\(result.stderr)")
    }

    @Test(
        "unknown characteristic or bad hex exits 64 with usage",
        arguments: [["2a99", "00"], ["2a37", "1g"], ["2a37", "123"]])
    func usageErrors(_ arguments: [String]) async throws {
        let result = try await runHRBridge(["decode"] + arguments)
        #expect(result.status == 64)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("Usage: hrbridge decode"))
    }

    @Test("other characteristics print camelCase fields in SI units")
    func otherCharacteristics() async throws {
        let bike = try json(
            try await runHRBridge(["decode", "indoor-bike-data", "54 02 CA 0C A0 00 D3 A4 00 2C 01 8F"]).stdout)
        #expect(abs((bike["speed"]?.number ?? 0) - 9.09444) < 0.0001)
        #expect(bike["cadence"]?.number == 80)
        #expect(bike["totalDistance"]?.integer == 42195)
        #expect(bike["power"]?.integer == 300)
        #expect(bike["heartRate"]?.integer == 143)
        let power = try json(try await runHRBridge(["decode", "2a63", "00 00 FB FF"]).stdout)
        #expect(power["instantaneousPower"]?.integer == -5)
        let battery = try json(try await runHRBridge(["decode", "2a19", "64"]).stdout)
        #expect(battery["batteryLevel"]?.integer == 100)
        let location = try json(try await runHRBridge(["decode", "2a38", "07"]).stdout)
        #expect(location["bodySensorLocation"]?.string == "unknown")
        #expect(location["rawValue"]?.integer == 7)
        let csc = try json(try await runHRBridge(["decode", "2a5b", "01 39 30 00 00 E8 03"]).stdout)
        #expect(csc["wheelEventTime"]?.number == 0.9765625)
        let model = try json(try await runHRBridge(["decode", "model-number", "48 31 30 00 00"]).stdout)
        #expect(model["modelNumber"]?.string == "H10")
        #expect(try await runHRBridge(["decode", "2a19", "65"]).status == 65)
    }

    @Test("--samples prints the samples, RR back-dated from --received-at")
    func samples() async throws {
        let result = try await runHRBridge([
            "decode", "2a37", "16 42 18 04 70 01", "--samples", "--received-at", "2026-01-01T10:00:00Z",
        ])
        #expect(result.status == 0)
        let samples = try JSONLines.decode([SampleJSON].self, result.stdout)
        #expect(samples.map(\.type) == ["heartRate", "heartbeatSeries", "heartbeatSeries"])
        try #require(samples.count == 3)
        #expect(samples[0].value == 66)
        #expect(samples[0].unit == "count/min")
        #expect(samples[2].end == "2026-01-01T10:00:00.000Z")
        #expect(samples[2].start == "2026-01-01T09:59:59.640Z")
        #expect(samples[1].metadata.rawRRInterval == 1048)
    }

    @Test("--help documents exit codes and the JSON keys")
    func help() async throws {
        let result = try await runHRBridge(["decode", "--help"])
        #expect(result.status == 0)
        for phrase in ["65", "64", "energySaturated", "rrIntervals", "--samples", "heart-rate-measurement"] {
            #expect(result.stdout.contains(phrase), "help lacks \(phrase)")
        }
    }
}
