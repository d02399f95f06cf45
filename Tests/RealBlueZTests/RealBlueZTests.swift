import BusHarness
import Foundation
import Testing

/// hrbridge against real bluetoothd 5.66 and the Linux kernel's HCI path, in a QEMU guest with
/// Bumble virtual controllers and straps (Tests/Fixtures/real-bluez). Every assertion is on
/// hrbridge's own output; the straps' side (frames sent, pairings) is the bed's record.
@Suite(.serialized, .enabled("needs QEMU (make test-setup installs it)") { RealBlueZBed.runs() })
struct RealBlueZTests {
    /// Every well-formed frame, in order, nothing else: no frame lost, none invented.
    private func expectAllFrames(
        _ got: [PlannedFrame], sent: Any?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let planned = RealBlueZBed.delivered
        #expect(
            sent as? Int == RealBlueZBed.frames.count, "\(what): the strap sent \(sent ?? "nothing")",
            sourceLocation: sourceLocation)
        #expect(got.map(\.heartRate) == planned.map(\.heartRate), "\(what)", sourceLocation: sourceLocation)
        #expect(got.map(\.rrIntervals) == planned.map(\.rrIntervals), "\(what)", sourceLocation: sourceLocation)
        #expect(got.map(\.energyExpended) == planned.map(\.energyExpended), "\(what)", sourceLocation: sourceLocation)
    }

    @Test("1. scan finds the strap with its name, RSSI and services, and not the decoy beside it")
    func scanFindsTheStrap() async throws {
        let output = try await RealBlueZBed.checkedOutput("scan")
        let result = output.result
        #expect(result["exit"] as? Int == 0, "\(output.text("scan.err"))")
        let lines = output.lines("scan")
        let found = try #require(
            lines.first { $0["event"] as? String == "found" && $0["address"] as? String == "C1:00:00:00:00:01" },
            "scan printed: \(output.text("scan.out"))")
        #expect(found["name"] as? String == "HRM-Scan 01")
        #expect(found["adapter"] as? String == "hci0")
        let rssi = try #require(found["rssi"] as? Int)
        #expect((-127...20).contains(rssi))
        #expect(Set(found["services"] as? [String] ?? []).isSuperset(of: ["heart-rate", "battery"]))
        #expect(!lines.contains { $0["address"] as? String == "C1:00:00:00:00:99" }, "the non-fitness decoy was listed")
    }

    @Test("2. monitor --json delivers every frame in order, through StartNotify and through AcquireNotify")
    func monitorDeliversEveryFrame() async throws {
        let output = try await RealBlueZBed.checkedOutput("monitor")
        let result = output.result
        let strap = "C1:00:00:00:00:02"
        for run in ["startnotify", "acquirenotify"] {
            let facts = result[run] as? [String: Any] ?? [:]
            #expect(facts["exit"] as? Int == 0, "\(run): \(output.text("\(run).err"))")
            expectAllFrames(output.measurements(run, sensor: strap), sent: facts["sent"], run)
            let stats = output.lines(run).last { $0["event"] as? String == "stats" }
            let counters = (stats?["sensors"] as? [String: Any])?[strap] as? [String: Any]
            #expect(counters?["framesDecoded"] as? Int == RealBlueZBed.delivered.count, "\(run)")
            #expect(counters?["framesRejected"] as? Int == 1, "\(run)")
            let refused = output.lines(run).filter { $0["event"] as? String == "frameRefused" }
            #expect(refused.map { $0["bytes"] as? String } == ["07 51"], "\(run)")
        }
    }

    @Test("3. pair bonds with a strap that requires it (Just Works); after a drop the bond is reused, no new pairing")
    func pairingIsReused() async throws {
        let output = try await RealBlueZBed.checkedOutput("pair")
        let result = output.result
        let strap = "C1:00:00:00:00:03"
        #expect(result["pairExit"] as? Int == 0, "\(output.text("pair.err"))")
        #expect(output.text("pair.out").contains("paired \(strap)"))
        // Notifications need an encrypted link on this strap: every frame arriving shows the bond works.
        expectAllFrames(output.measurements("monitor", sensor: strap), sent: result["sent"], "bonded strap")
        #expect(result["pairings"] as? Int == 1, "the strap was paired again instead of reusing the bond")
        #expect((result["encryptedConnections"] as? Int ?? 0) >= 2, "the reconnection was not encrypted")
        let lines = output.lines("monitor")
        #expect(lines.contains { $0["event"] as? String == "disconnected" && $0["detail"] as? String == "link lost" })
        #expect(lines.filter { $0["event"] as? String == "connected" }.count == 2)
        let device = output.lines("devices").first { $0["address"] as? String == strap }
        #expect(device?["paired"] as? Bool == true)
        #expect(device?["bonded"] as? Bool == true)
        #expect(device?["trusted"] as? Bool == true)
    }

    @Test("4. a strap out of range and back: reconnected within the policy, the gap reported, no frame invented")
    func strapComesBack() async throws {
        let output = try await RealBlueZBed.checkedOutput("away")
        let result = output.result
        let strap = "C1:00:00:00:00:04"
        expectAllFrames(output.measurements("monitor", sensor: strap), sent: result["sent"], "out of range and back")
        let lines = output.lines("monitor")
        #expect(lines.contains { $0["event"] as? String == "disconnected" && $0["detail"] as? String == "link lost" })
        #expect(lines.contains { $0["event"] as? String == "reconnecting" })
        let back = lines.first {
            $0["event"] as? String == "connected" && ($0["detail"] as? String)?.hasPrefix("after a") == true
        }
        #expect(back != nil, "no reconnection reported")
        let away = try #require(result["awaySeconds"] as? Double)
        let stats = lines.last { $0["event"] as? String == "stats" }
        let counters = try #require((stats?["sensors"] as? [String: Any])?[strap] as? [String: Any])
        #expect(counters["reconnects"] as? Int == 1)
        let gap = try #require(counters["longestGapSeconds"] as? Double)
        // The backoff is 0.5 s doubling: after `away` seconds of failures the next try comes within
        // about as long again (plus jitter); the strap is found by its first advertisement.
        #expect(gap >= away, "a gap shorter than the absence: \(gap) s")
        #expect(gap <= 2 * away + 2, "reconnected too late: \(gap) s after a \(away) s absence")
    }

    @Test("5. bluetoothd restarted mid-stream: monitor says so, and streaming resumes")
    func bluetoothdRestart() async throws {
        let output = try await RealBlueZBed.checkedOutput("restart")
        let result = output.result
        let strap = "C1:00:00:00:00:05"
        #expect(result["exit"] as? Int == 0)
        expectAllFrames(output.measurements("monitor", sensor: strap), sent: result["sent"], "across a restart")
        let states = output.lines("monitor").compactMap {
            $0["event"] as? String == "adapter" ? $0["state"] as? String : nil
        }
        let stopped = try #require(states.firstIndex(of: "serviceStopped"), "adapter states: \(states)")
        #expect(states[stopped...].contains("ready"), "adapter states: \(states)")
        #expect(output.lines("monitor").filter { $0["event"] as? String == "connected" }.count == 2)
    }

    @Test("6. two controllers, hci0 and hci1, a strap only in range of each: both stream, each through its own")
    func twoControllers() async throws {
        let output = try await RealBlueZBed.checkedOutput("adapters")
        let result = output.result
        #expect(result["exit"] as? Int == 0)
        let straps = try #require(result["straps"] as? [[String: Any]])
        #expect(straps.count == 2)
        let lines = output.lines("monitor")
        for strap in straps {
            let address = try #require(strap["address"] as? String)
            expectAllFrames(output.measurements("monitor", sensor: address), sent: strap["sent"], address)
            let connected = lines.first { $0["event"] as? String == "connected" && $0["sensor"] as? String == address }
            #expect(connected?["adapter"] as? String == strap["adapter"] as? String, "\(address)")
        }
    }

    @Test("7. hrbridged: a session over its API records the strap; the FIT export decodes with Garmin's SDK")
    func daemonRecordsAndExports() async throws {
        let output = try await RealBlueZBed.checkedOutput("daemon")
        let result = output.result
        #expect(result["sensorReady"] as? Bool == true, "\(output.text("daemon.err").suffix(2_000))")
        #expect(result["sessionStatus"] as? Int == 201)
        #expect(result["exit"] as? Int == 0)
        #expect(result["sent"] as? Int == RealBlueZBed.frames.count)
        let samples = try #require(
            try JSONSerialization.jsonObject(with: Data(output.text("samples.json").utf8)) as? [String: Any])
        let values = (samples["samples"] as? [[String: Any]] ?? []).compactMap { ($0["value"] as? NSNumber)?.intValue }
        #expect(values == RealBlueZBed.delivered.map(\.heartRate), "stored samples: \(samples)")
        #expect(result["exportStatus"] as? Int == 200)
        let decoded = try await garminDecode(fitFile: output.folder.appendingPathComponent("workout.fit"))
        #expect(decoded["isFit"] as? Bool == true)
        #expect(decoded["integrity"] as? Bool == true)
        #expect((decoded["errors"] as? [Any])?.isEmpty == true)
        let heartRates = (decoded["heartRates"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue }
        // One frame every 1.5 s: one FIT record (1 s resolution) each.
        #expect(heartRates == RealBlueZBed.delivered.map(\.heartRate), "FIT records: \(heartRates)")
    }

    @Test(
        "8. a strap that only broadcasts (Polar-style manufacturer data) is followed without a link: its first minute's readings heard in order, none twice, no attempt pausing the scan"
    )
    func broadcastFollowed() async throws {
        let output = try await RealBlueZBed.checkedOutput("broadcast")
        let result = output.result
        #expect(result["exit"] as? Int == 0, "\(output.text("monitor.err"))")
        #expect(result["firstHeard"] as? Bool == true, "the broadcast was never heard")
        #expect(result["connections"] as? Int == 0, "the strap only broadcasts")
        let strap = "C1:00:00:00:00:09"
        let lines = output.lines("monitor").filter { $0["sensor"] as? String == strap && $0["heartRate"] != nil }
        #expect(lines.allSatisfy { $0["via"] as? String == "advertisement" })
        #expect(lines.allSatisfy { ($0["rrIntervals"] as? [Any])?.isEmpty == true }, "no RR intervals in a broadcast")
        let heard = lines.compactMap { $0["heartRate"] as? Int }
        let sent = (result["rates"] as? [Int]) ?? []
        // The first reading (60) may be heard or missed while a connect attempt paused scanning.
        // The eleven sent every 5 s across the first minute after it: heard once each, in order,
        // none invented, and no attempt pauses scanning within that minute (one did for 30 s
        // before: 6 of 11 lost). One or two may be lost when the attempt called off at the first
        // hearing completes its link anyway (a race in the kernel seen under load: the strap
        // stops advertising while linked, for the 10 s its services do not resolve).
        #expect(sent.count == 11)
        let after = heard.filter { $0 != 60 }
        #expect(after == after.sorted() && Set(after).count == after.count, "heard \(heard)")
        #expect(Set(after).isSubset(of: sent), "nothing invented: heard \(heard)")
        #expect(after.count >= sent.count - 2, "heard \(heard) of \(sent)")
        #expect(!output.lines("monitor").contains { $0["event"] as? String == "connected" })
    }

    @Test(
        "9. the guest sees host paths under the folders it puts tmpfs on (/tmp, /root: a checkout there): hrbridge runs from /tmp"
    )
    func pathsUnderTmpfsFoldersStayVisible() async throws {
        let output = try await RealBlueZBed.checkedOutput("scan")
        let planned = try #require(RealBlueZBed.plannedHrbridge(output.folder.deletingLastPathComponent()))
        #expect(planned.hasPrefix("/tmp/"), "the plan's hrbridge is not under /tmp: \(planned)")
        #expect(output.result["exit"] as? Int == 0, "\(output.text("scan.err"))")
        #expect(output.lines("scan").contains { $0["event"] as? String == "found" }, "scan printed nothing")
    }

    @Test(
        "10. a second device broadcasting a configured strap's heart rate under its address: followed, but refused for sign-in with join_via = link; with join_via = broadcast it signs the athlete in"
    )
    func spoofedBroadcastDoesNotSignIn() async throws {
        let output = try await RealBlueZBed.checkedOutput("spoof")
        let result = output.result
        // Each run has a spoofer of its own address (bluetoothd remembers the first).
        let strap = "C1:00:00:00:00:0B"
        #expect(result["connections"] as? Int == 0, "the spoofer only broadcasts")
        // Default join_via (link): the daemon hears the spoofer's readings in the class, and nobody joins.
        let link = try #require(result["link"] as? [String: Any], "\(output.text("link.err").suffix(2_000))")
        #expect(link["exit"] as? Int == 0, "\(output.text("link.err").suffix(2_000))")
        #expect(link["classStatus"] as? Int == 201)
        let heard = link["heard"] as? [[String: Any]] ?? []
        #expect(heard.count >= 3, "readings heard after the class started: \(heard)")
        let sensor = link["sensor"] as? [String: Any]
        #expect(sensor?["via"] as? String == "advertisement", "\(sensor ?? [:])")
        let members = try #require(link["members"] as? [Any], "GET /v1/class: \(link["class"] ?? "nothing")")
        #expect(members.isEmpty, "the spoofed broadcast signed someone in: \(members)")
        let sessions = try #require(link["sessions"] as? [Any], "GET /v1/sessions: \(link["sessionsStatus"] ?? "")")
        #expect(sessions.isEmpty, "a session was started for the spoofed strap: \(sessions)")
        // The control: join_via = "broadcast" lets such a broadcast sign the athlete in.
        let broadcast = try #require(result["broadcast"] as? [String: Any])
        #expect(broadcast["exit"] as? Int == 0, "\(output.text("broadcast.err").suffix(2_000))")
        #expect(broadcast["classStatus"] as? Int == 201)
        let joined = (broadcast["members"] as? [[String: Any]] ?? []).filter { $0["sensor"] as? String == strap }
        #expect(joined.count == 1, "GET /v1/class: \(broadcast["class"] ?? "nothing")")
        #expect(joined.first?["athlete"] as? String == "ada")
        #expect(joined.first?["state"] as? String == "in")
        #expect((broadcast["sessions"] as? [Any])?.count == 1, "\(broadcast["sessions"] ?? "no sessions")")
    }
}
