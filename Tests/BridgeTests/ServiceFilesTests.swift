import Bridge
import BusHarness
import Foundation
import Testing

/// Runs a command to its end and returns its exit status and output.
func runToEnd(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) async throws
    -> (status: Int32?, output: [String])
{
    let process = try Spawned(executable, arguments, environment: environment)
    let status = await process.wait(timeout: .seconds(120))
    return (status, process.output)
}

@Suite("Service files: the systemd unit, the udev rule, the shipped configuration, make install", .serialized)
struct ServiceFilesTests {
    let unit = packageRoot.appendingPathComponent("systemd/hrbridge.service")

    /// The unit with ExecStart pointing at the binary just built (verify checks that it exists).
    func builtUnit() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let text = try String(contentsOf: unit, encoding: .utf8).replacingOccurrences(
            of: "ExecStart=/usr/local/bin/hrbridged", with: "ExecStart=\(DaemonUnderTest.daemonBinary)")
        let copy = directory.appendingPathComponent("hrbridge.service")
        try Data(text.utf8).write(to: copy)
        return copy
    }

    @Test("systemd-analyze verify finds nothing to say about the unit")
    func unitVerifies() async throws {
        let copy = try builtUnit()
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let (status, output) = try await runToEnd("/usr/bin/systemd-analyze", ["verify", "--man=no", copy.path])
        #expect(status == 0)
        #expect(output.isEmpty, "verify printed: \(output)")
    }

    @Test("the unit's exposure score by systemd-analyze security --offline is at most 1.5")
    func unitExposure() async throws {
        let copy = try builtUnit()
        defer { try? FileManager.default.removeItem(at: copy.deletingLastPathComponent()) }
        let (status, output) = try await runToEnd(
            "/usr/bin/systemd-analyze", ["security", "--offline=true", "--threshold=15", copy.path])
        #expect(status == 0, "\(output.suffix(3))")
        let overall = try #require(output.first { $0.contains("Overall exposure level") })
        let score = overall.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
        #expect(score.map { $0 <= 1.5 } == true, "\(overall)")
    }

    @Test("the unit is Type=notify with a watchdog, restarts on failure, follows bluetooth")
    func unitShape() throws {
        let lines = Set(try String(contentsOf: unit, encoding: .utf8).split(separator: "\n").map(String.init))
        for expected in [
            "Type=notify", "WatchdogSec=30s", "Restart=on-failure", "After=bluetooth.service dbus.service",
            "WantedBy=bluetooth.target", "User=hrbridge", "RuntimeDirectory=hrbridge", "StateDirectory=hrbridge",
            "CapabilityBoundingSet=", "NoNewPrivileges=yes", "UMask=0077", "StateDirectoryMode=0700",
            "RestartPreventExitStatus=73 78", "RestrictAddressFamilies=AF_UNIX AF_INET", "MemoryMax=512M",
            "TasksMax=256", "LimitNOFILE=2048", "RuntimeDirectoryPreserve=restart",
        ] {
            #expect(lines.contains(expected), "missing \(expected)")
        }
        let sysusers = try String(
            contentsOf: packageRoot.appendingPathComponent("systemd/hrbridge.sysusers"), encoding: .utf8)
        #expect(sysusers.split(separator: "\n").contains { $0.hasPrefix("u hrbridge ") })
    }

    /// udev's rule syntax (udevadm verify needs systemd ≥ 254; Debian 12 has 252): every line is
    /// comma-separated KEY[{attr}] OP "value" items, matches use == or !=, assignments = += -= :=,
    /// every GOTO has its LABEL.
    @Test(
        "the udev rule parses, matches adapters (DEVTYPE host) only and pulls in bluetooth.target (never the unit: disable holds)"
    )
    func udevRule() throws {
        let text = try String(
            contentsOf: packageRoot.appendingPathComponent("udev/60-hrbridge.rules"), encoding: .utf8)
        let matchKeys: Set<String> = ["ACTION", "SUBSYSTEM", "KERNEL", "ENV", "ATTR", "DEVPATH", "DRIVER", "TAG"]
        let assignKeys: Set<String> = ["TAG", "ENV", "GOTO", "LABEL", "RUN", "SYMLINK", "OWNER", "GROUP", "MODE"]
        let item = try Regex(#"^\s*([A-Z_]+)(\{[A-Za-z0-9_]+\})?\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*$"#)
        var gotos: Set<String> = []
        var labels: Set<String> = []
        var pulled = false
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            var fields: [String: String] = [:]
            for part in trimmed.split(separator: ",") {
                let match = try #require(try item.wholeMatch(in: String(part)), "line \(number + 1): '\(part)'")
                let key = String(match.output[1].substring!)
                let attribute = match.output[2].substring.map(String.init) ?? ""
                let operation = String(match.output[3].substring!)
                let value = String(match.output[4].substring!)
                let isMatch = operation == "==" || operation == "!="
                #expect(isMatch ? matchKeys.contains(key) : assignKeys.contains(key), "line \(number + 1): \(key)")
                if key == "GOTO" { gotos.insert(value) }
                if key == "LABEL" { labels.insert(value) }
                fields[key + attribute + operation] = value
            }
            #expect(fields["ENV{SYSTEMD_WANTS}+="] != "hrbridge.service", "it would start a disabled unit")
            if fields["ENV{SYSTEMD_WANTS}+="] == "bluetooth.target" {
                #expect(fields["SUBSYSTEM=="] == "bluetooth")
                #expect(fields["ENV{DEVTYPE}=="] == "host", "adapters, not links")
                #expect(fields["TAG+="] == "systemd")
                pulled = true
            }
        }
        #expect(pulled)
        #expect(gotos.isSubset(of: labels), "every GOTO has its LABEL")
    }

    @Test("the shipped configuration is valid and uses BlueZ")
    func shippedConfiguration() async throws {
        let path = packageRoot.appendingPathComponent("systemd/config.toml").path
        let configuration = try ConfigurationLoader.load(path: path)
        #expect(configuration.adapter == .bluez())
        let (status, output) = try await runToEnd(
            DaemonUnderTest.daemonBinary, ["--config", path, "--check-config"])
        #expect(status == 0, "\(output)")
        let bad = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).toml")
        try Data("[adapter]\nkind = \"radio\"\n".utf8).write(to: bad)
        defer { try? FileManager.default.removeItem(at: bad) }
        let (badStatus, badOutput) = try await runToEnd(DaemonUnderTest.daemonBinary, ["--config", bad.path])
        #expect(badStatus == 78, "bad configuration exits 78")
        #expect(badOutput.contains { $0.contains("line 2: adapter kind 'radio'") })
    }

    @Test("make install honours DESTDIR and PREFIX; make uninstall removes what it installed, keeps the config")
    func installAndUninstall() async throws {
        let stage = FileManager.default.temporaryDirectory.appendingPathComponent("stage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: stage) }
        let variables = [
            "DESTDIR=\(stage.path)", "PREFIX=/usr",
            "BINDIR_BUILT=\(URL(fileURLWithPath: DaemonUnderTest.binary).deletingLastPathComponent().path)",
            "UNITDIR=/lib/systemd/system",
            "UDEVDIR=/lib/udev", "SYSUSERSDIR=/usr/lib/sysusers.d",
        ]
        let (status, output) = try await runToEnd(
            "/usr/bin/make", ["-C", packageRoot.path, "install-files"] + variables)
        #expect(status == 0, "\(output)")
        // Staged for another system: the steps on the target, the configuration's group among them
        // (without it the daemon cannot read its configuration, exits 78 and is not restarted).
        #expect(
            output.contains {
                $0.contains(
                    "on the target, as root: systemd-sysusers && chgrp hrbridge /etc/hrbridge/config.toml && systemctl daemon-reload"
                )
            }, "\(output)")
        // Without a release build it says what to run, and installs nothing.
        let (missing, missingOutput) = try await runToEnd(
            "/usr/bin/make",
            ["-C", packageRoot.path, "install-files"]
                + variables.map { $0.hasPrefix("BINDIR_BUILT=") ? "BINDIR_BUILT=\(stage.path)/none" : $0 })
        #expect(missing != 0)
        #expect(missingOutput.contains { $0.contains("run make release first") }, "\(missingOutput)")
        let installed = [
            "usr/bin/hrbridge", "usr/bin/hrbridged", "lib/systemd/system/hrbridge.service",
            "usr/lib/sysusers.d/hrbridge.conf",
            "lib/udev/rules.d/60-hrbridge.rules", "etc/hrbridge/config.toml",
        ]
        for path in installed {
            #expect(FileManager.default.fileExists(atPath: stage.appendingPathComponent(path).path), "\(path)")
        }
        // The configuration may hold tokens: nobody but root and the service's group reads it.
        let configMode =
            try FileManager.default.attributesOfItem(
                atPath: stage.appendingPathComponent("etc/hrbridge/config.toml").path)[.posixPermissions] as? Int
        #expect(configMode == 0o640)
        let unitText = try String(
            contentsOf: stage.appendingPathComponent("lib/systemd/system/hrbridge.service"), encoding: .utf8)
        #expect(unitText.contains("ExecStart=/usr/bin/hrbridged\n"))
        let (uninstallStatus, _) = try await runToEnd(
            "/usr/bin/make", ["-C", packageRoot.path, "uninstall"] + variables)
        #expect(uninstallStatus == 0)
        for path in installed.dropLast() {
            #expect(!FileManager.default.fileExists(atPath: stage.appendingPathComponent(path).path), "\(path)")
        }
        #expect(FileManager.default.fileExists(atPath: stage.appendingPathComponent("etc/hrbridge/config.toml").path))
    }
}
