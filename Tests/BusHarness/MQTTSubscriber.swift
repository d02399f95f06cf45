import Foundation

/// A third-party MQTT subscriber (PyPI paho-mqtt, `Tests/Fixtures/mqtt/subscriber.py`): what any
/// client of the broker would read.
public final class MQTTSubscriber: Sendable {
    /// One message it received.
    public struct Received: Sendable, Equatable {
        public var topic: String
        public var payload: String
        public var retain: Bool
        public var qos: Int

        /// The payload as a JSON object, when it is one (for a peer's format, or the raw shape).
        public var object: [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any]
        }

        /// The payload as `Value`, when it is one.
        public func decode<Value: Decodable>(_ type: Value.Type) -> Value? {
            try? JSONDecoder().decode(type, from: Data(payload.utf8))
        }
    }

    private let process: Spawned

    /// Subscribes to `filters` on the broker's plain port (or its TLS port, checking the test CA)
    /// and returns once every subscription is acknowledged. `clientID` with `persistent`: a session
    /// the broker keeps (and queues QoS 1 messages for) while the subscriber is away.
    public init(
        broker: MosquittoBroker, filters: [String], clientID: String? = nil, persistent: Bool = false,
        tls: Bool = false, username: String? = nil, password: String? = nil
    ) async throws {
        var arguments = [packageRoot.appendingPathComponent("Tests/Fixtures/mqtt/subscriber.py").path]
        arguments += ["--port", String(tls ? broker.tlsPort ?? broker.port : broker.port)]
        if let clientID { arguments += ["--client-id", clientID] }
        if persistent { arguments.append("--persistent") }
        if tls { arguments += ["--cafile", broker.caFile] }
        if let username { arguments += ["--username", username, "--password", password ?? ""] }
        process = try await Spawned.startPeer(venvPython, arguments + filters, label: "paho subscriber") { peer in
            peer.output.contains { $0.contains("\"ready\"") }
        }
    }

    /// Every message so far, in arrival order.
    public var messages: [Received] {
        process.output.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let topic = object["topic"] as? String, let payload = object["payload"] as? String
            else { return nil }
            return Received(
                topic: topic, payload: payload, retain: object["retain"] as? Bool ?? false,
                qos: object["qos"] as? Int ?? 0)
        }
    }

    /// The messages on `topic`.
    public func messages(on topic: String) -> [Received] { messages.filter { $0.topic == topic } }

    /// How many times it has been (re)subscribed.
    public var readyCount: Int { process.output.filter { $0.contains("\"ready\"") }.count }

    /// Waits until a message satisfies `predicate` and returns it.
    @discardableResult
    public func waitFor(_ what: String, _ predicate: @escaping (Received) -> Bool) async throws -> Received {
        var found: Received?
        try await eventually(what) {
            found = messages.first(where: predicate)
            return found != nil
        }
        return found!
    }

    /// Stops it by PID.
    public func stop() { process.stop() }
}

/// Publishes one message with paho-mqtt (QoS 1) and waits for the broker's acknowledgement.
public func mqttPublish(broker: MosquittoBroker, topic: String, payload: String, retain: Bool = false) async throws {
    let script = packageRoot.appendingPathComponent("Tests/Fixtures/mqtt/publish.py").path
    let publisher = try Spawned(
        venvPython, [script, "--port", String(broker.port)] + (retain ? ["--retain"] : []) + [topic, payload],
        label: "paho publish")
    guard await publisher.wait() == 0 else { throw HarnessError("publishing to \(topic) failed: \(publisher.report)") }
}
