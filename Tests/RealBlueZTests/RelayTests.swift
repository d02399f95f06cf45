import Foundation
import Testing

/// A Heart Rate Measurement (0x2A37) value as an app receives it, decoded from its bytes.
struct HeartRateValue: Equatable, CustomStringConvertible {
    let heartRate: Int
    /// Flags bits 1–2: contact supported, contact detected.
    let contact: Int
    let energy: Int?
    /// RR intervals in 1/1024 s, as on the wire.
    let rr: [Int]
    /// Bytes without energy expended, with the heart rate as wide as the strap sent it.
    let sizeWithoutEnergy: Int
    let size: Int

    /// nil when the bytes are not a well-formed value (hrbridge refuses such a frame).
    init?(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        guard bytes.count >= 2 else { return nil }
        let flags = bytes[0]
        var at = 1
        if flags & 0x01 != 0 {
            guard bytes.count >= 3 else { return nil }
            heartRate = Int(bytes[1]) | Int(bytes[2]) << 8
            at = 3
        } else {
            heartRate = Int(bytes[1])
            at = 2
        }
        let rateEnd = at
        if flags & 0x08 != 0 {
            guard bytes.count >= at + 2 else { return nil }
            energy = Int(bytes[at]) | Int(bytes[at + 1]) << 8
            at += 2
        } else {
            energy = nil
        }
        let rest = Array(bytes[at...])
        if flags & 0x10 != 0 {
            guard rest.count % 2 == 0 else { return nil }
            rr = stride(from: 0, to: rest.count, by: 2).map { Int(rest[$0]) | Int(rest[$0 + 1]) << 8 }
        } else {
            guard rest.isEmpty else { return nil }
            rr = []
        }
        contact = Int(flags >> 1) & 0x03
        size = bytes.count
        sizeWithoutEnergy = rateEnd + 2 * rr.count
    }

    var description: String { "HR \(heartRate) contact \(contact) EE \(energy.map(String.init) ?? "-") RR \(rr)" }
}

/// What one scenario's app (bed.py's `App`: a Bumble central) recorded.
struct AppRecord {
    let facts: [String: Any]

    var name: String { facts["name"] as? String ?? "?" }

    /// Notifications of 0x2A37 received in a phase of the scenario, as hex.
    func received(_ phase: String) -> [String] {
        (facts["received"] as? [[String: Any]] ?? []).filter { $0["phase"] as? String == phase }
            .compactMap { $0["hex"] as? String }
    }

    var advertisements: [[String: Any]] { facts["advertisements"] as? [[String: Any]] ?? [] }
    var disconnections: [[String: Any]] { facts["disconnections"] as? [[String: Any]] ?? [] }
    /// Disconnections the app did not ask for.
    var dropped: [[String: Any]] { disconnections.filter { $0["byApp"] as? Bool != true } }
    var connections: Int { facts["connections"] as? Int ?? 0 }
    var services: [String] { facts["services"] as? [String] ?? [] }
    var characteristics: [String] { facts["characteristics"] as? [String] ?? [] }
}

extension ScenarioOutput {
    var apps: [AppRecord] { (result["apps"] as? [[String: Any]] ?? []).map(AppRecord.init) }

    /// A part of the scenario as bed.py recorded it (frames sent and whether each app got its count).
    func phase(_ name: String) -> [String: Any] { result[name] as? [String: Any] ?? [:] }

    /// The relay's `peripheral` lines.
    func peripheralLines(_ name: String = "relay") -> [[String: Any]] {
        lines(name).filter { $0["event"] as? String == "peripheral" }
    }

    func stats(_ name: String = "relay") -> [String: Any]? {
        lines(name).last { $0["event"] as? String == "stats" }
    }

    /// `hrbridge doctor --json`: its checks by name.
    func doctorChecks(_ name: String = "doctor") -> [String: [String: Any]] {
        let data = Data(text("\(name).out").utf8)
        let checks = (try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? lines(name)
        return Dictionary(checks.compactMap { check in (check["name"] as? String).map { ($0, check) } }) { first, _ in
            first
        }
    }
}

/// `hrbridge relay` and the daemon's `[peripheral]` against real bluetoothd 5.66 and the kernel's
/// HCI path (Tests/Fixtures/real-bluez): hrbridge holds a Bumble strap as a central and serves the
/// Heart Rate service to Bumble "apps" (centrals) through GattManager1 and LEAdvertisingManager1.
/// Frames are compared as the bytes the apps received: heart rate, contact bits and RR intervals
/// exact to 1/1024 s.
@Suite(.serialized, .enabled("needs QEMU (make test-setup installs it)") { RealBlueZBed.runs() })
struct RelayTests {
    /// A generous bound on a frame's trip strap → app (or WebSocket) under TCG, where the whole
    /// guest is emulated: typical trips are tens of milliseconds; a frame held this long was
    /// stalled, not slow.
    static let latencyBound = 5.0

    /// The app got every well-formed frame of `sent` exactly once, in order: same heart rate,
    /// contact bits and RR intervals; no energy expended unless `energy`; a frame too long for
    /// 20 bytes as two notifications whose RR intervals together are the frame's; nothing else.
    private func expectRelayed(
        _ sent: [String], _ got: [String], energy: Bool = false, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let expected = sent.compactMap(HeartRateValue.init(hex:))
        let values = got.map(HeartRateValue.init(hex:))
        #expect(!expected.isEmpty, "\(what): the strap sent nothing", sourceLocation: sourceLocation)
        #expect(
            values.allSatisfy { $0 != nil }, "\(what): malformed notifications \(got)", sourceLocation: sourceLocation)
        let received = values.compactMap { $0 }
        #expect(
            received.allSatisfy { $0.size <= 20 }, "\(what): a notification over 20 bytes: \(got)",
            sourceLocation: sourceLocation)
        if !energy {
            #expect(
                received.allSatisfy { $0.energy == nil }, "\(what): energy expended passed on: \(got)",
                sourceLocation: sourceLocation)
        }
        var index = 0
        for frame in expected {
            guard index < received.count else {
                Issue.record(
                    "\(what): \(frame) and what follows never arrived; got \(received)", sourceLocation: sourceLocation)
                return
            }
            let first = received[index]
            #expect(
                first.heartRate == frame.heartRate && first.contact == frame.contact,
                "\(what): notification \(index) is \(first), expected \(frame); got \(received)",
                sourceLocation: sourceLocation)
            if energy {
                #expect(
                    first.energy == frame.energy, "\(what): energy of \(frame) arrived as \(first)",
                    sourceLocation: sourceLocation)
            }
            var rr = first.rr
            var parts = 1
            index += 1
            while rr.count < frame.rr.count, index < received.count, received[index].heartRate == frame.heartRate,
                frame.rr.starts(with: rr + received[index].rr)
            {
                rr += received[index].rr
                parts += 1
                index += 1
            }
            #expect(rr == frame.rr, "\(what): RR of \(frame) arrived as \(rr)", sourceLocation: sourceLocation)
            if frame.sizeWithoutEnergy > 20 {
                #expect(
                    parts == 2, "\(what): \(frame) (\(frame.sizeWithoutEnergy) bytes) came in \(parts) parts",
                    sourceLocation: sourceLocation)
            } else {
                #expect(parts == 1, "\(what): \(frame) came in \(parts) parts", sourceLocation: sourceLocation)
            }
        }
        #expect(
            index == received.count, "\(what): more than was sent: \(received[min(index, received.count)...])",
            sourceLocation: sourceLocation)
    }

    private func sent(_ output: ScenarioOutput, _ phase: String) -> [String] {
        output.phase(phase)["sent"] as? [String] ?? []
    }

    /// The advertisement an app found: 0x180D in its service UUIDs (the advertising data proper,
    /// which apps filtering scans by UUID read), appearance 0x0341 and the name anywhere in it.
    private func expectAdvertisement(
        _ advertisement: [String: Any]?, name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let advertising = advertisement?["advertising"] as? [String: Any] ?? [:]
        let response = advertisement?["scanResponseFields"] as? [String: Any] ?? [:]
        #expect(
            (advertising["serviceUUIDs"] as? [String] ?? []).contains("180D"),
            "advertising data: \(advertisement ?? [:])",
            sourceLocation: sourceLocation)
        let appearance = advertising["appearance"] as? Int ?? response["appearance"] as? Int
        #expect(appearance == 0x0341, "appearance: \(advertisement ?? [:])", sourceLocation: sourceLocation)
        let advertised = advertising["name"] as? String ?? response["name"] as? String
        #expect(advertised == name, "name: \(advertisement ?? [:])", sourceLocation: sourceLocation)
    }

    /// The services an app found behind the advertisement, and 0x2A38 read as 1 (chest).
    private func expectServices(
        _ app: AppRecord, energy: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            Set(app.services).isSuperset(of: ["180D", "180F", "180A"]), "\(app.name): \(app.services)",
            sourceLocation: sourceLocation)
        #expect(
            Set(app.characteristics).isSuperset(of: ["2A37", "2A38", "2A19"]), "\(app.name): \(app.characteristics)",
            sourceLocation: sourceLocation)
        #expect(
            app.characteristics.contains("2A39") == energy,
            "\(app.name): control point with energy \(energy): \(app.characteristics)", sourceLocation: sourceLocation)
        #expect(
            app.facts["location"] as? String == "01", "\(app.name): 0x2A38 read \(app.facts["location"] ?? "nothing")",
            sourceLocation: sourceLocation)
    }

    /// Latencies bed.py measured: present, positive, under the generous bound.
    private func expectLatency(
        _ summary: Any?, count: Int, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let facts = summary as? [String: Any] ?? [:]
        #expect(
            facts["count"] as? Int == count, "\(what): \(facts["count"] ?? "no") latencies of \(count) frames",
            sourceLocation: sourceLocation)
        let p50 = (facts["p50"] as? NSNumber)?.doubleValue ?? -1
        let p99 = (facts["p99"] as? NSNumber)?.doubleValue ?? -1
        #expect(p50 > 0 && p99 >= p50, "\(what): p50 \(p50) s, p99 \(p99) s", sourceLocation: sourceLocation)
        #expect(p99 < Self.latencyBound, "\(what): p99 \(p99) s", sourceLocation: sourceLocation)
    }

    private func index(_ lines: [[String: Any]], after start: Int = 0, where predicate: ([String: Any]) -> Bool) -> Int?
    {
        guard start < lines.count else { return nil }
        return lines[start...].firstIndex(where: predicate)
    }

    @Test(
        "relay on two adapters: placed on hci1, two apps get every frame once in order (HR, contact, RR exact), a long one split; an app rejoins; 4 Hz latency and CPU"
    )
    func relayTwoAdapters() async throws {
        let output = try await RealBlueZBed.checkedOutput("relay")
        let result = output.result
        let strap = "C1:00:00:00:00:10"
        #expect(result["exit"] as? Int == 0, "\(output.text("relay.err").suffix(2_000))")
        let peripheral = output.peripheralLines()
        let placed = try #require(peripheral.first, "no peripheral line: \(output.text("relay.out").prefix(2_000))")
        #expect(placed["state"] as? String == "placed")
        #expect(placed["adapter"] as? String == "hci1", "placed: \(placed)")
        #expect((placed["detail"] as? String)?.contains("hci0") == true, "the strap's adapter is not said: \(placed)")
        #expect(peripheral.allSatisfy { $0["adapter"] as? String == "hci1" && $0["time"] is String })
        let states = peripheral.compactMap { $0["state"] as? String }
        #expect(
            states.contains("registered") && states.contains("advertising") && states.contains("notifying"), "\(states)"
        )
        #expect(!states.contains("failed"), "\(peripheral)")

        let apps = output.apps
        try #require(apps.count == 2)
        for app in apps {
            expectAdvertisement(app.advertisements.first, name: "hrbridge Relay")
            expectServices(app)
        }
        let first = sent(output, "first")
        #expect(first == RealBlueZBed.relayFrames, "the strap sent \(first)")
        for app in apps {
            expectRelayed(first, app.received("first"), "\(app.name), first")
        }
        // App 2 left and came back: it found the advertisement again and got the next frames.
        let rejoined = apps[1]
        #expect(rejoined.connections == 2 && rejoined.advertisements.count == 2)
        expectAdvertisement(rejoined.advertisements.last, name: "hrbridge Relay")
        #expect(rejoined.disconnections.first?["byApp"] as? Bool == true)
        let second = sent(output, "second")
        #expect(second == RealBlueZBed.frames.map(\.hex))
        for app in apps {
            expectRelayed(second, app.received("second"), "\(app.name), after the rejoin")
            #expect(app.dropped.isEmpty, "\(app.name) lost its link: \(app.dropped)")
        }
        #expect(apps[0].connections == 1)

        // 120 frames at 4 Hz to both apps.
        let latency = sent(output, "latency")
        #expect(latency.count == 120)
        for app in apps {
            expectRelayed(latency, app.received("latency"), "\(app.name), 4 Hz")
        }
        expectLatency(result["latencySeconds"], count: 240, "strap → app")
        let cpu = result["cpu"] as? [String: Any] ?? [:]
        let seconds = (cpu["seconds"] as? NSNumber)?.doubleValue ?? -1
        let window = (cpu["windowSeconds"] as? NSNumber)?.doubleValue ?? 0
        #expect(seconds >= 0 && window >= 29, "relay CPU: \(cpu)")

        // What hrbridge counted: every frame in, the malformed ones refused, nothing else.
        let stats = try #require(output.stats(), "no stats line")
        let counters = (stats["sensors"] as? [String: Any])?[strap] as? [String: Any]
        let deliverable = (first + second + latency).compactMap(HeartRateValue.init(hex:)).count
        #expect(counters?["framesDecoded"] as? Int == deliverable, "\(stats)")
        #expect(counters?["framesRejected"] as? Int == 2, "\(stats)")
        let served = try #require(stats["peripheral"] as? [String: Any], "stats: \(stats)")
        #expect(served["adapter"] as? String == "hci1")
        // Printed once the relay has unregistered on the way out: both say so then.
        #expect(served["registered"] is Bool && served["advertising"] is Bool, "\(served)")
        #expect((served["framesSent"] as? Int ?? 0) >= deliverable, "\(served)")
        #expect(
            served["framesDropped"] is Int && served["refusedWrites"] as? Int == 0
                && served["connectedCentrals"] is Int, "\(served)")
        let measurements = output.measurements("relay", sensor: strap)
        #expect(measurements.count == deliverable)

        // bluetoothd as Debian ships it lists no "central-peripheral" (5.66 adds it only when
        // KernelExperimental names the feature), so doctor cannot promise both roles on one adapter.
        let roles = result["roles"] as? [String: Any] ?? [:]
        #expect(roles["hci0"] as? [String] == ["central", "peripheral"], "\(roles)")
        let checks = output.doctorChecks()
        for adapter in ["hci0", "hci1"] {
            let detail = checks["peripheral \(adapter)"]?["detail"] as? String ?? ""
            #expect(
                detail.contains("roles"), "doctor's peripheral \(adapter): \(checks["peripheral \(adapter)"] ?? [:])")
            #expect(!detail.contains("central-peripheral"), "peripheral \(adapter): \(detail)")
        }
    }

    @Test(
        "relay --energy on one adapter that can be central and peripheral at once: energy and the control point; the strap goes away and back, the app stays connected and gets the rest"
    )
    func relayOneAdapter() async throws {
        let output = try await RealBlueZBed.checkedOutput("relay1")
        let result = output.result
        let strap = "C1:00:00:00:00:11"
        #expect(result["exit"] as? Int == 0, "\(output.text("relay.err").suffix(2_000))")
        let roles = result["roles"] as? [String: Any] ?? [:]
        #expect((roles["hci0"] as? [String])?.contains("central-peripheral") == true, "the bed's bluetoothd: \(roles)")
        #expect(output.peripheralLines().first?["state"] as? String == "placed")
        #expect(output.peripheralLines().allSatisfy { $0["adapter"] as? String == "hci0" })
        let app = try #require(output.apps.first)
        expectAdvertisement(app.advertisements.first, name: "hrbridge One")
        expectServices(app, energy: true)
        let half = RealBlueZBed.frames.count / 2
        #expect(sent(output, "first") == RealBlueZBed.frames[..<half].map(\.hex))
        #expect(sent(output, "second") == RealBlueZBed.frames[half...].map(\.hex))
        // --energy: energy expended passes on; the control point resets it (0x01) and refuses
        // anything else with ATT error 0x80.
        expectRelayed(sent(output, "first"), app.received("first"), energy: true, "before the strap went away")
        expectRelayed(sent(output, "second"), app.received("second"), energy: true, "after it came back")
        let controlPoint = result["controlPoint"] as? [String: Any] ?? [:]
        #expect(controlPoint["reset"] as? String == "ok", "\(controlPoint)")
        #expect(controlPoint["other"] as? Int == 0x80, "\(controlPoint)")
        let states = output.peripheralLines().compactMap { $0["state"] as? String }
        #expect(
            states.filter { $0 == "energyReset" }.count == 1 && states.filter { $0 == "refusedWrite" }.count == 1,
            "\(states)")
        let served = (output.stats()?["peripheral"] as? [String: Any]) ?? [:]
        #expect(served["refusedWrites"] as? Int == 1, "\(served)")
        #expect(app.connections == 1 && app.dropped.isEmpty, "the app lost its link: \(app.disconnections)")
        let lines = output.lines("relay")
        #expect(lines.contains { $0["event"] as? String == "disconnected" && $0["sensor"] as? String == strap })
        #expect(lines.filter { $0["event"] as? String == "connected" && $0["sensor"] as? String == strap }.count == 2)
        #expect(!output.peripheralLines().contains { $0["state"] as? String == "failed" })
    }

    @Test(
        "relay --simulate: the app gets the simulator's frames, equal (HR, RR) to the relay's own measurement lines, in order"
    )
    func relaySimulated() async throws {
        let output = try await RealBlueZBed.checkedOutput("relaysim")
        let result = output.result
        #expect(result["exit"] as? Int == 0, "\(output.text("relay.err").suffix(2_000))")
        #expect(result["endedByItself"] as? Bool == true, "--duration did not end it")
        let app = try #require(output.apps.first)
        expectAdvertisement(app.advertisements.first, name: "hrbridge Sim")
        let got = app.received("first").compactMap(HeartRateValue.init(hex:))
        #expect(got.count == app.received("first").count)
        #expect(got.count >= 5, "the app got \(got.count) frames")
        #expect(got.allSatisfy { $0.energy == nil && $0.size <= 20 })
        // The relayed sensor's measurement lines, RR in 1/1024 s; the app's frames are a run of them.
        let lines = output.lines("relay").filter { $0["heartRate"] != nil }
        let sensors = Set(lines.compactMap { $0["sensor"] as? String })
        let matched = sensors.contains { sensor in
            let printed = lines.filter { $0["sensor"] as? String == sensor }.map { line in
                (
                    line["heartRate"] as? Int ?? -1,
                    (line["rrIntervals"] as? [Any] ?? []).compactMap {
                        ($0 as? NSNumber).map { Int(($0.doubleValue * 1024).rounded()) }
                    }
                )
            }
            guard got.count <= printed.count else { return false }
            return (0...(printed.count - got.count)).contains { start in
                zip(got, printed[start...]).allSatisfy { $0.heartRate == $1.0 && $0.rr == $1.1 }
            }
        }
        #expect(matched, "app: \(got); relay printed \(lines.count) measurement lines for \(sensors)")
        #expect(output.stats()?["peripheral"] is [String: Any])
    }

    @Test(
        "bluetoothd restarted under a running relay: registered and advertising again; the app reconnects and gets frames again"
    )
    func relayAcrossRestart() async throws {
        let output = try await RealBlueZBed.checkedOutput("relayrestart")
        let result = output.result
        #expect(result["exit"] as? Int == 0, "\(output.text("relay.err").suffix(2_000))")
        #expect(result["registeredAgain"] as? Bool == true, "\(output.peripheralLines())")
        #expect(result["advertisingAgain"] as? Bool == true, "\(output.peripheralLines())")
        #expect(result["notifyingAgain"] as? Bool == true, "\(output.peripheralLines())")
        let states = output.peripheralLines().compactMap { $0["state"] as? String }
        let firstAdvertising = try #require(states.firstIndex(of: "advertising"), "\(states)")
        let again = states[(firstAdvertising + 1)...]
        #expect(again.contains("registered") && again.contains("advertising"), "\(states)")
        if let registered = again.lastIndex(of: "registered"), let advertising = again.lastIndex(of: "advertising") {
            #expect(registered < advertising, "\(states)")
        }
        let app = try #require(output.apps.first)
        #expect(app.connections == 2, "\(app.disconnections)")
        #expect(app.dropped.count == 1, "the restart cut the app's link once: \(app.disconnections)")
        expectAdvertisement(app.advertisements.last, name: "hrbridge Restart")
        expectRelayed(sent(output, "first"), app.received("first"), "before the restart")
        expectRelayed(sent(output, "second"), app.received("second"), "after it")
    }

    @Test(
        "a controller without simultaneous roles: doctor says so beside hci0; the strap drops under a connected app → advertising stops, the app is let go, the strap is back, advertising again, the app reconnects and gets the rest"
    )
    func relayLimitedController() async throws {
        let output = try await RealBlueZBed.checkedOutput("relaylimited")
        let result = output.result
        let strap = "C1:00:00:00:00:12"
        #expect(result["doctorExit"] is Int)
        let roles = result["roles"] as? [String: Any] ?? [:]
        #expect((roles["hci0"] as? [String])?.contains("central-peripheral") == true, "\(roles)")
        #expect(roles["hci2"] as? [String] == ["central", "peripheral"], "\(roles)")
        let checks = output.doctorChecks()
        let limited = checks["peripheral hci2"]?["detail"] as? String ?? ""
        let capable = checks["peripheral hci0"]?["detail"] as? String ?? ""
        #expect(limited.contains("roles") && capable.contains("roles"), "doctor: \(checks.keys.sorted())")
        #expect(
            capable.contains("central-peripheral") && !limited.contains("central-peripheral"),
            "hci0: \(capable); hci2: \(limited)")
        #expect(limited != capable)

        #expect(result["exit"] as? Int == 0, "\(output.text("relay.err").suffix(2_000))")
        let app = try #require(output.apps.first)
        expectAdvertisement(app.advertisements.first, name: "hrbridge Limited")
        expectRelayed(sent(output, "first"), app.received("first"), "before the strap went away")
        // The fallback, in hrbridge's words and in order.
        let lines = output.lines("relay")
        let stopped = index(lines) {
            $0["event"] as? String == "peripheral" && $0["state"] as? String == "notAdvertising"
                && (($0["detail"] as? String)?.lowercased().contains("strap") == true
                    || ($0["detail"] as? String)?.contains(strap) == true)
        }
        let stoppedAt = try #require(stopped, "no notAdvertising line naming the strap: \(output.peripheralLines())")
        let reconnected = index(lines, after: stoppedAt) {
            $0["event"] as? String == "connected" && $0["sensor"] as? String == strap
        }
        let advertising = index(lines, after: reconnected ?? stoppedAt) {
            $0["event"] as? String == "peripheral" && $0["state"] as? String == "advertising"
        }
        #expect(reconnected != nil, "the strap was not reconnected after advertising stopped")
        #expect(advertising != nil, "no advertising after the strap came back: \(output.peripheralLines())")
        #expect(result["appLetGo"] as? Bool == true, "the app was not disconnected")
        #expect(app.dropped.count == 1, "\(app.disconnections)")
        #expect(result["strapBack"] as? Bool == true, "the strap never came back")
        #expect(app.connections == 2)
        expectRelayed(sent(output, "second"), app.received("second"), "after the app reconnected")
    }

    @Test(
        "daemon [peripheral] following the session: the app and a WebSocket client get every frame; /v1/health's peripheral object; latencies of both"
    )
    func daemonPeripheral() async throws {
        let output = try await RealBlueZBed.checkedOutput("relaydaemon")
        let result = output.result
        #expect(result["sensorReady"] as? Bool == true, "\(output.text("daemon.err").suffix(2_000))")
        #expect(
            result["advertising"] as? Bool == true,
            "health never said advertising; it said \((result["healthBefore"] as? [String: Any])?["peripheral"] ?? "no peripheral object")"
        )
        #expect(result["sessionStatus"] as? Int == 201)
        #expect(result["following"] as? Bool == true, "health never said notifying and following the strap")
        #expect(result["exit"] as? Int == 0)
        let app = try #require(output.apps.first)
        expectAdvertisement(app.advertisements.first, name: "hrbridge Daemon")
        expectServices(app)
        let first = sent(output, "first")
        let latency = sent(output, "latency")
        #expect(first == RealBlueZBed.frames.map(\.hex) && latency.count == 40)
        expectRelayed(first, app.received("first"), "the plan's frames")
        expectRelayed(latency, app.received("latency"), "4 Hz")
        // The WebSocket client, connected before the session: every frame, in order.
        let websocket = (result["websocketMeasurements"] as? [[String: Any]] ?? []).map {
            ($0["heartRate"] as? Int ?? -1, $0["rr"] as? [Int] ?? [])
        }
        let expected = (first + latency).compactMap(HeartRateValue.init(hex:)).map { ($0.heartRate, $0.rr) }
        #expect(
            websocket.map(\.0) == expected.map(\.0) && websocket.map(\.1) == expected.map(\.1), "/v1/ws: \(websocket)")
        expectLatency(result["latencyApp"], count: 40, "strap → app")
        expectLatency(result["latencyWebSocket"], count: 40, "strap → WebSocket")
        let health = try #require(result["health"] as? [String: Any])
        let peripheral = try #require(health["peripheral"] as? [String: Any], "health: \(health)")
        for key in [
            "adapter", "registered", "advertising", "reason", "notifying", "centrals", "source", "following",
            "sourceUp",
            "framesIn", "framesSent", "framesDropped", "refusedWrites", "alpha1",
        ] {
            #expect(peripheral.keys.contains(key), "no \(key) in \(peripheral)")
        }
        #expect(peripheral["adapter"] as? String == result["adapter"] as? String)
        #expect(
            peripheral["source"] as? String == "session" && peripheral["following"] as? String == "C1:00:00:00:00:14",
            "\(peripheral)")
        // Read while the session's strap streams (framesIn counts its frames).
        #expect(peripheral["sourceUp"] as? Bool == true, "the followed strap streams, yet: \(peripheral)")
        #expect(peripheral["notifying"] as? Bool == true && peripheral["centrals"] as? Int == 1, "\(peripheral)")
        #expect((peripheral["framesIn"] as? Int ?? 0) >= expected.count, "\(peripheral)")
        #expect(
            peripheral["registered"] as? Bool == true && peripheral["advertising"] as? Bool == true, "\(peripheral)")
        #expect((peripheral["framesSent"] as? Int ?? 0) >= expected.count, "\(peripheral)")
        #expect(peripheral["refusedWrites"] as? Int == 0)
    }
}
