import BusHarness
import Foundation
import Testing

/// hrbridge as a user installs it: the Debian package in a Debian 12 guest under systemd as PID 1,
/// with real D-Bus, bluetoothd and journald, and a Bumble strap (Tests/Fixtures/system). Each test
/// asserts on what the guest's driver saw in one scenario; the boots run once for all of them.
@Suite(.serialized, .enabled("needs the packages make test-system builds") { SystemBed.runs() })
struct SystemTests {
    private func dictionary(_ value: Any?) -> [String: Any] { value as? [String: Any] ?? [:] }

    @Test("1. lintian finds no error in the package; Depends is what the executables link")
    func lintianIsClean() async throws {
        let packages = try #require(SystemBed.packages)
        let lintian = try Spawned("/usr/bin/lintian", ["--allow-root", packages.installed.path], label: "lintian")
        let status = await lintian.wait(timeout: .seconds(600))
        let report = lintian.output.joined(separator: "\n")
        #expect(status == 0, "lintian: \(report)")
        #expect(!report.split(separator: "\n").contains { $0.hasPrefix("E:") }, "lintian: \(report)")
        let fields = try Spawned(
            "/usr/bin/dpkg-deb", ["--field", packages.installed.path, "Depends"], label: "dpkg-deb")
        _ = await fields.wait()
        for library in ["libdbus-1-3", "libbluetooth3", "libsqlite3-0", "libmosquitto1", "libc6"] {
            #expect(fields.output.joined().contains(library), "Depends: \(fields.output)")
        }
    }

    @Test("2. apt installs it: active after READY=1, enabled, as hrbridge with no capabilities, exposure ≤ 1.5")
    func installedServiceRuns() async throws {
        let (facts, _) = try await SystemBed.facts("install", boot: 1)
        #expect(dictionary(facts["apt"])["exit"] as? Int == 0, "\(dictionary(facts["apt"])["output"] ?? "")")
        let service = dictionary(facts["service"])
        #expect(service["active"] as? String == "active")
        #expect(service["enabled"] as? String == "enabled")
        #expect(facts["alias"] as? String == "active", "systemctl is-active hrbridged")
        #expect(service["user"] as? String == "hrbridge")
        let capabilities = dictionary(service["capabilities"])
        for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            #expect(capabilities[set] as? String == "0000000000000000", "\(set): \(capabilities)")
        }
        let exposure = (facts["security"] as? [String])?.first ?? ""
        let score = exposure.split(separator: " ").compactMap { Double($0) }.first
        #expect(score.map { $0 <= 1.5 } == true, "systemd-analyze security: \(exposure)")
        #expect((facts["userEntry"] as? String)?.hasPrefix("hrbridge:x:") == true)
        #expect((facts["userEntry"] as? String)?.hasSuffix(":/usr/sbin/nologin") == true)
        #expect(facts["config"] as? String == "640 root hrbridge")
        // Created by the daemon (running as hrbridge); the group is what lets members in.
        #expect(facts["socket"] as? String == "660 hrbridge hrbridge")
        #expect(facts["stateDirectory"] as? String == "700 hrbridge hrbridge")
        #expect(facts["manPages"] as? [Bool] == [true, true])
        #expect(facts["udevRule"] as? Bool == true)
        let journal = facts["journal"] as? [String] ?? []
        #expect(journal.contains { $0.contains("hrbridged ready") }, "journal: \(journal)")
        // The sandbox's system-call filter refuses nothing the runtime does at start (EPERM, errno 1).
        // A worker asking for a higher priority than the service may have gets EACCES (13) from
        // the kernel, as it should: no capability, no RLIMIT_NICE.
        #expect(
            !journal.contains { $0.contains("Failed to set thread priority") && $0.hasSuffix("errno=1") },
            "journal: \(journal)")
    }

    @Test("3. a member of the hrbridge group uses the socket; anyone else is told permission denied")
    func socketIsForTheGroup() async throws {
        let (facts, _) = try await SystemBed.facts("users", boot: 1)
        #expect((facts["member"] as? String)?.contains("(hrbridge)") == true)
        #expect(dictionary(facts["memberStatus"])["exit"] as? Int == 0, "\(facts["memberStatus"] ?? "")")
        let stranger = dictionary(facts["stranger"])
        #expect(stranger["exit"] as? Int == 77, "\(stranger)")
        #expect((stranger["output"] as? String)?.contains("permission denied on /run/hrbridge/api.sock") == true)
    }

    @Test("4. the member finds the strap and pairs it with the CLI; the running daemon follows it and it streams")
    func strapIsPairedAndReady() async throws {
        let (facts, _) = try await SystemBed.facts("pair", boot: 1)
        let scan = dictionary(facts["scan"])
        #expect(scan["exit"] as? Int == 0, "\(scan)")
        let found = (scan["found"] as? [[String: Any]])?.first
        #expect(found?["name"] as? String == "HRM-System 39", "\(scan)")
        #expect((found?["services"] as? [String])?.contains("heart-rate") == true, "\(scan)")
        #expect(dictionary(facts["pair"])["exit"] as? Int == 0, "\(facts["pair"] ?? "")")
        // No restart, no configuration: BlueZ's Paired signal is enough.
        #expect(facts["ready"] as? Bool == true, "states: \(facts["states"] ?? "")")
        #expect((facts["heartRate"] as? Int).map { (60..<180).contains($0) } == true, "\(facts["heartRate"] ?? "")")
        #expect(dictionary(facts["sensor"])["via"] as? String == "connection")
        let strap = dictionary(facts["strap"])
        #expect((strap["pairings"] as? Int ?? 0) >= 1, "\(strap)")
        #expect((strap["encrypted"] as? Int ?? 0) >= 1, "\(strap)")
    }

    @Test("5. hrbridge session start over the socket records heart rate")
    func sessionRecords() async throws {
        let (facts, _) = try await SystemBed.facts("session", boot: 1)
        #expect(dictionary(facts["start"])["exit"] as? Int == 0, "\(facts["start"] ?? "")")
        #expect(facts["session"] is String)
        #expect(facts["samples"] as? Int == 12)
    }

    @Test("6. systemctl restart bluetooth under the session: it goes on, the strap drops and comes back")
    func bluetoothRestartIsAGap() async throws {
        let (facts, _) = try await SystemBed.facts("restartBluetooth", boot: 1)
        #expect(dictionary(facts["restart"])["exit"] as? Int == 0)
        #expect(facts["resumed"] as? Bool == true, "messages: \(facts["messages"] ?? "")")
        #expect(facts["sessionState"] as? String == "running")
        let states = (facts["messages"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String == "sensor" }
            .compactMap { $0["state"] as? String }
        #expect(states.contains { $0 != "ready" }, "the strap never left ready: \(states)")
        #expect(states.last == "ready", "states: \(states)")
    }

    @Test("7. SIGKILL: systemd restarts the daemon, the session is recovered, at most 1 s of samples lost")
    func killedDaemonRecovers() async throws {
        let (facts, run) = try await SystemBed.facts("kill", boot: 1)
        let newPid = try #require(facts["newPid"] as? String, "never active again")
        #expect(newPid != facts["oldPid"] as? String)
        #expect(dictionary(facts["sessionAfter"])["state"] as? String == "running", "\(facts["sessionAfter"] ?? "")")
        #expect(facts["samplesAfter"] as? Int == 8)
        // Every frame the daemon had a second before the kill is stored.
        let killedAt = try #require((facts["killedAt"] as? NSNumber)?.doubleValue)
        let samples = try #require(
            try JSONSerialization.jsonObject(with: Data(run.text("samples.json").utf8)) as? [String: Any])
        let stored = (samples["samples"] as? [[String: Any]] ?? []).compactMap { sample -> Double? in
            guard let start = sample["start"] as? String else { return nil }
            return ISO8601DateFormatter.withFractions.date(from: start)?.timeIntervalSince1970
        }
        let lastBefore = try #require(stored.filter { $0 < killedAt }.max(), "no sample stored before the kill")
        let delivered = run.sentFrames.filter { $0.time < killedAt - 0.1 }
        let lost = delivered.filter { $0.time > lastBefore + 0.05 }
        #expect(Double(lost.count) * 0.25 <= 1.0, "lost \(lost.count) frames of 0.25 s before the kill at \(killedAt)")
    }

    @Test("8. a frozen daemon (SIGSTOP) stops its watchdog pings: systemd restarts it and it records again")
    func watchdogRestartsAFrozenDaemon() async throws {
        let (facts, _) = try await SystemBed.facts("watchdog", boot: 1)
        #expect(facts["watchdog"] as? String == "30s")
        let newPid = try #require(facts["newPid"] as? String, "never active again")
        #expect(newPid != facts["frozenPid"] as? String)
        let journal = facts["journal"] as? [String] ?? []
        #expect(journal.contains { $0.contains("Watchdog timeout") }, "journal: \(journal)")
        #expect(facts["samplesAfter"] as? Int == 8)
    }

    @Test("9. systemctl stop ends the session saved")
    func stopSavesTheSession() async throws {
        let (facts, _) = try await SystemBed.facts("stop", boot: 1)
        #expect(dictionary(facts["stop"])["exit"] as? Int == 0)
        #expect(facts["result"] as? String == "success")
        #expect(facts["active"] as? String == "inactive")
        let session = try #require(try await SystemBed.facts("session", boot: 1).facts["session"] as? String)
        let workouts = facts["workouts"] as? [[String: Any]] ?? []
        #expect(
            workouts.contains { ($0["id"] as? String)?.lowercased() == session.lowercased() },
            "stored: \(facts["workouts"] ?? "")")
    }

    @Test("10. after a reboot: started by itself, the store and the bond kept, the strap streams without pairing")
    func rebootKeepsEverything() async throws {
        let (facts, run) = try await SystemBed.facts("reboot", boot: 2)
        #expect(facts["startedBySystemd"] as? Bool == true)
        let service = dictionary(facts["service"])
        #expect(service["active"] as? String == "active")
        #expect(service["enabled"] as? String == "enabled")
        let bond = facts["bond"] as? [String] ?? []
        #expect(bond.contains { $0.contains("Paired: yes") }, "\(bond)")
        #expect(bond.contains { $0.contains("Bonded: yes") }, "\(bond)")
        #expect(facts["ready"] as? Bool == true)
        let session = try #require(try await SystemBed.facts("session", boot: 1).facts["session"] as? String)
        let workouts = dictionary(dictionary(facts["workouts"])["body"])["workouts"] as? [[String: Any]] ?? []
        #expect(
            workouts.contains { ($0["id"] as? String)?.lowercased() == session.lowercased() },
            "\(facts["workouts"] ?? "")")
        #expect(dictionary(facts["session"])["exit"] as? Int == 0, "\(facts["session"] ?? "")")
        #expect(facts["samples"] as? Int == 8)
        let strap = dictionary(facts["strap"])
        #expect(strap["pairings"] as? Int == 0, "paired again: \(strap)")
        #expect((strap["encrypted"] as? Int ?? 0) >= 1, "\(strap)")
        #expect(facts["export"] as? Int == 200)
        let decoded = try await garminDecode(fitFile: run.folder.appendingPathComponent("workout.fit"))
        #expect(decoded["isFit"] as? Bool == true)
        #expect(decoded["integrity"] as? Bool == true)
        #expect((decoded["errors"] as? [Any])?.isEmpty == true)
        // One record a second while the strap streamed (the scenarios keep it short), each a rate
        // the strap sent; the kill and the frozen daemon are gaps, not invented records.
        let rates = (decoded["heartRates"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue }
        #expect(rates.count >= 10, "\(decoded)")
        #expect(rates.allSatisfy { (60..<180).contains($0) }, "\(rates)")
        let times = (decoded["timestamps"] as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue }
        #expect(zip(times, times.dropFirst()).contains { $1 - $0 >= 5 }, "no gap in \(times)")
    }

    @Test("11. apt upgrades it: the new version runs; the store, the admin's configuration and the bond are kept")
    func upgradeKeepsData() async throws {
        let (facts, _) = try await SystemBed.facts("upgrade", boot: 2)
        let packages = try #require(SystemBed.packages)
        #expect(dictionary(facts["apt"])["exit"] as? Int == 0, "\(dictionary(facts["apt"])["output"] ?? "")")
        let newVersion = packages.upgrade.lastPathComponent.split(separator: "_")[1]
        #expect(facts["version"] as? String == String(newVersion))
        let service = dictionary(facts["service"])
        #expect(service["active"] as? String == "active")
        #expect(service["pid"] as? String != facts["oldPid"] as? String, "not restarted on the new executable")
        #expect((facts["workoutsBefore"] as? Int ?? 0) >= 2)
        #expect(facts["workoutsAfter"] as? Int == facts["workoutsBefore"] as? Int)
        #expect(facts["configEdited"] as? Bool == true)
        #expect(facts["config"] as? String == "640 root hrbridge")
        #expect(facts["bond"] as? Bool == true)
    }

    @Test("12. apt remove keeps the store and the configuration; apt purge deletes them")
    func purgeRemovesData() async throws {
        let (facts, _) = try await SystemBed.facts("purge", boot: 2)
        #expect(dictionary(facts["remove"])["exit"] as? Int == 0)
        let removed = dictionary(facts["afterRemove"])
        #expect(removed["store"] as? Bool == true)
        #expect(removed["config"] as? Bool == true)
        #expect(removed["binary"] as? Bool == false)
        #expect(removed["active"] as? String == "inactive")
        #expect(dictionary(facts["purge"])["exit"] as? Int == 0)
        let purged = dictionary(facts["afterPurge"])
        #expect(purged["stateDirectory"] as? Bool == false)
        #expect(purged["config"] as? Bool == false)
        #expect(purged["statoverride"] as? String == "")
        // Debian keeps system users; the bond is BlueZ's, not the package's.
        #expect((purged["user"] as? String)?.hasPrefix("hrbridge:") == true)
        #expect(purged["bond"] as? Bool == true)
    }
}

extension ISO8601DateFormatter {
    fileprivate static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
