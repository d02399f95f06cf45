import MQTT
import Testing

@Suite struct MQTTOutboxTests {
    @Test func keepsOrderAcrossLiveValuesAndEvents() {
        var outbox = MQTTOutbox()
        outbox.append(MQTTMessage(topic: "a/state", text: "1"))
        outbox.append(MQTTMessage(topic: "a/event", text: "lap", qos: .atLeastOnce))
        outbox.append(MQTTMessage(topic: "b/state", text: "2"))
        #expect(outbox.drain().map(\.text) == ["1", "lap", "2"])
        #expect(outbox.isEmpty)
    }

    @Test func aNewerLiveValueReplacesTheWaitingOne() {
        var outbox = MQTTOutbox()
        outbox.append(MQTTMessage(topic: "a/state", text: "1"))
        outbox.append(MQTTMessage(topic: "b/state", text: "x"))
        outbox.append(MQTTMessage(topic: "a/state", text: "2"))
        #expect(outbox.drain().map(\.text) == ["x", "2"])
        #expect(outbox.droppedLive == 1)
    }

    @Test func liveValuesBeyondTheLimitDropTheOldestAndEventsStay() {
        var outbox = MQTTOutbox(liveLimit: 3, eventLimit: 100)
        for index in 0..<10 {
            outbox.append(MQTTMessage(topic: "s\(index)/state", text: "\(index)"))
            outbox.append(MQTTMessage(topic: "session/event", text: "e\(index)", qos: .atLeastOnce))
        }
        let drained = outbox.drain()
        #expect(drained.filter { $0.qos == .atLeastOnce }.count == 10)
        #expect(drained.filter { $0.qos == .atMostOnce }.map(\.text) == ["7", "8", "9"])
        #expect(outbox.droppedLive == 7)
        #expect(outbox.droppedEvents == 0)
    }

    @Test func eventsAreBoundedToo() {
        var outbox = MQTTOutbox(liveLimit: 3, eventLimit: 2000)
        for index in 0..<5000 { outbox.append(MQTTMessage(topic: "e", text: "\(index)", qos: .atLeastOnce)) }
        #expect(outbox.count == 2000)
        #expect(outbox.droppedEvents == 3000)
        let drained = outbox.drain()
        #expect(drained.first?.text == "3000")
        #expect(drained.last?.text == "4999")
    }

    @Test func brokerURLs() throws {
        #expect(
            try MQTTBrokerURL(parsing: "mqtt://localhost")
                == MQTTBrokerURL(host: "localhost", port: 1883, usesTLS: false))
        #expect(
            try MQTTBrokerURL(parsing: "mqtts://broker.lan:8884")
                == MQTTBrokerURL(host: "broker.lan", port: 8884, usesTLS: true))
        #expect(try MQTTBrokerURL(parsing: "mqtt://[::1]:1884").host == "::1")
        #expect(throws: MQTTError.self) { try MQTTBrokerURL(parsing: "http://localhost") }
        #expect(throws: MQTTError.self) { try MQTTBrokerURL(parsing: "mqtt://user:secret@localhost") }
        #expect(throws: MQTTError.self) { try MQTTBrokerURL(parsing: "mqtt://localhost/topic") }
        #expect(throws: MQTTError.self) { try MQTTBrokerURL(parsing: "mqtt://") }
    }
}
