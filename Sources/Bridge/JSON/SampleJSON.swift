import Foundation
import GATT
public import Samples
import Sensors

/// The JSON shape of a quantity sample.
public enum SampleJSON {
    /// The JSON object of a sample.
    public static func object(_ sample: QuantitySample) -> [String: Any] {
        var source: [String: Any] = ["adapter": sample.source.adapter, "address": sample.source.address]
        if let name = sample.source.name { source["name"] = name }
        var metadata: [String: Any] = [:]
        if let contact = sample.metadata.sensorContact { metadata["sensorContact"] = contact.rawValue }
        if let raw = sample.metadata.rawRRInterval { metadata["rawRRInterval"] = Int(raw) }
        if let reset = sample.metadata.counterReset { metadata["counterReset"] = reset }
        return [
            "type": sample.type.rawValue,
            "value": sample.quantity.value,
            "unit": sample.quantity.unit.symbol,
            "start": ISO8601.format(sample.start),
            "end": ISO8601.format(sample.end),
            "source": source,
            "metadata": metadata,
        ]
    }
}
