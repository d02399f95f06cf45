import Bridge
import BridgeClient
import BusHarness
import Foundation
import NIOHTTP1
import Testing
import Wire

/// `GET /metrics` read by Prometheus's own linter, `promtool check metrics` (Debian's `prometheus`
/// package), after every family the daemons here can show has been touched.
@Suite("/metrics passes promtool check metrics", .serialized)
struct MetricsLintTests {
    static let promtool = "/usr/bin/promtool"

    /// Families no daemon in this test can show, and why (the catalog test still covers their help).
    static let notShown: [String: String] = [
        "hrbridge_forged_signals_dropped_total":
            "BlueZ adapter only: a signal forged on the system bus (DBusMockTests counts the drop)",
        "hrbridge_bluez_malformed_total":
            "BlueZ adapter only: a malformed message from bluetoothd (MalformedBlueZTests)",
        "hrbridge_live_dropped_total": "created on the first drop: a live client that stops reading until it overflows",
        "hrbridge_peripheral_advertising": peripheral,
        "hrbridge_peripheral_centrals": peripheral,
        "hrbridge_peripheral_subscribed": peripheral,
        "hrbridge_peripheral_frames_sent_total": peripheral,
        "hrbridge_peripheral_frames_unsubscribed_total": peripheral,
        "hrbridge_peripheral_writes_refused_total": peripheral,
    ]

    private static let peripheral = "only with [peripheral] on BlueZ (DaemonBlueZTests' peripheral test scrapes them)"

    /// The gateway's straps: the first two plain; the third sends a malformed frame every 10 s and
    /// drops its link for 10 s of every minute; the fourth only broadcasts, and every 10 s in a
    /// layout the advertisement decoder refuses.
    static let broadcaster = "C0:FF:EE:00:00:04"
    static var scenario: String {
        let malformed = stride(from: 5, to: 3600, by: 10).map { #"{"type": "malformedFrame", "at": "\#($0)s"}"# }
        let dropouts = stride(from: 30, to: 3600, by: 60).map {
            #"{"type": "disconnect", "at": "\#($0)s", "duration": "10s"}"#
        }
        let steady = #""segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]"#
        let straps = [
            #"{"name": "Strap 1", "address": "\#(DaemonUnderTest.straps[0])", \#(steady)}"#,
            #"{"name": "Strap 2", "address": "\#(DaemonUnderTest.straps[1])", \#(steady)}"#,
            #"{"name": "Strap 3", "address": "\#(DaemonUnderTest.straps[2])", \#(steady), "faults": ["#
                + (malformed + dropouts).joined(separator: ", ") + "]}",
            #"{"name": "Broadcaster", "address": "\#(broadcaster)", "broadcastOnly": true, \#(steady), "faults": ["#
                + malformed.joined(separator: ", ") + "]}",
        ]
        return #"{"version": 1, "seed": 11, "straps": ["# + straps.joined(separator: ",\n") + "]}"
    }

    /// The families a scrape declares (`# TYPE name type`) and those it describes (`# HELP name …`).
    static func families(_ text: String) -> (typed: Set<String>, described: Set<String>) {
        var typed: Set<String> = []
        var described: Set<String> = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 3)
            guard words.count >= 3, words[0] == "#" else { continue }
            if words[1] == "TYPE" { typed.insert(String(words[2])) }
            if words[1] == "HELP" && words.count == 4 { described.insert(String(words[2])) }
        }
        return (typed, described)
    }

    /// What `promtool check metrics` says about `text` (it reads the exposition on stdin): its exit
    /// status and every line it printed.
    static func promtoolCheck(_ text: Data, in directory: URL) async throws -> (status: Int32?, lines: [String]) {
        let file = directory.appendingPathComponent("scrape-\(UUID().uuidString).txt")
        try text.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let check = try Spawned(
            "/bin/sh", ["-c", #"exec "$0" check metrics < "$1""#, promtool, file.path], label: "promtool")
        let status = await check.wait()
        return (status, check.output)
    }

    /// Every metric the sources record, by name, with the type its swift-metrics kind becomes in
    /// Prometheus (a `Timer` or an aggregating `Recorder` is a histogram).
    static func recordedInSources() throws -> [String: MetricsCatalog.Family.Kind] {
        let sources = packageRoot.appendingPathComponent("Sources")
        let files =
            FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        var recorded: [String: MetricsCatalog.Family.Kind] = [:]
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: #/(Counter|Gauge|Meter|Recorder|Timer)\(\s*label: "(hrbridge_[a-z0-9_]+)"/#) {
                let kind: MetricsCatalog.Family.Kind =
                    switch match.1 {
                    case "Counter": .counter
                    case "Gauge", "Meter": .gauge
                    default: .histogram
                    }
                recorded[String(match.2)] = kind
            }
        }
        return recorded
    }

    @Test("every metric the sources record is in the catalog, as the same type, and every family is recorded")
    func catalogCoversTheSources() throws {
        let recorded = try Self.recordedInSources()
        #expect(recorded.count >= 20, "the scan finds the metrics: \(recorded.keys.sorted())")
        for (name, kind) in recorded.sorted(by: { $0.key < $1.key }) {
            let family = MetricsCatalog.family(named: name)
            #expect(family != nil, "\(name) is recorded but has no catalog entry: served without # HELP")
            #expect(family == nil || family?.kind == kind, "\(name): \(kind) in the sources")
        }
        let stale = Set(MetricsCatalog.families.map(\.name)).subtracting(recorded.keys).sorted()
        #expect(stale.isEmpty, "in the catalog, recorded nowhere: \(stale)")
        #expect(Set(MetricsCatalog.families.map(\.name)).count == MetricsCatalog.families.count, "names unique")
    }

    @Test("every family, shown by a daemon here or not, passes promtool: help, type, name conventions; docs list it")
    func catalogPassesPromtool() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.promtool),
            "\(Self.promtool) is missing: install Debian's prometheus package (make test-setup)")
        var text = ""
        for family in MetricsCatalog.families {
            #expect(
                !family.help.isEmpty && !family.help.contains("\n") && !family.help.contains("\\"), "\(family.name)")
            text += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.kind.rawValue)\n"
            switch family.kind {
            case .counter, .gauge:
                text += "\(family.name) 0\n"
            case .histogram:
                #expect(family.name.hasSuffix("_seconds"), "\(family.name): a timer, in seconds")
                text += "\(family.name)_bucket{le=\"+Inf\"} 0\n\(family.name)_sum 0\n\(family.name)_count 0\n"
            }
        }
        let directory = FileManager.default.temporaryDirectory
        let check = try await Self.promtoolCheck(Data(text.utf8), in: directory)
        #expect(
            check.status == 0 && check.lines.isEmpty, "promtool check metrics:\n\(check.lines.joined(separator: "\n"))")
        let documented = try String(contentsOf: packageRoot.appendingPathComponent("docs/mqtt.md"), encoding: .utf8)
        let undocumented = MetricsCatalog.families.map(\.name).filter { !documented.contains("`\($0)") }
        #expect(undocumented.isEmpty, "docs/mqtt.md's metrics table lacks \(undocumented)")
    }

    @Test(
        "a gateway (sessions, refused frames and broadcasts, a dropped link, MQTT) and a hub (a refused envelope): every family has HELP, promtool reports nothing"
    )
    func promtoolFindsNoProblem() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.promtool),
            "\(Self.promtool) is missing: install Debian's prometheus package (make test-setup)")
        try await withMosquitto { broker in
            let gateway = try await DaemonUnderTest(
                moreSettings: """
                    [mqtt]
                    url = "mqtt://127.0.0.1:\(broker.port)"
                    node = "gym"
                    keepalive = 5
                    """,
                scenario: Self.scenario,
                sensorsSection: DaemonUnderTest.sensorsSection(classBoard: false)
                    + "\n\n[[sensors]]\naddress = \"\(Self.broadcaster)\"\n")
            defer { gateway.stop() }
            let hub = try await DaemonUnderTest(
                streaming: nil,
                adapterSection: "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nexpire = 5",
                sensorsSection: "")
            defer { hub.stop() }

            // A session running (store writes, sessions by state) and a live client on each.
            let created = try await gateway.unix.send(
                .POST, "/v1/sessions", json: ["sensors": [DaemonUnderTest.straps[0]]])
            #expect(created.status == 201)
            let live = EventCollector(gateway.unix, path: "/v1/events")
            defer { live.cancel() }
            // A request the API refuses is counted by its code.
            #expect(try await gateway.unix.send(.GET, "/v1/workouts?limit=0").status == 400)
            // Anyone on the broker can send the hub an envelope: a 1-byte one is refused (too_short).
            try await mqttPublish(
                broker: broker, topic: "hrbridge/room-9/sensor/c0ffee0000aa/measurement", payload: "x")

            let expected = Set(MetricsCatalog.families.map(\.name)).subtracting(Self.notShown.keys)
            var scrapes: [(name: String, body: Data)] = []
            try await eventually("every family on the gateway or the hub") {
                scrapes = []
                for (name, daemon) in [("gateway", gateway), ("hub", hub)] {
                    let reply = try await daemon.unix.send(.GET, "/metrics")
                    guard reply.status == 200 else { return false }
                    scrapes.append((name, reply.body))
                }
                let shown = scrapes.reduce(into: Set<String>()) {
                    $0.formUnion(Self.families(String(decoding: $1.body, as: UTF8.self)).typed)
                }
                return expected.isSubset(of: shown)
            }
            for (name, body) in scrapes {
                let text = String(decoding: body, as: UTF8.self)
                let families = Self.families(text)
                let undescribed = families.typed.subtracting(families.described).sorted()
                #expect(undescribed.isEmpty, "\(name): families without # HELP: \(undescribed)")
                let check = try await Self.promtoolCheck(body, in: gateway.directory)
                #expect(check.status == 0, "\(name): promtool exited \(check.status.map(String.init) ?? "?")")
                #expect(check.lines.isEmpty, "\(name): promtool check metrics:\n\(check.lines.joined(separator: "\n"))")
            }
            let gatewayText = String(decoding: scrapes.first { $0.name == "gateway" }?.body ?? Data(), as: UTF8.self)
            #expect(gatewayText.contains(#"hrbridge_api_refused_total{code="invalid_request"} 1"#))
            // Every refusal is counted by reason alike in the status and /metrics: frames and broadcasts.
            let sensors = try await gateway.unix.send(.GET, "/v1/sensors").list("sensors", of: SensorStatus.self)
            let gatewayScrape = String(decoding: scrapes.first { $0.name == "gateway" }?.body ?? Data(), as: UTF8.self)
            for (address, family) in [
                (DaemonUnderTest.straps[2], "hrbridge_frames_refused_total"),
                (Self.broadcaster, "hrbridge_broadcasts_refused_total"),
            ] {
                let status = try #require(sensors.first { $0.address == address }, "\(address)")
                let byReason = status.refusedByReason
                #expect(!byReason.isEmpty, "\(address): refusals by reason")
                #expect(byReason.values.reduce(0, +) == status.framesRefused, "\(address): \(status)")
                for reason in byReason.keys {
                    #expect(gatewayScrape.contains("\(family){reason=\"\(reason)\"}"), "\(family) by \(reason)")
                }
            }
        }
    }
}
