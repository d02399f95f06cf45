public import Foundation
import GATT
import JSONSupport
public import Samples
import Sensors

/// The JSON shape of a quantity sample: `{"end","metadata","source","start","type","unit","value"}`.
public struct SampleJSON: Codable, Sendable, Equatable {
    /// Where the sample came from; `name` only when the strap advertised one.
    public struct Source: Codable, Sendable, Equatable {
        public var adapter: String
        public var address: String
        public var name: String?
    }

    /// What the strap said besides the value; each key only when present.
    public struct Metadata: Codable, Sendable, Equatable {
        public var sensorContact: String?
        /// The RR interval as sent, in 1/1024 s.
        public var rawRRInterval: Int?
        public var counterReset: Bool?
        /// How the frame came: `connection` (a link) or `advertisement` (a broadcast).
        public var via: String?
    }

    public var type: String
    public var value: Double
    public var unit: String
    public var start: String
    public var end: String
    public var source: Source
    public var metadata: Metadata

    /// The sample's JSON.
    public init(_ sample: QuantitySample) {
        type = sample.type.rawValue
        value = sample.quantity.value
        unit = sample.quantity.unit.symbol
        start = ISO8601.format(sample.start)
        end = ISO8601.format(sample.end)
        source = Source(adapter: sample.source.adapter, address: sample.source.address, name: sample.source.name)
        metadata = Metadata(
            sensorContact: sample.metadata.sensorContact?.rawValue,
            rawRRInterval: sample.metadata.rawRRInterval.map(Int.init),
            counterReset: sample.metadata.counterReset, via: sample.metadata.via?.rawValue)
    }

    /// The same object written by hand, with the routing keys of a live or `--json` line (`kind`,
    /// `session`, `sensor`) among its own: one per sample per frame, so it skips `JSONEncoder`.
    /// `SampleJSONTests` holds it to the encoder's bytes.
    public static func line(_ sample: QuantitySample, kind: LiveMessageKind, session: UUID?, sensor: String?) -> String
    {
        var object = JSONObjectWriter()
        object.add("end", ISO8601.format(sample.end))
        object.add("kind", kind.rawValue)
        object.addObject("metadata") { metadata in
            if let raw = sample.metadata.counterReset { metadata.add("counterReset", raw) }
            if let raw = sample.metadata.rawRRInterval { metadata.add("rawRRInterval", Int(raw)) }
            if let contact = sample.metadata.sensorContact { metadata.add("sensorContact", contact.rawValue) }
            if let via = sample.metadata.via { metadata.add("via", via.rawValue) }
        }
        if let sensor { object.add("sensor", sensor) }
        if let session { object.add("session", session) }
        object.addObject("source") { source in
            source.add("adapter", sample.source.adapter)
            source.add("address", sample.source.address)
            if let name = sample.source.name { source.add("name", name) }
        }
        object.add("start", ISO8601.format(sample.start))
        object.add("type", sample.type.rawValue)
        object.add("unit", sample.quantity.unit.symbol)
        object.add("value", sample.quantity.value)
        return object.text()
    }
}
