import Bridge
import BridgeClient
import Foundation
import GATT
import JSONSupport
import Samples
import Sensors
import Testing
import Wire

/// The per-frame lines are written by hand for speed; they must be the bytes `JSONEncoder` writes
/// for the same typed value, or a client could see two shapes of one message.
@Suite("hand-written JSON lines equal the encoder's")
struct HandWrittenJSONTests {
    /// Text a strap may advertise as its name: quotes, backslashes, every control character, non-ASCII.
    static let awkwardNames: [String?] = [
        nil, "Polar H10 A1B2C3D4", #"quote " and \ backslash"#, "tab\tnewline\nreturn\rbell\u{7}nul\u{0}",
        String((0..<0x20).map { Character(UnicodeScalar(UInt8($0))) }) + "\u{7F}", "Gürtel ❤️ 心拍 \u{2028}", "/slash/",
    ]

    @Test("measurement lines: random frames, with and without kind and session")
    func measurements() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2_000 {
            let frame = HeartRateMeasurement(
                heartRate: UInt16.random(in: 0...300, using: &generator),
                sensorContact: SensorContact.allCases.randomElement(using: &generator)!,
                energyExpended: Bool.random(using: &generator)
                    ? UInt16.random(in: 0...UInt16.max, using: &generator) : nil,
                rrIntervals: (0..<Int.random(in: 0...9, using: &generator)).map { _ in
                    RRInterval(raw: UInt16.random(in: 0...UInt16.max, using: &generator))
                })
            let date = Date(timeIntervalSince1970: Double.random(in: 0...4_102_444_800, using: &generator))
            let sensor = String(format: "C0:FF:EE:%02X:%02X:%02X", round % 256, round / 256, round % 7)
            let plain = MeasurementJSON(frame, receivedAt: date, sensor: sensor)
            #expect(
                MeasurementJSON.line(frame, receivedAt: date, sensor: sensor, kind: nil) == (try JSONText.line(plain)))
            let session = round.isMultiple(of: 2) ? UUID() : nil
            let tagged = TaggedJSON(kind: .measurement, session: session, payload: plain)
            #expect(
                MeasurementJSON.line(frame, receivedAt: date, sensor: sensor, session: session)
                    == (try JSONText.line(tagged)))
        }
    }

    @Test("sample lines: every type with random values, awkward strap names, every metadata combination")
    func samples() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<3_000 {
            let type = QuantityType.allCases[round % QuantityType.allCases.count]
            let start = Date(timeIntervalSince1970: Double.random(in: 0...4_102_444_800, using: &generator))
            let value = [
                Double.random(in: 0...250, using: &generator), Double(Int.random(in: 0...1000, using: &generator)),
                Double.random(in: -1e-9...1e-9, using: &generator), Double.random(in: 1e15...1e22, using: &generator),
            ][round % 4]
            let metadata = SampleMetadata(
                sensorContact: round % 3 == 0 ? nil : SensorContact.allCases[round % 3],
                rawRRInterval: round % 5 == 0 ? UInt16.random(in: 0...UInt16.max, using: &generator) : nil,
                counterReset: round % 7 == 0 ? Bool.random(using: &generator) : nil)
            let sample = try QuantitySample(
                type: type, quantity: Quantity(unit: type.canonicalUnit, value: value), start: start,
                end: start.addingTimeInterval(Double(round % 4)),
                source: SampleSource(
                    adapter: "hci\(round % 3)", address: "C0:FF:EE:00:00:\(String(format: "%02X", round % 256))",
                    name: Self.awkwardNames[round % Self.awkwardNames.count]),
                metadata: metadata)
            let session = round.isMultiple(of: 3) ? nil : UUID()
            let sensor = round.isMultiple(of: 4) ? nil : sample.source.address
            let typed = TaggedJSON(kind: .sample, session: session, sensor: sensor, payload: SampleJSON(sample))
            #expect(
                SampleJSON.line(sample, kind: .sample, session: session, sensor: sensor) == (try JSONText.line(typed)),
                "round \(round)")
        }
    }

    @Test("the hand writer's strings and numbers are the encoder's; NaN and infinity become null")
    func primitives() throws {
        var generator = SystemRandomNumberGenerator()
        let texts = Self.awkwardNames.compactMap { $0 } + ["", "\u{FEFF}bom", String(repeating: "é", count: 300)]
        for text in texts {
            var writer = JSONObjectWriter()
            writer.add("a", text)
            #expect(writer.text() == (try JSONText.line(["a": text])))
        }
        var numbers: [Double] = [
            0, -0.0, 1, -1, 0.1, 1e-7, .leastNonzeroMagnitude, 1e16, 1e15, 123_456_789.123, .greatestFiniteMagnitude,
        ]
        for _ in 0..<5_000 {
            numbers.append(Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator)))
        }
        for number in numbers where number.isFinite {
            var writer = JSONObjectWriter()
            writer.add("n", number)
            #expect(writer.text() == (try JSONText.line(["n": number])), "\(number)")
        }
        var writer = JSONObjectWriter()
        writer.add("values", [Double.nan, .infinity, 1])
        #expect(writer.text() == #"{"values":[null,null,1]}"#)
    }
}
