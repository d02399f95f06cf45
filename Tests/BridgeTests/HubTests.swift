import Bridge
import BusHarness
import Foundation
import NIOHTTP1
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Many gateways, one hub: remote sensors over MQTT (a real mosquitto)", .serialized)
struct HubTests {
    /// Gateway `gateway`'s ten straps: `C0:FF:EE:0g:00:01` … `0A`.
    static func straps(_ gateway: Int) -> [String] {
        (1...10).map { String(format: "C0:FF:EE:%02X:00:%02X", gateway, $0) }
    }

    static func gateway(_ gateway: Int, broker: MosquittoBroker) -> (
        scenario: String, settings: String, sensors: String
    ) {
        let straps = Self.straps(gateway).enumerated().map { index, address in
            #"{"name": "Room \#(gateway) strap \#(index + 1)", "address": "\#(address)", "#
                + #""segments": [{"type": "steady", "duration": "60m", "intensity": 0.5}]}"#
        }
        let scenario = #"{"version": 1, "seed": \#(gateway), "straps": [\#(straps.joined(separator: ", "))]}"#
        let settings = """
            [mqtt]
            url = "mqtt://127.0.0.1:\(broker.port)"
            node = "room-\(gateway)"
            keepalive = 5
            discovery = false
            publish_measurements = true
            """
        let sensors = Self.straps(gateway).map { "[[sensors]]\naddress = \"\($0)\"\n" }.joined(separator: "\n")
        return (scenario, settings, sensors)
    }

    func object(_ reply: APIClient.Reply) throws -> [String: Any] {
        try #require(reply.object, "not a JSON object: \(String(decoding: reply.body, as: UTF8.self))")
    }

    func sensors(_ hub: DaemonUnderTest) async throws -> [String: [String: Any]] {
        let list = try object(try await hub.unix.send(.GET, "/v1/sensors"))["sensors"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: list.map { ($0["address"] as? String ?? "?", $0) })
    }

    @Test(
        "three gateways (10 simulated straps each) → one hub without a radio: 30 sensors, a session records a remote strap, a killed gateway's straps drop and come back"
    )
    func threeGatewaysOneHub() async throws {
        try await withMosquitto { broker in
            var gateways: [DaemonUnderTest] = []
            defer { for gateway in gateways { gateway.stop() } }
            for index in 1...3 {
                let setup = Self.gateway(index, broker: broker)
                gateways.append(
                    try await DaemonUnderTest(
                        speed: 1, moreSettings: setup.settings, scenario: setup.scenario, streaming: 10,
                        sensorsSection: setup.sensors))
            }
            let hub = try await DaemonUnderTest(
                moreSettings: "",
                streaming: nil,
                adapterSection: "[adapter]\nkind = \"mqtt\"\nurl = \"mqtt://127.0.0.1:\(broker.port)\"\nexpire = 5",
                sensorsSection: "")
            defer { hub.stop() }

            let everyStrap = (1...3).flatMap(Self.straps)
            try await eventually("30 remote straps ready on the hub") {
                let seen = try await sensors(hub)
                return everyStrap.allSatisfy { seen[$0]?["state"] as? String == "ready" }
            }
            let seen = try await sensors(hub)
            #expect(seen.count == 30)
            #expect(seen[Self.straps(2)[0]]?["adapter"] as? String == "room-2", "the gateway it is linked through")
            #expect(seen[Self.straps(2)[0]]?["name"] as? String == "Room 2 strap 1", "its name, from the gateway")
            let health = try object(try await hub.unix.send(.GET, "/v1/health"))
            let adapters = (health["adapters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(adapters == ["room-1", "room-2", "room-3"])

            // A session on the hub records a strap of room 2.
            let remote = Self.straps(2)[3]
            let created = try object(try await hub.unix.send(.POST, "/v1/sessions", json: ["sensors": [remote]]))
            let session = try #require(created["id"] as? String)
            try await eventually("heart-rate samples in the hub's session") {
                let live = try object(try await hub.unix.send(.GET, "/v1/sessions/\(session)"))
                let heartRate = (live["statistics"] as? [String: Any])?["heartRate"] as? [String: Any]
                return (heartRate?["count"] as? Int ?? 0) >= 3
            }

            // Gateway 3 killed without a word: the broker's Will drops its straps on the hub.
            kill(gateways[2].process.pid, SIGKILL)
            try await eventually("room 3's straps lost on the hub") {
                let seen = try await sensors(hub)
                return Self.straps(3).allSatisfy { seen[$0]?["state"] as? String == "disconnected" }
            }
            let afterKill = try await sensors(hub)
            #expect(Self.straps(1).allSatisfy { afterKill[$0]?["state"] as? String == "ready" }, "the others go on")
            #expect(afterKill[Self.straps(3)[0]]?["disconnections"] as? Int == 1)

            // It comes back: so do its straps.
            let setup = Self.gateway(3, broker: broker)
            gateways[2] = try await DaemonUnderTest(
                reusing: gateways[2], speed: 1, moreSettings: setup.settings, scenario: setup.scenario, streaming: 10,
                sensorsSection: setup.sensors)
            try await eventually("room 3's straps back on the hub") {
                let seen = try await sensors(hub)
                return Self.straps(3).allSatisfy { seen[$0]?["state"] as? String == "ready" }
            }

            let stopped = try object(try await hub.unix.send(.POST, "/v1/sessions/\(session)/stop"))
            let samples = try object(try await hub.unix.send(.GET, "/v1/workouts/\(session)/samples"))
            #expect(stopped["state"] as? String == "ended")
            #expect(((samples["samples"] as? [Any])?.count ?? 0) >= 3, "the remote strap's samples are stored")
        }
    }
}
