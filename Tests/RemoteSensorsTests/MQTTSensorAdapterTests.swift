import BusHarness
import Foundation
import GATT
import Logging
import MQTT
import Sensors
import Synchronization
import Testing

@testable import RemoteSensors

/// Events as they arrive.
final class Received: Sendable {
    let events = Mutex<[SensorEvent]>([])
    func append(_ event: SensorEvent) { events.withLock { $0.append(event) } }

    /// The heart rates measured so far, in order.
    var heartRates: [Int] {
        events.withLock { events in
            events.compactMap {
                if case .measurement(let m) = $0, case .heartRateMeasurement(let f) = m.value {
                    Int(f.heartRate)
                } else {
                    nil
                }
            }
        }
    }
}

/// The hub's adapter against a real mosquitto broker, fed by a plain MQTT client playing the
/// gateways, bad ones included.
@Suite("The MQTT sensor adapter: gateways' measurements as sensors (a real mosquitto)", .serialized)
struct MQTTSensorAdapterTests {
    let logger = Logger(label: "remote-test")
    let strap = "C0:FF:EE:00:00:01"
    let topic = "hrbridge/room-1/sensor/c0ffee000001/measurement"

    func options(_ broker: MosquittoBroker, id: String) -> MQTTClient.Options {
        var options = MQTTClient.Options(
            broker: MQTTBrokerURL(host: "127.0.0.1", port: broker.port, usesTLS: false), clientID: id)
        options.reconnectDelay = 1...2
        return options
    }

    func frame(_ sequence: UInt32, heartRate: UInt16, via: MeasurementPath = .connection) -> [UInt8] {
        RemoteMeasurement(
            sequence: sequence, receivedAt: Date(), via: via, characteristic: .heartRateMeasurement,
            bytes: HeartRateMeasurement(heartRate: heartRate, sensorContact: .detected).encoded()
        ).encoded()
    }

    @Test(
        "measurements become a ready sensor; a sequence gap drops and restores it; bad topics, envelopes and values are refused and the stream goes on; other gateways filtered; the Will and silence (on the test's clock) drop it"
    )
    func gatewaysGoodAndBad() async throws {
        try await withMosquitto { broker in
            var settings = MQTTSensorAdapter.Settings(client: options(broker, id: "hub"), nodes: ["room-1"])
            settings.expire = 2
            // The frames carry real dates and the hub's clock is the test's: an hour of skew
            // allowed, so only the frame dated two hours ahead is refused for it.
            settings.maximumSkew = 3600
            // Silence is measured on this clock alone: however slow the machine, only `advance` expires a strap.
            let clock = ManualWallClock(now: Date())
            let start = clock.now()
            let adapter = try MQTTSensorAdapter(settings: settings, clock: clock, logger: logger)
            let received = Received()
            let events = adapter.events()
            let collector = Task { for await event in events { received.append(event) } }
            defer { collector.cancel() }
            try await adapter.start()
            try await eventually("the hub connected") { await adapter.availability() == .ready }
            let gateway = try MQTTClient(options: options(broker, id: "gateway"), logger: logger)
            try await gateway.start()
            try await eventually("the gateway connected") { await gateway.isConnected }
            func send(_ topic: String, _ payload: [UInt8]) async {
                await gateway.publish(MQTTMessage(topic: topic, payload: payload))
            }
            func heartRates() -> [Int] { received.heartRates }
            func states() -> [ConnectionState] {
                received.events.withLock { events in
                    events.compactMap { if case .connectionChanged(_, let state) = $0 { state } else { nil } }
                }
            }

            await send(topic, frame(0, heartRate: 60))
            await send(topic, frame(1, heartRate: 61, via: .advertisement))
            try await eventually("two measurements") { heartRates() == [60, 61] }
            #expect(states() == [.connected, .ready])
            let via = received.events.withLock {
                $0.compactMap { if case .measurement(let m) = $0 { m.via } else { nil } }
            }
            #expect(via == [.connection, .advertisement])
            let sensor = received.events.withLock {
                $0.compactMap { if case .measurement(let m) = $0 { m.sensor } else { nil } }
            }
            #expect(sensor.first == SensorIdentity(adapter: "room-1", address: strap))

            // Three frames lost on the way: a gap, as a dropped link is.
            await send(topic, frame(5, heartRate: 65))
            try await eventually("the frame after the gap") { heartRates() == [60, 61, 65] }
            #expect(states() == [.connected, .ready, .disconnected(.linkLost), .connected, .ready])

            // Hostile or broken input: refused, nothing emitted, and the next good frame flows.
            await send("hrbridge/room-1/sensor/not-an-address/measurement", frame(6, heartRate: 99))
            await send("hrbridge/room+1/sensor/c0ffee000001/measurement", frame(6, heartRate: 98))
            await send(topic, [1, 0, 1])
            await send(topic, [9] + frame(6, heartRate: 97).dropFirst())
            await send("hrbridge/room-2/sensor/c0ffee000002/measurement", frame(0, heartRate: 96))
            let truncated = RemoteMeasurement(
                sequence: 6, receivedAt: Date(), via: .connection, characteristic: .heartRateMeasurement,
                bytes: [0x10, 70, 0x01])
            await send(topic, truncated.encoded())
            let ahead = RemoteMeasurement(
                sequence: 6, receivedAt: clock.now().addingTimeInterval(7200), via: .connection,
                characteristic: .heartRateMeasurement,
                bytes: HeartRateMeasurement(heartRate: 95, sensorContact: .detected).encoded())
            await send(topic, ahead.encoded())
            await send(topic, frame(7, heartRate: 67))
            try await eventually("the next good frame") { heartRates() == [60, 61, 65, 67] }
            #expect(
                received.events.withLock { events in
                    events.contains { if case .decodingFailed(let s, _, _) = $0 { s.address == strap } else { false } }
                }, "a bad GATT value inside a good envelope is the decoder's refusal")
            #expect(await adapter.knownDevices().map(\.identity.address) == [strap], "room-2 is not followed")

            // The gateway's Will: its straps are gone.
            await gateway.publish(MQTTMessage(topic: "hrbridge/room-1/status", text: "offline", qos: .atLeastOnce))
            try await eventually("dropped by the Will") { states().last == .disconnected(.linkLost) }

            // Back, then silent: gone `expire` seconds after the last frame, by the clock, and not before.
            await send(topic, frame(0, heartRate: 70))
            try await eventually("ready again") { states().last == .ready }
            try await eventually("the wake-up armed for 2 s after the frame") {
                await adapter.armedDeadline == start.addingTimeInterval(2)
            }
            clock.advance(by: 1.5)
            await send(topic, frame(1, heartRate: 71))
            try await eventually("a frame 1.5 s later") { heartRates().last == 71 }
            clock.advance(to: start.addingTimeInterval(2))
            try await eventually("woken at the first deadline, re-armed at the second") {
                await adapter.armedDeadline == start.addingTimeInterval(3.5)
            }
            #expect(states().last == .ready, "heard 0.5 s ago: not expired")
            #expect(!states().contains(.disconnected(.timeout)))
            clock.advance(to: start.addingTimeInterval(3.5))
            try await eventually("timed out 2 s after the last frame") { states().last == .disconnected(.timeout) }
            #expect(await adapter.adapterStatuses().map(\.name) == ["room-1"])

            // The wake-up belongs to the adapter: shut down, nothing sleeps on the clock any more.
            await send(topic, frame(2, heartRate: 72))
            try await eventually("ready and the wake-up armed") { clock.sleeperCount == 1 }
            await gateway.stop()
            await adapter.shutdown()
            #expect(clock.sleeperCount == 0)
        }
    }

    @Test(
        "with gateways' keys: only frames and backfill tagged with their own gateway's key are read; unsigned, wrongly keyed and another keyed gateway's frames for the strap are refused"
    )
    func signedGateways() async throws {
        try await withMosquitto { broker in
            let room1 = try #require(EnvelopeSigner(key: Array(repeating: 0x31, count: 32)))
            let room2 = try #require(EnvelopeSigner(key: Array(repeating: 0x32, count: 32)))
            var settings = MQTTSensorAdapter.Settings(client: options(broker, id: "hub"))
            settings.keys = ["room-1": room1, "room-2": room2]
            settings.maximumSkew = 3600
            let adapter = try MQTTSensorAdapter(settings: settings, clock: ManualWallClock(now: Date()), logger: logger)
            let received = Received()
            let events = adapter.events()
            let collector = Task { for await event in events { received.append(event) } }
            defer { collector.cancel() }
            let backfills = adapter.backfill()
            let batches = Mutex<[[Int]]>([])
            let backfillCollector = Task {
                for await batch in backfills {
                    let rates = batch.compactMap { m -> Int? in
                        if case .heartRateMeasurement(let f) = m.value { Int(f.heartRate) } else { nil }
                    }
                    batches.withLock { $0.append(rates) }
                }
            }
            defer { backfillCollector.cancel() }
            try await adapter.start()
            try await eventually("the hub connected") { await adapter.availability() == .ready }
            let gateway = try MQTTClient(options: options(broker, id: "gateway"), logger: logger)
            try await gateway.start()
            try await eventually("the gateway connected") { await gateway.isConnected }
            func heartRates() -> [Int] { received.heartRates }
            func send(_ topic: String, _ payload: [UInt8], qos: MQTTQoS = .atMostOnce) async {
                await gateway.publish(MQTTMessage(topic: topic, payload: payload, qos: qos, retain: false))
            }
            let otherTopic = "hrbridge/room-2/sensor/c0ffee000001/measurement"

            await send(topic, room1.signMeasurement(frame(0, heartRate: 60), topic: topic))
            try await eventually("the signed frame") { heartRates() == [60] }
            await send(topic, frame(1, heartRate: 99))
            await send(topic, room2.signMeasurement(frame(1, heartRate: 98), topic: topic))
            await send(topic, room1.signMeasurement(frame(1, heartRate: 97), topic: otherTopic))
            await send(otherTopic, room2.signMeasurement(frame(1, heartRate: 96), topic: otherTopic))
            await send(topic, room1.signMeasurement(frame(1, heartRate: 61), topic: topic))
            try await eventually("the next signed frame") { heartRates().last == 61 }
            #expect(heartRates() == [60, 61], "unsigned, room-2's key, a tag for another topic, room-2's own frame")
            #expect(await adapter.knownDevices().map(\.identity.adapter) == ["room-1"])

            // The gateway goes away: a gap the hub saw, which only a signed batch from room-1 fills.
            await gateway.publish(MQTTMessage(topic: "hrbridge/room-1/status", text: "offline", qos: .atLeastOnce))
            try await eventually("dropped by the Will") {
                received.events.withLock {
                    $0.last
                        == .connectionChanged(
                            SensorIdentity(adapter: "room-1", address: strap), .disconnected(.linkLost))
                }
            }
            let backfillTopic = "hrbridge/room-1/sensor/c0ffee000001/backfill"
            func batch(_ heartRate: UInt16) -> [UInt8] {
                RemoteBackfill.encode([
                    RemoteMeasurement(
                        sequence: 2, receivedAt: Date(), via: .connection, characteristic: .heartRateMeasurement,
                        bytes: HeartRateMeasurement(heartRate: heartRate, sensorContact: .detected).encoded())
                ])
            }
            await send(backfillTopic, batch(95), qos: .atLeastOnce)
            await send(backfillTopic, room2.signBatch(batch(94), topic: backfillTopic), qos: .atLeastOnce)
            await send(backfillTopic, room1.signBatch(batch(70), topic: backfillTopic), qos: .atLeastOnce)
            try await eventually("the signed batch") { batches.withLock { $0 } == [[70]] }

            // A gateway without a key cannot name a strap before its own gateway is heard.
            let secondTopic = "hrbridge/room-1/sensor/c0ffee000002/measurement"
            await send("hrbridge/stranger/sensor/c0ffee000002/state", Array(#"{"name": "Alice"}"#.utf8))
            await send(secondTopic, room1.signMeasurement(frame(0, heartRate: 80), topic: secondTopic))
            try await eventually("the second strap") {
                await adapter.knownDevices().contains { $0.identity.address == "C0:FF:EE:00:00:02" }
            }
            #expect(
                await adapter.knownDevices().first { $0.identity.address == "C0:FF:EE:00:00:02" }?.identity.name == nil)
            await gateway.stop()
            await adapter.shutdown()
        }
    }
}
