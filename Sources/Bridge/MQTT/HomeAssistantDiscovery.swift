import Foundation
import JSONSupport
public import MQTT
import Wire

/// Home Assistant MQTT discovery: the retained config messages that make a strap a device with
/// heart rate, zone, battery, RMSSD and connection entities, and the empty ones that remove it.
public enum HomeAssistantDiscovery {
    /// One entity of a strap's device.
    struct Entity {
        var component: String
        var object: String
        var name: String
        var fields: [String: JSONValue]
    }

    static func entities(_ topics: MQTTTopics, address: String) -> [Entity] {
        let template: (String) -> JSONValue = { .string("{{ value_json.\($0) }}") }
        return [
            Entity(
                component: "sensor", object: "heart_rate", name: "Heart rate",
                fields: [
                    "unit_of_measurement": .string("bpm"), "state_class": .string("measurement"),
                    "icon": .string("mdi:heart-pulse"),
                    "value_template": template("heartRate"),
                ]),
            Entity(
                component: "sensor", object: "zone", name: "Heart-rate zone",
                fields: [
                    "icon": .string("mdi:gauge"), "state_class": .string("measurement"),
                    "value_template": template("zone"),
                ]),
            Entity(
                component: "sensor", object: "battery", name: "Battery",
                fields: [
                    "device_class": .string("battery"), "unit_of_measurement": .string("%"),
                    "state_class": .string("measurement"),
                    "entity_category": .string("diagnostic"), "value_template": template("battery"),
                ]),
            Entity(
                component: "sensor", object: "rmssd", name: "RMSSD",
                fields: [
                    "unit_of_measurement": .string("ms"), "state_class": .string("measurement"),
                    "icon": .string("mdi:heart-flash"),
                    "value_template": template("rmssd"),
                ]),
            Entity(
                component: "binary_sensor", object: "connection", name: "Connection",
                fields: [
                    "device_class": .string("connectivity"), "entity_category": .string("diagnostic"),
                    "value_template": .string("{{ 'ON' if value_json.state == 'ready' else 'OFF' }}"),
                ]),
        ]
    }

    /// A node's name as the start of a Home Assistant entity id, which takes lowercase letters,
    /// digits and single `_` between them only (`Gym--1_` → `gym_1`; nothing left → `hrbridge`).
    static func entityName(node: String) -> String {
        var name = ""
        for scalar in node.lowercased().unicodeScalars {
            let kept = ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
            if kept {
                name.unicodeScalars.append(scalar)
            } else if !name.isEmpty, !name.hasSuffix("_") {
                name += "_"
            }
        }
        while name.hasSuffix("_") { name.removeLast() }
        return name.isEmpty ? "hrbridge" : name
    }

    /// The config messages of one strap (retained, QoS 1).
    public static func configs(for sensor: MQTTSensorState, topics: MQTTTopics, expireAfter: Int) -> [MQTTMessage] {
        let id = MQTTTopics.objectID(sensor.address)
        var device: [String: JSONValue] = [
            "identifiers": .array([.string("hrbridge_\(id)")]),
            "name": .string(sensor.name ?? "Heart-rate strap \(sensor.address)"),
            "connections": .array([.array([.string("mac"), .string(sensor.address.lowercased())])]),
        ]
        if let manufacturer = sensor.manufacturer { device["manufacturer"] = .string(manufacturer) }
        if let model = sensor.model { device["model"] = .string(model) }
        if let firmware = sensor.firmware { device["sw_version"] = .string(firmware) }
        return entities(topics, address: sensor.address).map { entity in
            var config = entity.fields
            config["name"] = .string(entity.name)
            config["unique_id"] = .string("\(topics.node)_\(id)_\(entity.object)")
            // The entity id Home Assistant gives it (`object_id` is ignored since 2026.4), written as
            // Home Assistant checks entity ids (``entityName(node:)``).
            config["default_entity_id"] = .string(
                "\(entity.component).\(entityName(node: topics.node))_\(id)_\(entity.object)")
            config["state_topic"] = .string(topics.sensor(sensor.address, .state))
            config["device"] = .object(device)
            config["origin"] = .object([
                "name": .string("hrbridge"), "support_url": .string("https://github.com/hrbridge/hrbridge"),
            ])
            // A gateway with a key follows the word with its boot, time and tag (docs/mqtt.md):
            // Home Assistant reads the first word.
            let word = JSONValue.string("{{ value.split(' ')[0] }}")
            var availability: [JSONValue] = [.object(["topic": .string(topics.status), "value_template": word])]
            if entity.component != "binary_sensor" {
                // The connection entity stays available (showing "off") while the strap is away.
                availability.append(
                    .object([
                        "topic": .string(topics.sensor(sensor.address, .availability)), "value_template": word,
                    ]))
                if expireAfter > 0 { config["expire_after"] = .number(Double(expireAfter)) }
            }
            config["availability"] = .array(availability)
            config["availability_mode"] = .string("all")
            let text = (try? JSONText.line(JSONValue.object(config))) ?? "{}"
            return MQTTMessage(
                topic: topics.discovery(entity.component, address: sensor.address, object: entity.object), text: text,
                qos: .atLeastOnce, retain: true)
        }
    }

    /// Empty retained messages that remove a forgotten strap's entities.
    public static func removals(address: String, topics: MQTTTopics) -> [MQTTMessage] {
        entities(topics, address: address).map { entity in
            MQTTMessage(
                topic: topics.discovery(entity.component, address: address, object: entity.object), payload: [],
                qos: .atLeastOnce, retain: true)
        }
    }
}
