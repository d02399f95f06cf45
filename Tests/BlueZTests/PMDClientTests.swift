import BlueZ
import BusHarness
import DBus
import Foundation
import GATT
import Sensors
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The PMD client against BlueZoo: a strap with Polar's Measurement Data service (`strap.py
/// --pmd`), whose control point answers only while its indications are on, as an H10's does.
@Suite("BlueZ PMD client: raw ECG and acceleration from a strap on BlueZoo", .serialized)
struct PMDClientTests {
    static let central = "00:00:00:00:00:01"
    static let strapAddress = "00:00:00:00:00:02"

    /// `hrbridge`, built beside the tests.
    static var binary: String {
        let executable = packageRoot.appendingPathComponent(".build/debug/hrbridge").path
        return FileManager.default.isExecutableFile(atPath: executable)
            ? executable
            : URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
                .appendingPathComponent("hrbridge").path
    }

    private func waveforms(_ log: EventLog, _ kind: WaveformKind) -> [SensorWaveform] {
        log.all.compactMap { if case .waveform(let frame) = $0, frame.kind == kind { frame } else { nil } }
    }

    /// The fixture's ECG: sample k is round(1000 sin(2πk/130)) µV, k counted from its START.
    private func fixtureECG(_ index: Int) -> Int32 {
        Int32((1000 * sin(2 * Double.pi * Double(index) / 130)).rounded())
    }

    /// Runs `body` with a PMD strap (MTU `mtu`) linked to a BlueZ adapter on BlueZoo.
    private func withPMDStrap(
        mtu: Int, clock: any WallClock = SystemWallClock(),
        _ body: (BlueZAdapter, Strap, EventLog, SensorIdentity, BlueZooBed) async throws -> Void
    ) async throws {
        try await withBlueZoo(adapters: [Self.central, Self.strapAddress]) { bed in
            let strap = try await bed.startStrap(
                address: Self.strapAddress, frames: strapFrames(150), interval: 0.5, name: "Polar H10 0A1B2C3D",
                more: ["--pmd", "--mtu", "\(mtu)"])
            let connection = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            let adapter = try await BlueZAdapter.open(
                adapter: "hci0", connection: connection, options: fastOptions, clock: clock, logger: testLogger)
            let log = EventLog(adapter.events())
            try await adapter.startDiscovery(services: [.heartRate])
            await log.wait("the strap to be discovered") { events in
                events.contains {
                    if case .discovered(let sensor) = $0 { sensor.identity.address == Self.strapAddress } else { false }
                }
            }
            try await adapter.stopDiscovery()
            let sensor = SensorIdentity(adapter: "hci0", address: Self.strapAddress)
            try await adapter.connect(sensor)
            await log.waitUntilReady(sensor)
            await log.wait("the strap's PMD features") { events in
                events.contains { if case .waveformsAvailable(_, [.ecg, .acc]) = $0 { true } else { false } }
            }
            try await body(adapter, strap, log, sensor, bed)
            await adapter.shutdown()
            await connection.close()
        }
    }

    @Test("ECG: indications and notifications on before START, every sample as the strap sent it, STOP at the end")
    func ecgStream() async throws {
        try await withPMDStrap(mtu: 232) { adapter, strap, log, sensor, _ in
            try await adapter.startWaveform(WaveformRequest(kind: .ecg), for: sensor)
            await log.wait("5 ECG frames", timeout: .seconds(60)) { _ in waveforms(log, .ecg).count >= 5 }
            // Malformed frames are refused with their reason, and the stream goes on.
            try strap.send("pmd-garbage")
            await log.wait("two refusals") { events in
                events.filter { if case .waveformRefused(sensor, .ecg, _) = $0 { true } else { false } }.count == 2
            }
            let reasons = log.all.compactMap { event -> PMDDecodingError.Reason? in
                if case .waveformRefused(_, _, let error) = event { error.reason } else { nil }
            }
            #expect(reasons == [.tooShort(3), .partialSample(payload: 4, sampleBytes: 3)])
            let beforeGarbage = waveforms(log, .ecg).count
            await log.wait("ECG after the refusals", timeout: .seconds(60)) { _ in
                waveforms(log, .ecg).count >= beforeGarbage + 3
            }
            try await adapter.stopWaveform(.ecg, for: sensor)
            _ = try #require(await strap.process.waitForLine { $0 == "pmd-stop ecg" }, "STOP reached the strap")
            // The strap sends one more frame as STOP arrives, before its answer: it is delivered too.
            let sent = try #require(
                strap.process.output.last { $0.hasPrefix("pmd-frame ecg ") }.flatMap {
                    Int($0.split(separator: " ")[2])
                })
            await log.wait("every frame the strap sent, the one sent as STOP arrived too") { _ in
                waveforms(log, .ecg).count == sent
            }
            let lines = strap.process.output
            let controlOn = try #require(lines.firstIndex(of: "subscribed 5c81"), "\(lines.suffix(20))")
            let dataOn = try #require(lines.firstIndex(of: "subscribed 5c82"))
            let start = try #require(
                lines.firstIndex(of: "written 5c81 02000001820001010e00"), "START as Polar's clients write it")
            #expect(controlOn < start && dataOn < start, "subscriptions before the command")
            let frames = waveforms(log, .ecg)
            #expect(frames.allSatisfy { $0.sampleCount == 73 && $0.sampleRate == 130 })
            let values = frames.flatMap(\.values)
            #expect(values == (0..<values.count).map(fixtureECG), "every sample, in order, as sent")
            #expect(frames.dropFirst().allSatisfy { $0.continuous })
            // Spaced by the strap's clock: 1/130 s within a frame.
            #expect(frames.allSatisfy { abs($0.interval - 1 / 130) < 1e-6 })
        }
    }

    @Test("An ATT MTU of 185 is refused with the reason, before any command is written")
    func smallMTU() async throws {
        try await withPMDStrap(mtu: 185) { adapter, strap, log, sensor, _ in
            await #expect {
                try await adapter.startWaveform(WaveformRequest(kind: .ecg), for: sensor)
            } throws: { error in
                guard case .waveformUnavailable(_, .ecg, let why) = error as? SensorAdapterError else { return false }
                return why.contains("ATT MTU is 185") && why.contains("232")
            }
            #expect(!strap.process.output.contains { $0.hasPrefix("written 5c81 02") }, "no START written")
        }
    }

    @Test("Acceleration at 50 Hz: three axes in mG; a strap refusing gives Polar's reason; nothing without a link")
    func accelerationAndRefusals() async throws {
        try await withPMDStrap(mtu: 247) { adapter, strap, log, sensor, _ in
            try await adapter.startWaveform(WaveformRequest(kind: .acc, sampleRate: 50, range: 4), for: sensor)
            // The strap prints each write as it takes it: its line may follow the write's reply.
            #expect(await strap.process.waitForLine { $0 == "written 5c81 0202000132000101100002010400" } != nil)
            await log.wait("3 acceleration frames", timeout: .seconds(60)) { _ in waveforms(log, .acc).count >= 3 }
            let samples = waveforms(log, .acc).flatMap(\.values)
            let x = stride(from: 0, to: samples.count, by: 3).map { samples[$0] }
            let y = stride(from: 1, to: samples.count, by: 3).map { samples[$0] }
            let z = stride(from: 2, to: samples.count, by: 3).map { samples[$0] }
            let indices: [Int32] = (0..<Int32(x.count)).map { $0 }
            #expect(x == indices)
            #expect(y == indices.map { -$0 })
            #expect(z.allSatisfy { $0 == 1000 })
            // A second START of a running stream: the strap says "already in state", which is fine.
            try await adapter.startWaveform(WaveformRequest(kind: .acc, sampleRate: 50, range: 4), for: sensor)
            await #expect(throws: SensorAdapterError.self) {
                try await adapter.startWaveform(WaveformRequest(kind: .acc, sampleRate: 30), for: sensor)
            }
            try await adapter.disconnect(sensor)
            await #expect(throws: SensorAdapterError.notConnected(sensor)) {
                try await adapter.startWaveform(WaveformRequest(kind: .ecg), for: sensor)
            }
        }
    }

    @Test("A START answer whose scale factor is not a number is refused, not streamed as zeros")
    func badFactorRefused() async throws {
        try await withPMDStrap(mtu: 247) { adapter, strap, log, sensor, _ in
            // Type 5 (factor), one float32 value: a NaN.
            try strap.send("pmd-start-settings 05010000c07f")
            _ = try #require(await strap.process.waitForLine { $0 == "pmd-start-settings" })
            do {
                try await adapter.startWaveform(WaveformRequest(kind: .acc, sampleRate: 50, range: 4), for: sensor)
                Issue.record("START with a NaN factor was taken")
            } catch {
                #expect("\(error)".contains("scale factor"), "\(error)")
            }
        }
    }

    @Test("An earlier request's timeout does not end a later one: its answer, held past that deadline, is taken")
    func staleTimeoutIgnored() async throws {
        // Linked on real time (a failed first attempt on a loaded machine is retried by itself);
        // the START requests' deadlines on a clock the test moves.
        let handOver = HandOverClock()
        try await withPMDStrap(mtu: 247, clock: handOver) { adapter, strap, log, sensor, _ in
            let clock = handOver.handOver()
            // ECG's START is answered at once; its 5 s deadline stays armed on the clock.
            try await adapter.startWaveform(WaveformRequest(kind: .ecg), for: sensor)
            clock.advance(by: 4)
            try strap.send("pmd-hold")
            _ = try #require(await strap.process.waitForLine { $0 == "pmd-hold" })
            let accEnded = Mutex(false)
            let acc = Task {
                defer { accEnded.withLock { $0 = true } }
                try await adapter.startWaveform(WaveformRequest(kind: .acc, sampleRate: 50, range: 4), for: sensor)
            }
            _ = try #require(await strap.process.waitForLine { $0 == "held 02 02" }, "the ACC START held")
            // Past ECG's deadline, well before ACC's own.
            clock.advance(by: 1.5)
            try strap.send("pmd-release")
            _ = try #require(await strap.process.waitForLine { $0 == "pmd-release 1" })
            // The START ends with its answer; were the answer lost, only its own deadline (on this
            // clock) would end it: moved there, so a lost answer fails the test instead of hanging it.
            do {
                try await eventually("the ACC START to end with its answer") { accEnded.withLock { $0 } }
            } catch {
                Issue.record(error)
                clock.advance(by: 10)
            }
            let result = await acc.result
            if case .failure(let error) = result { Issue.record("ACC START failed: \(error)") }
            await log.wait("acceleration frames", timeout: .seconds(60)) { _ in waveforms(log, .acc).count >= 2 }
        }
    }

    @Test("A dropped link is a gap: the adapter starts the stream again after the reconnect")
    func reconnect() async throws {
        try await withPMDStrap(mtu: 232) { adapter, strap, log, sensor, bed in
            try await adapter.startWaveform(WaveformRequest(kind: .ecg), for: sensor)
            await log.wait("3 ECG frames", timeout: .seconds(60)) { _ in waveforms(log, .ecg).count >= 3 }
            // The strap ends its streams with the link; BlueZoo 1.0.2 does not carry a peripheral-side
            // drop to the central, so the harness drops it there (what bluetoothd shows on a lost link).
            try strap.send("pmd-reset")
            _ = try #require(await strap.process.waitForLine { $0 == "pmd-reset" })
            let radio = try await DBusConnection.connect(bus: .address(bed.bus.address), logger: testLogger)
            _ = try await radio.call(
                destination: "org.bluez", path: "/org/bluez/hci0/dev_00_00_00_00_00_02", interface: "org.bluez.Device1",
                member: "Disconnect")
            await radio.close()
            await log.waitUntilReady(sensor, times: 2, "the strap to be back")
            _ = try #require(
                await strap.process.waitForLine { _ in
                    strap.process.output.filter { $0 == "pmd-start ecg 130" }.count >= 2
                }, "a second START after the reconnect")
            let before = waveforms(log, .ecg).count
            await log.wait("ECG after the reconnect", timeout: .seconds(60)) { _ in
                waveforms(log, .ecg).count >= before + 3
            }
            let frames = waveforms(log, .ecg)
            let breaks = frames.indices.dropFirst().filter { !frames[$0].continuous }
            #expect(breaks.count == 1, "one run before, one after")
        }
    }

    @Test("`hrbridge monitor --ecg --acc --json`: compact frames as documented, the strap's samples, STOP at the end")
    func monitorCommand() async throws {
        try await withBlueZoo(adapters: [Self.central, Self.strapAddress]) { bed in
            let strap = try await bed.startStrap(
                address: Self.strapAddress, frames: strapFrames(150), interval: 0.5, name: "Polar H10 0A1B2C3D",
                more: ["--pmd", "--mtu", "232"])
            let monitor = try Spawned(
                Self.binary,
                [
                    "monitor", "--adapter", "hci0", "--json", "--ecg", "--acc", "--acc-rate", "25", "--edf",
                    bed.bus.directory.appendingPathComponent("run").path, Self.strapAddress,
                ],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address], label: "monitor")
            defer { monitor.stop() }
            // Runs until 8 ECG and 3 acceleration frames are out, then is interrupted as a user would.
            _ = await monitor.waitForLine { _ in
                monitor.output.filter { $0.hasPrefix(#"{"kind":"ecg""#) }.count >= 8
                    && monitor.output.filter { $0.hasPrefix(#"{"kind":"acc""#) }.count >= 3
            }
            kill(monitor.pid, SIGINT)
            let stats = await monitor.waitForLine { $0.contains("\"event\":\"stats\"") }
            #expect(stats != nil, "monitor never finished: \(monitor.output.suffix(5))")
            let objects = monitor.output.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            let ecg = objects.filter { $0["kind"] as? String == "ecg" }
            let first = try #require(ecg.first)
            #expect(
                Set(first.keys) == [
                    "kind", "sensor", "time", "t0", "interval", "rate", "continuous", "sensorTimestamp", "unit",
                    "values",
                ])
            #expect(first["rate"] as? Int == 130 && first["unit"] as? String == "uV")
            let values = ecg.flatMap { ($0["values"] as? [Int]) ?? [] }
            #expect(values == (0..<values.count).map { Int(fixtureECG($0)) })
            let acc = try #require(objects.first { $0["kind"] as? String == "acc" })
            #expect((acc["x"] as? [Int])?.prefix(3) == [0, 1, 2] && (acc["z"] as? [Int])?.first == 1000)
            #expect(objects.contains { $0["event"] as? String == "waveforms" && $0["detail"] as? String == "ecg,acc" })
            let statistics = try #require(objects.last?["sensors"] as? [String: [String: Any]])
            #expect((statistics[Self.strapAddress]?["waveformFrames"] as? Int ?? 0) >= 11)
            // The EDF+ file, read by pyEDFlib: whole seconds of the strap's ECG, every value.
            let edf = bed.bus.directory.appendingPathComponent("run-00-00-00-00-00-02-ecg.edf").path
            #expect(monitor.output.contains { $0.hasPrefix("hrbridge: wrote \(edf) (") }, "\(monitor.output.suffix(4))")
            let reader = try Spawned(
                venvPython, [packageRoot.appendingPathComponent("Tests/Fixtures/edf/read.py").path, edf],
                label: "pyedflib")
            _ = await reader.wait()
            let read = try #require(
                reader.output.first { $0.hasPrefix("{") }.flatMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }, "\(reader.report)")
            let signal = try #require((read["signals"] as? [[String: Any]])?.first)
            #expect(signal["label"] as? String == "ECG" && signal["unit"] as? String == "uV")
            #expect(signal["frequency"] as? Double == 130)
            let edfValues = (signal["values"] as? [Double] ?? []).map { Int($0) }
            #expect(edfValues.count == values.count / 130 * 130 && !edfValues.isEmpty)
            #expect(edfValues == Array(values.prefix(edfValues.count)))
            // The strap's battery: both streams stopped as the monitor ended.
            #expect(await strap.process.waitForLine { $0 == "written 5c81 0300" } != nil)
            #expect(await strap.process.waitForLine { $0 == "written 5c81 0302" } != nil)
            // Every frame the strap sent is printed, the one it sent as STOP arrived too.
            _ = await strap.process.waitForLine { $0 == "pmd-stop acc" }
            let sent = strap.process.output.filter { $0.hasPrefix("pmd-frame ecg ") }.count
            #expect(ecg.count == sent, "printed \(ecg.count) of \(sent) ECG frames")
        }
    }

    @Test("`hrbridge monitor --ecg --lsl`: the strap's ECG reaches a pylsl inlet, every sample in order")
    func monitorToLSL() async throws {
        try await withBlueZoo(adapters: [Self.central, Self.strapAddress]) { bed in
            _ = try await bed.startStrap(
                address: Self.strapAddress, frames: strapFrames(150), interval: 0.5, name: "Polar H10 0A1B2C3D",
                more: ["--pmd", "--mtu", "232"])
            let lslConfig = bed.bus.directory.appendingPathComponent("lsl_api.cfg")
            try Data("[multicast]\nResolveScope = machine\n[lab]\nKnownPeers = {127.0.0.1}\n".utf8).write(to: lslConfig)
            let library = packageRoot.appendingPathComponent(".venv/lib/python3.11/site-packages/pylsl/lib/liblsl.so")
            let environment = [
                "DBUS_SYSTEM_BUS_ADDRESS": bed.bus.address, "LSLAPICFG": lslConfig.path,
                "HRBRIDGE_LIBLSL": library.path,
            ]
            let monitor = try Spawned(
                Self.binary, ["monitor", "--adapter", "hci0", "--ecg", "--lsl", Self.strapAddress],
                environment: environment, label: "monitor")
            defer { monitor.stop() }
            let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "hrbridge"
            let inlet = try Spawned(
                venvPython,
                [
                    packageRoot.appendingPathComponent("Tests/Fixtures/lsl/pull.py").path,
                    "hrbridge:\(host):\(Self.strapAddress):ecg", "300",
                ],
                environment: environment, label: "pylsl inlet")
            defer { inlet.stop() }
            let line = await inlet.waitForLine(timeout: .seconds(120)) { $0.contains(#""event": "samples""#) }
            let object = try #require(
                line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
                "\(inlet.report) \(monitor.report)")
            let values = ((object["values"] as? [[Double]]) ?? []).map { Int32($0[0]) }
            let timestamps = (object["timestamps"] as? [Double]) ?? []
            #expect(values.count == 300)
            // The inlet joins mid-stream: the samples it gets are a run of the strap's, in order.
            let offset = (0..<2000).first { candidate in
                values.indices.allSatisfy { values[$0] == fixtureECG(candidate + $0) }
            }
            #expect(offset != nil, "\(values.prefix(5))")
            let steps = zip(timestamps, timestamps.dropFirst()).map { $1 - $0 }
            #expect(steps.allSatisfy { abs($0 - 1 / 130) < 0.0021 }, "\(steps.min() ?? 0)…\(steps.max() ?? 0)")
        }
    }
}
