import Bridge
import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Testing
import Wire

@Suite("The web face in a real browser: Debian's chromium, headless, driven by Selenium", .serialized)
struct BrowserTests {
    /// Where the screenshots go, for a person to look at (kept after the run).
    static let screenshots = packageRoot.appendingPathComponent(".build/test-artifacts/screenshots")

    @Test("the daemon serves the pages exactly as they are in Sources/Bridge/Web")
    func servedPages() async throws {
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let web = packageRoot.appendingPathComponent("Sources/Bridge/Web")
        let routes = ["index.html": "/", "overlay.html": "/overlay", "board.html": "/board"]
        let files = try FileManager.default.contentsOfDirectory(atPath: web.path).sorted()
        #expect(
            files == [
                "app.css", "board.css", "board.html", "board.js", "chart.js", "dashboard.js", "index.html", "live.js",
                "overlay.css", "overlay.html", "overlay.js",
            ])
        for file in files {
            let reply = try await daemon.unix.send(.GET, routes[file] ?? "/\(file)")
            #expect(reply.status == 200, "\(file)")
            let text = try String(contentsOf: web.appendingPathComponent(file), encoding: .utf8)
            #expect(String(decoding: reply.body, as: UTF8.self) == text, "\(file)")
        }
        // Pages need a token on TCP; their scripts and stylesheet do not (they hold no data).
        #expect(try await daemon.tcp(nil).send(.GET, "/board").status == 401)
        #expect(try await daemon.tcp(nil).send(.GET, "/live.js").status == 200)
        // Only those exact files go without a token: not a path that merely ends like one, nor
        // an API path written with extra slashes.
        for path in ["//v1/workouts", "/v1/workouts/x.js", "//live.js/../v1/workouts", "/board.css/x"] {
            #expect(try await daemon.tcp(nil).send(.GET, path).status == 401, "\(path)")
        }
        #expect(try await daemon.tcp(DaemonUnderTest.readToken).send(.GET, "/board").status == 200)
    }

    @Test("dashboard, class board and overlay follow the simulated straps; controls drive the API; pages reconnect")
    func pagesInChromium() async throws {
        let daemon = try await DaemonUnderTest(classBoard: true)
        defer { daemon.stop() }
        // Ready once it prints its first check: Chromium and its driver are up.
        let browser = try await Spawned.startPeer(
            venvPython,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/web/browser_check.py").path,
                "http://127.0.0.1:\(daemon.port)", DaemonUnderTest.readToken, DaemonUnderTest.controlToken,
                Self.screenshots.path,
            ], label: "browser", readyLine: { _ in true })
        defer { browser.stop() }
        // The script asks for a daemon restart near its end, to see the pages reconnect by themselves.
        var restarted: DaemonUnderTest?
        defer { restarted?.stop(removing: false) }
        if await browser.waitForLine(timeout: .seconds(180), { $0 == "restart-daemon" }) != nil {
            daemon.process.stop()
            restarted = try await DaemonUnderTest(reusing: daemon, classBoard: true)
        }
        let status = await browser.wait(timeout: .seconds(180))
        #expect(status == 0, "\(browser.output.suffix(25).joined(separator: "\n"))")
        let checks = browser.output.filter { $0.hasPrefix("ok ") }
        for expected in [
            "ok no token: 401", "ok dashboard heart rate changes", "ok dashboard shows the hostile name as text",
            "ok security headers on every page", "ok board shows the hostile name as text", "ok started from the page",
            "ok paused from the page",
            "ok resumed from the page", "ok chart has", "ok zone shown = API zone", "ok stopped from the page",
            "ok board tiles", "ok dropout: tile greyed", "ok the tile recovered",
            "ok one athlete, two straps: one tile", "ok overlay transparent",
            "ok reconnected by itself after the daemon restarted", "ok phone width: no horizontal scrolling",
        ] {
            #expect(checks.contains { $0.hasPrefix(expected) }, "missing: \(expected)")
        }
        for page in ["dashboard.png", "dashboard-phone.png", "board.png", "board-signal-lost.png", "overlay.png"] {
            let path = Self.screenshots.appendingPathComponent(page).path
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(size > 1000, "screenshot \(page)")
        }
    }

    @Test(
        "pages left open for days: a fresh stream after dropped messages, a restarted daemon's state replacing the old (a strap less, on the board and the dashboard), a stream refused for a while opened again by the page itself"
    )
    func pagesRecoverTheirStream() async throws {
        var current = try await DaemonUnderTest()
        defer { current.stop() }
        let browser = try await Spawned.startPeer(
            venvPython,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/web/reconnect_check.py").path,
                "http://127.0.0.1:\(current.port)", DaemonUnderTest.readToken, DaemonUnderTest.controlToken,
            ], label: "reconnect", readyLine: { _ in true })
        defer { browser.stop() }
        let config = current.directory.appendingPathComponent("config.toml")
        let scenario = current.directory.appendingPathComponent("scenario.json")
        func edit(_ file: URL, _ change: (String) throws -> String) throws {
            try Data(try change(try String(contentsOf: file, encoding: .utf8)).utf8).write(to: file)
        }
        let rotated = "rotated-read-token-0123456789abcdef"
        // The script says when to restart the daemon, and how; the pages show when it happened.
        for step in ["without-third-strap", "refusing-the-token", "accepting-the-token"] {
            guard await browser.waitForLine(timeout: .seconds(240), { $0 == "restart \(step)" }) != nil else { break }
            current.process.stop()
            switch step {
            case "without-third-strap":
                let third = DaemonUnderTest.straps[2]
                try edit(config) { $0.replacingOccurrences(of: "[[sensors]]\naddress = \"\(third)\"", with: "") }
                try edit(scenario) { text in
                    var document = try #require(
                        try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                    let straps = try #require(document["straps"] as? [[String: Any]])
                    document["straps"] = straps.filter { $0["address"] as? String != third }
                    return String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
                }
            case "refusing-the-token":
                try edit(config) { $0.replacingOccurrences(of: DaemonUnderTest.readToken, with: rotated) }
            default:
                try edit(config) { $0.replacingOccurrences(of: rotated, with: DaemonUnderTest.readToken) }
            }
            current = try await DaemonUnderTest(reusing: current, streaming: 2)
        }
        let status = await browser.wait(timeout: .seconds(240))
        #expect(status == 0, "\(browser.output.suffix(25).joined(separator: "\n"))")
        let checks = browser.output.filter { $0.hasPrefix("ok ") }
        for expected in [
            "ok an ended session leaves nothing", "ok board and dashboard follow three straps",
            "ok dropped messages: the page took a fresh stream",
            "ok restarted without a strap: the board shows", "ok restarted without a strap: so does the dashboard",
            "ok refused: the page tries again by itself", "ok refused: the page waits longer each time",
            "ok the token accepted again: the board reconnected",
        ] {
            #expect(checks.contains { $0.hasPrefix(expected) }, "missing: \(expected)")
        }
    }

    @Test("the overlay without a strap named lets a forgotten strap go and follows the next one that streams")
    func overlayLetsAForgottenStrapGo() async throws {
        // Two straps nobody configured, connected through the API: forgetting one makes it gone.
        let straps = Array(DaemonUnderTest.straps.prefix(2))
        let steady = #""segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]"#
        let scenario =
            #"{"version": 1, "seed": 5, "straps": ["#
            + straps.enumerated().map { #"{"name": "Strap \#($0 + 1)", "address": "\#($1)", \#(steady)}"# }
            .joined(separator: ", ") + "]}"
        let daemon = try await DaemonUnderTest(scenario: scenario, streaming: nil, sensorsSection: "")
        defer { daemon.stop() }
        try await eventually("both straps seen") {
            let sensors = try await daemon.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
            return Set(sensors.map(\.address)).isSuperset(of: straps)
        }
        for strap in straps {
            let connect = try await daemon.unix.send(.POST, "/v1/sensors/\(strap)/connect")
            #expect(connect.status == 202, "\(strap)")
        }
        try await eventually("both straps streaming") {
            let sensors = try await daemon.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
            return sensors.filter { straps.contains($0.address) && $0.state == .ready }.count == 2
        }
        let browser = try await Spawned.startPeer(
            venvPython,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/web/overlay_check.py").path,
                "http://127.0.0.1:\(daemon.port)", DaemonUnderTest.readToken, DaemonUnderTest.controlToken,
            ] + straps, label: "overlay", readyLine: { _ in true })
        defer { browser.stop() }
        let status = await browser.wait(timeout: .seconds(180))
        #expect(status == 0, "\(browser.output.suffix(25).joined(separator: "\n"))")
        #expect(browser.output.contains { $0.hasPrefix("ok overlay let") }, "\(browser.output)")
    }

    /// Where people open the pages: three desktop windows and a phone, and the board also on a TV.
    static let layoutSizes = ["1280x800", "1400x1000", "1920x1080", "390x844"]

    @Test(
        "every page fits the sizes people use: no sideways scrolling, nothing wider than its card, no word broken in a table, compact dates, charts that fill their cards"
    )
    func layoutAtEverySize() async throws {
        let shots =
            ["dashboard", "workout", "board", "overlay"].flatMap { page in Self.layoutSizes.map { (page, $0) } }
            + [("board", "3840x2160")]
        // Written afresh: an earlier run's screenshots must not stand in for this one's.
        for (page, size) in shots {
            try? FileManager.default.removeItem(at: Self.screenshots.appendingPathComponent("\(page)-\(size).png"))
        }
        let daemon = try await DaemonUnderTest()
        defer { daemon.stop() }
        let browser = try Spawned(
            venvPython,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/web/layout_check.py").path,
                "http://127.0.0.1:\(daemon.port)", DaemonUnderTest.readToken, DaemonUnderTest.controlToken,
                Self.screenshots.path,
            ], label: "layout")
        defer { browser.stop() }
        let status = await browser.wait(timeout: .seconds(300))
        #expect(status == 0, "\(browser.output.filter { !$0.hasPrefix("ok ") }.joined(separator: "\n"))")
        for (page, size) in shots {
            #expect(browser.output.contains("ok layout \(page) \(size)"), "layout \(page) \(size)")
            let path = Self.screenshots.appendingPathComponent("\(page)-\(size).png").path
            let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(bytes > 5000, "screenshot \(page)-\(size).png")
        }
    }

    /// 60 straps: the harness's three and 57 more, each with an athlete (zones colour the tiles);
    /// the first 14 hold a link, the other 46 only broadcast, and the last goes quiet after 20 s.
    static func sixtyStraps() -> (scenario: String, settings: String, quiet: String) {
        let addresses = (1...60).map { String(format: "C0:FF:EE:00:00:%02X", $0) }
        let straps = addresses.enumerated().map { index, address in
            let intensity = 0.45 + 0.1 * Double(index % 5)
            let quiet = index == 59 ? #", "faults": [{"type": "disconnect", "at": "20s", "duration": "60m"}]"# : ""
            return #"{"name": "Strap \#(index + 1)", "address": "\#(address)", "broadcastOnly": \#(index >= 14), "#
                + #""segments": [{"type": "steady", "duration": "60m", "intensity": \#(intensity)}]\#(quiet)}"#
        }
        let scenario = #"{"version": 1, "seed": 11, "straps": [\#(straps.joined(separator: ",\n"))]}"#
        let settings = addresses.dropFirst(3).enumerated().map { index, address in
            """
            [[athletes]]
            id = "athlete-\(index + 4)"
            name = "Athlete \(index + 4)"
            max_hr = \(180 + index % 15)

            [[sensors]]
            address = "\(address)"
            athlete = "athlete-\(index + 4)"

            """
        }.joined()
        return (scenario, settings, addresses[59])
    }

    @Test(
        "a class of 60 on a 1080p screen: every tile fits and reads, mode badges, stale data shown, order and colours")
    func boardForSixty() async throws {
        let class60 = Self.sixtyStraps()
        let daemon = try await DaemonUnderTest(
            classBoard: true, moreSettings: class60.settings, scenario: class60.scenario, streaming: 14)
        defer { daemon.stop() }
        let browser = try Spawned(
            venvPython,
            [
                packageRoot.appendingPathComponent("Tests/Fixtures/web/board_sixty.py").path,
                "http://127.0.0.1:\(daemon.port)", DaemonUnderTest.readToken, Self.screenshots.path, class60.quiet,
            ], label: "board-60")
        defer { browser.stop() }
        let status = await browser.wait(timeout: .seconds(240))
        #expect(status == 0, "\(browser.output.suffix(25).joined(separator: "\n"))")
        let checks = browser.output.filter { $0.hasPrefix("ok ") }
        for expected in [
            "ok 60 tiles fit 1920x1080 without scrolling", "ok readable:", "ok mode badges: 14 link, 46 broadcast",
            "ok stale data shown: no data for", "ok fixed order by address", "ok ordered by heart rate",
            "ok the API agrees: 46 sensors via advertisement",
        ] {
            #expect(checks.contains { $0.hasPrefix(expected) }, "missing: \(expected)")
        }
        let screenshot = Self.screenshots.appendingPathComponent("board-60.png").path
        #expect(((try? FileManager.default.attributesOfItem(atPath: screenshot)[.size] as? Int) ?? 0) > 10_000)
    }
}
