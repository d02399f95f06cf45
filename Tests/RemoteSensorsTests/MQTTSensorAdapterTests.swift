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

/// Payloads as they arrive.
final class Payloads: Sendable {
    private let list = Mutex<[[UInt8]]>([])
    func append(_ payload: [UInt8]) { list.withLock { $0.append(payload) } }
    var all: [[UInt8]] { list.withLock { $0 } }
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

    /// The hub's adapter with `settings` on `clock`, not started; its events collected into
    /// `received` until the caller cancels `collector`.
    func collectingHub(_ settings: MQTTSensorAdapter.Settings, clock: any WallClock) throws -> (
        adapter: MQTTSensorAdapter, received: Received, collector: Task<Void, Never>
    ) {
        let adapter = try MQTTSensorAdapter(settings: settings, clock: clock, logger: logger)
        let received = Received()
        let events = adapter.events()
        return (adapter, received, Task { for await event in events { received.append(event) } })
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
            let (adapter, received, collector) = try collectingHub(settings, clock: clock)
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
            let (adapter, received, collector) = try collectingHub(settings, clock: ManualWallClock(now: Date()))
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
            let boot: UInt64 = 1_767_225_600_000

            await send(topic, room1.signMeasurement(frame(0, heartRate: 60), topic: topic, boot: boot))
            try await eventually("the signed frame") { heartRates() == [60] }
            await send(topic, frame(1, heartRate: 99))
            await send(topic, room2.signMeasurement(frame(1, heartRate: 98), topic: topic, boot: boot))
            await send(topic, room1.signMeasurement(frame(1, heartRate: 97), topic: otherTopic, boot: boot))
            await send(otherTopic, room2.signMeasurement(frame(1, heartRate: 96), topic: otherTopic, boot: boot))
            await send(topic, room1.signMeasurement(frame(1, heartRate: 95), topic: topic))
            await send(topic, room1.signMeasurement(frame(1, heartRate: 61), topic: topic, boot: boot))
            try await eventually("the next signed frame") { heartRates().last == 61 }
            #expect(
                heartRates() == [60, 61],
                "unsigned, room-2's key, a tag for another topic, room-2's own frame, a frame without its boot")
            #expect(await adapter.knownDevices().map(\.identity.adapter) == ["room-1"])

            // The gateway goes away (its Will, signed for this boot): a gap the hub saw, which only
            // a signed batch from room-1 fills.
            let statusTopic = "hrbridge/room-1/status"
            await gateway.publish(
                MQTTMessage(
                    topic: statusTopic, payload: room1.signStatus(.offline, topic: statusTopic, boot: boot, at: Date()),
                    qos: .atLeastOnce))
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
            await send(secondTopic, room1.signMeasurement(frame(0, heartRate: 80), topic: secondTopic, boot: boot))
            try await eventually("the second strap") {
                await adapter.knownDevices().contains { $0.identity.address == "C0:FF:EE:00:00:02" }
            }
            #expect(
                await adapter.knownDevices().first { $0.identity.address == "C0:FF:EE:00:00:02" }?.identity.name == nil)
            await gateway.stop()
            await adapter.shutdown()
        }
    }

    @Test(
        "a gateway's key rotated: both keys read until its first frame tagged with the next one, then only that one (an old-key frame or offline refused); the hub's replay requests are signed with the key the gateway last used"
    )
    func rotatedKey() async throws {
        try await withMosquitto { broker in
            let old = try #require(EnvelopeSigner(key: Array(repeating: 0x31, count: 32)))
            let new = try #require(EnvelopeSigner(key: Array(repeating: 0x33, count: 32)))
            var settings = MQTTSensorAdapter.Settings(client: options(broker, id: "hub"))
            settings.keys = ["room-1": old]
            settings.nextKeys = ["room-1": new]
            settings.maximumSkew = 3600
            let (adapter, received, collector) = try collectingHub(settings, clock: ManualWallClock(now: Date()))
            defer { collector.cancel() }
            try await adapter.start()
            try await eventually("the hub connected") { await adapter.availability() == .ready }

            // The gateway, listening for the hub's requests as a gateway does.
            let gateway = try MQTTClient(options: options(broker, id: "gateway"), logger: logger)
            let replayTopic = ReplayRequest.topic(node: "room-1")
            await gateway.subscribe(replayTopic)
            let requests = Payloads()
            let gatewayEvents = gateway.events
            let listener = Task {
                for await event in gatewayEvents {
                    if case .message(let message) = event { requests.append(message.payload) }
                }
            }
            defer { listener.cancel() }
            try await gateway.start()
            try await eventually("the gateway connected") { await gateway.isConnected }
            await gateway.publish(MQTTMessage(topic: replayTopic, text: "subscribed", qos: .atLeastOnce))
            try await eventually("the gateway's subscription in place") { requests.all.count == 1 }

            let boot: UInt64 = 1_767_225_600_000
            let start = Date().addingTimeInterval(-60)
            func send(_ sequence: UInt32, heartRate: UInt16, by key: EnvelopeSigner) async {
                let envelope = RemoteMeasurement(
                    sequence: sequence, receivedAt: start.addingTimeInterval(Double(sequence)), via: .connection,
                    characteristic: .heartRateMeasurement,
                    bytes: HeartRateMeasurement(heartRate: heartRate, sensorContact: .detected).encoded()
                ).encoded()
                await gateway.publish(
                    MQTTMessage(topic: topic, payload: key.signMeasurement(envelope, topic: topic, boot: boot)))
            }
            // The first message is the marker.
            func request(_ index: Int) throws -> [UInt8] { try #require(requests.all.dropFirst(1 + index).first) }

            await send(0, heartRate: 60, by: old)
            try await eventually("the frame tagged with the old key") { received.heartRates == [60] }
            // Frames 1 and 2 lost: asked for, signed with the key the gateway signs with.
            await send(3, heartRate: 61, by: old)
            try await eventually("the first request") { requests.all.count == 2 }
            #expect(ReplayRequest(payload: try request(0), topic: replayTopic, signer: old) != nil)
            #expect(ReplayRequest(payload: try request(0), topic: replayTopic, signer: new) == nil)

            // The gateway moves to its next key; from then on its old key is refused.
            await send(4, heartRate: 62, by: new)
            await send(5, heartRate: 99, by: old)
            // Frames 5 to 7 missing: asked for with the next key.
            await send(8, heartRate: 63, by: new)
            try await eventually("the second request") { requests.all.count == 3 }
            #expect(received.heartRates == [60, 61, 62, 63])
            #expect(ReplayRequest(payload: try request(1), topic: replayTopic, signer: new) != nil)
            #expect(ReplayRequest(payload: try request(1), topic: replayTopic, signer: old) == nil)

            // An offline tagged with the old key lets no strap go; one tagged with the new key does.
            let statusTopic = "hrbridge/room-1/status"
            func ready() async -> Bool {
                await adapter.knownDevices().first { $0.identity.address == strap }?.connected == true
            }
            await gateway.publish(
                MQTTMessage(
                    topic: statusTopic, payload: old.signStatus(.offline, topic: statusTopic, boot: boot, at: Date()),
                    qos: .atLeastOnce))
            try await eventually("the old key's frame and offline refused") {
                await adapter.refusals == ["bad_signature": 2]
            }
            #expect(await ready(), "the strap streams on")
            await gateway.publish(
                MQTTMessage(
                    topic: statusTopic, payload: new.signStatus(.offline, topic: statusTopic, boot: boot, at: Date()),
                    qos: .atLeastOnce))
            try await eventually("dropped by the offline tagged with the next key") { await ready() == false }
            await gateway.stop()
            await adapter.shutdown()
        }
    }
}

/// The hub's adapter holding gateways' keys, fed messages directly as its broker connection hands
/// them over (never connected: no broker), on the test's clock.
@Suite("The MQTT sensor adapter with gateways' keys: signed offline and boots (messages fed directly)")
struct MQTTSensorAdapterKeyTests {
    let logger = Logger(label: "remote-test")
    let strap = "C0:FF:EE:00:00:01"
    let topic = "hrbridge/room-1/sensor/c0ffee000001/measurement"
    let statusTopic = "hrbridge/room-1/status"
    let availabilityTopic = "hrbridge/room-1/sensor/c0ffee000001/availability"

    /// A hub holding `keys`, on `clock`; it never connects.
    func hub(keys: [String: EnvelopeSigner], clock: ManualWallClock) throws -> MQTTSensorAdapter {
        var settings = MQTTSensorAdapter.Settings(
            client: MQTTClient.Options(
                broker: MQTTBrokerURL(host: "127.0.0.1", port: 1883, usesTLS: false), clientID: "hub"))
        settings.keys = keys
        return try MQTTSensorAdapter(settings: settings, clock: clock, logger: logger)
    }

    /// A frame of `boot` signed with `signer`, dated `date` by its gateway.
    func frame(
        _ sequence: UInt32, heartRate: UInt16 = 60, boot: UInt64?, signer: EnvelopeSigner, at date: Date
    ) -> MQTTMessage {
        let envelope = RemoteMeasurement(
            sequence: sequence, receivedAt: date, via: .connection, characteristic: .heartRateMeasurement,
            bytes: HeartRateMeasurement(heartRate: heartRate, sensorContact: .detected).encoded()
        ).encoded()
        return MQTTMessage(topic: topic, payload: signer.signMeasurement(envelope, topic: topic, boot: boot))
    }

    @Test(
        "with keys, an unsigned or wrongly signed offline on a gateway's status or a strap's availability is refused and counted and the strap streams on; a signed one of the running boot drops it, a Will sent again does not; a signed online of a new boot makes the old boot's frames stale at once"
    )
    func signedOffline() async throws {
        let room1 = try #require(EnvelopeSigner(key: Array(repeating: 0x31, count: 32)))
        let room2 = try #require(EnvelopeSigner(key: Array(repeating: 0x32, count: 32)))
        let clock = ManualWallClock(now: Date(timeIntervalSince1970: 1_800_000_000))
        let adapter = try hub(keys: ["room-1": room1, "room-2": room2], clock: clock)
        let boot: UInt64 = 1_799_999_000_000
        func ready() async -> Bool {
            await adapter.knownDevices().first(where: { $0.identity.address == strap })?.connected == true
        }
        func signed(_ topic: String, on tagTopic: String? = nil, by signer: EnvelopeSigner, at date: Date)
            -> MQTTMessage
        {
            MQTTMessage(
                topic: topic, payload: signer.signStatus(.offline, topic: tagTopic ?? topic, boot: boot, at: date),
                qos: .atLeastOnce, retain: true)
        }

        await adapter.receive(frame(0, boot: boot, signer: room1, at: clock.now()))
        #expect(await ready())
        // Anyone on a broker without ACLs: the plain word on the status and on the availability,
        // another gateway's key, a made-up tag, a tag made for another topic.
        await adapter.receive(MQTTMessage(topic: statusTopic, text: "offline", qos: .atLeastOnce, retain: true))
        await adapter.receive(MQTTMessage(topic: availabilityTopic, text: "offline", qos: .atLeastOnce, retain: true))
        await adapter.receive(signed(statusTopic, by: room2, at: clock.now()))
        await adapter.receive(
            MQTTMessage(topic: statusTopic, text: "offline \(boot) 1800000000000 " + String(repeating: "0", count: 64)))
        await adapter.receive(signed(statusTopic, on: availabilityTopic, by: room1, at: clock.now()))
        #expect(await ready(), "the strap streams on")
        #expect(await adapter.refusals == ["bad_signature": 5])
        // What changes nothing is no refusal: online, an empty retained payload.
        await adapter.receive(MQTTMessage(topic: statusTopic, text: "online"))
        await adapter.receive(MQTTMessage(topic: availabilityTopic, payload: [], qos: .atLeastOnce, retain: true))
        #expect(await adapter.refusals == ["bad_signature": 5])

        // Its Will, signed when it connected a minute ago: the strap goes.
        let will = signed(statusTopic, by: room1, at: clock.now().addingTimeInterval(-60))
        await adapter.receive(will)
        #expect(await ready() == false)
        // Back; the same Will sent again (the broker hands it to anyone once it is published).
        clock.advance(by: 1)
        await adapter.receive(frame(1, boot: boot, signer: room1, at: clock.now()))
        #expect(await ready())
        await adapter.receive(will)
        #expect(await ready(), "a Will lets the straps go once per boot")
        #expect(await adapter.refusals == ["bad_signature": 5, "replayed": 1])

        // The strap's availability, signed when said: it goes; sent again once the strap is back
        // (older than its frames): nothing.
        clock.advance(by: 1)
        let availability = signed(availabilityTopic, by: room1, at: clock.now())
        await adapter.receive(availability)
        #expect(await ready() == false)
        clock.advance(by: 1)
        await adapter.receive(frame(2, boot: boot, signer: room1, at: clock.now()))
        await adapter.receive(availability)
        #expect(await ready())
        #expect(await adapter.refusals == ["bad_signature": 5, "replayed": 2])

        // Its farewell, signed when said (later than its Will): the strap goes.
        clock.advance(by: 1)
        await adapter.receive(signed(statusTopic, by: room1, at: clock.now()))
        #expect(await ready() == false)

        // It starts again: its signed `online` comes before any frame of the new boot, and a
        // frame of the boot before, sent again, no longer passes for live.
        clock.advance(by: 1)
        let newBoot = boot + 10_000
        await adapter.receive(
            MQTTMessage(
                topic: statusTopic,
                payload: room1.signStatus(.online, topic: statusTopic, boot: newBoot, at: clock.now()),
                qos: .atLeastOnce, retain: true))
        await adapter.receive(frame(3, boot: boot, signer: room1, at: clock.now()))
        #expect(await ready() == false)
        #expect(await adapter.refusals == ["bad_signature": 5, "replayed": 2, "stale_boot": 1])
        await adapter.receive(frame(0, boot: newBoot, signer: room1, at: clock.now()))
        #expect(await ready())
        await adapter.shutdown()
    }

    @Test(
        "with keys, a frame of a gateway's earlier boot sent again after it restarted is refused and counted, though later in sequence and within the skew; the new boot's frames go on; a frame without its boot is refused"
    )
    func bootsAfterRestart() async throws {
        let room1 = try #require(EnvelopeSigner(key: Array(repeating: 0x31, count: 32)))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let clock = ManualWallClock(now: start)
        let adapter = try hub(keys: ["room-1": room1], clock: clock)
        let received = Received()
        let events = adapter.events()
        let collector = Task { for await event in events { received.append(event) } }
        defer { collector.cancel() }
        let bootA: UInt64 = 1_799_999_990_000
        let bootB: UInt64 = 1_800_000_001_500
        func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

        for sequence in UInt32(1)...10 {
            clock.advance(to: at(Double(sequence) / 10))
            await adapter.receive(
                frame(sequence, heartRate: 60 + UInt16(sequence), boot: bootA, signer: room1, at: clock.now()))
        }
        // Frame 11 of boot A, captured as it went out at 1.1 s; the gateway restarts (boot B).
        let captured = frame(11, heartRate: 71, boot: bootA, signer: room1, at: at(1.1))
        clock.advance(to: at(2))
        await adapter.receive(frame(1, heartRate: 101, boot: bootB, signer: room1, at: clock.now()))
        // Sent again at 2.5 s: 1.4 s behind the hub (within the skew), later in sequence than boot B's.
        clock.advance(to: at(2.5))
        await adapter.receive(captured)
        clock.advance(to: at(3))
        await adapter.receive(frame(2, heartRate: 102, boot: bootB, signer: room1, at: clock.now()))
        // Signed, but without its boot.
        await adapter.receive(frame(3, heartRate: 103, boot: nil, signer: room1, at: clock.now()))
        await adapter.receive(frame(3, heartRate: 104, boot: bootB, signer: room1, at: clock.now()))
        try await eventually("boot B's frames") { received.heartRates.last == 104 }
        #expect(received.heartRates == Array(61...70) + [101, 102, 104])
        #expect(await adapter.refusals == ["stale_boot": 1, "bad_boot": 1])
        await adapter.shutdown()
    }

    @Test(
        "a gateway's switch to its next key is handed to the record as it happens; a hub started with the gateway recorded as switched refuses the old key from the first message"
    )
    func keySwitchRecorded() async throws {
        let old = try #require(EnvelopeSigner(key: Array(repeating: 0x31, count: 32)))
        let new = try #require(EnvelopeSigner(key: Array(repeating: 0x33, count: 32)))
        let clock = ManualWallClock(now: Date(timeIntervalSince1970: 1_800_000_000))
        let boot: UInt64 = 1_799_999_000_000
        let records = RecordBox()
        func adapter(switched: Set<String>) throws -> MQTTSensorAdapter {
            var settings = MQTTSensorAdapter.Settings(
                client: MQTTClient.Options(
                    broker: MQTTBrokerURL(host: "127.0.0.1", port: 1883, usesTLS: false), clientID: "hub"))
            settings.keys = ["room-1": old, "room-2": old]
            settings.nextKeys = ["room-1": new]
            settings.switchedKeys = switched
            settings.recordKeySwitches = { records.append($0) }
            return try MQTTSensorAdapter(settings: settings, clock: clock, logger: logger)
        }

        let first = try adapter(switched: [])
        await first.receive(frame(0, boot: boot, signer: old, at: clock.now()))
        #expect(await first.refusals.isEmpty)
        #expect(records.all.isEmpty, "nothing switched yet")
        await first.receive(frame(1, boot: boot, signer: new, at: clock.now()))
        await first.keySwitchesRecorded()
        #expect(records.all == [KeySwitchRecord(fingerprints: ["room-1": new.fingerprint])])
        await first.receive(frame(2, boot: boot, signer: new, at: clock.now()))
        await first.keySwitchesRecorded()
        #expect(records.all.count == 1, "recorded once")
        await first.shutdown()

        // Started again with the record: the old key is refused at once, the next one read.
        let second = try adapter(switched: ["room-1"])
        await second.receive(frame(3, boot: boot, signer: old, at: clock.now()))
        #expect(await second.refusals == ["bad_signature": 1])
        await second.receive(frame(4, boot: boot, signer: new, at: clock.now()))
        #expect(await second.refusals == ["bad_signature": 1])
        #expect(await second.knownDevices().first { $0.identity.address == strap }?.connected == true)
        await second.keySwitchesRecorded()
        #expect(records.all.count == 1, "no new switch to record")
        await second.shutdown()
    }
}

/// Records of switched keys, as the adapter hands them over.
final class RecordBox: Sendable {
    private let list = Mutex<[KeySwitchRecord]>([])
    func append(_ record: KeySwitchRecord) { list.withLock { $0.append(record) } }
    var all: [KeySwitchRecord] { list.withLock { $0 } }
}
