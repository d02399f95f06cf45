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

    @Test("the hand writer's UUIDs are Foundation's, in lowercase")
    func uuids() throws {
        let edges = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
            UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
            UUID(
                uuid: (0xa0, 0x0a, 0xf0, 0x0f, 0x9a, 0xa9, 0x10, 0x01, 0x80, 0x08, 0xc3, 0x3c, 0x7e, 0xe7, 0x5b, 0xb5)),
        ]
        for uuid in edges + (0..<1_000).map({ _ in UUID() }) {
            var writer = JSONObjectWriter()
            writer.add("session", uuid)
            #expect(writer.text() == #"{"session":"\#(uuid.uuidString.lowercased())"}"#)
        }
    }

    @Test(
        "session lines: random live figures, store trouble, awkward names; ended sessions and plans go to the encoder")
    func sessions() throws {
        var generator = SystemRandomNumberGenerator()
        func number() -> Any {
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: NSNull()
            case 1: Double(Int.random(in: 0...300, using: &generator))
            case 2: Double.random(in: -1e-9...1e-9, using: &generator)
            case 3: Double.random(in: 1e15...1e22, using: &generator)
            default: Double.random(in: 0...250, using: &generator)
            }
        }
        func name() -> Any { Self.awkwardNames.randomElement(using: &generator)!.map { $0 as Any } ?? NSNull() }
        func decoded<Value: Decodable>(_ type: Value.Type, _ object: [String: Any]) throws -> Value {
            try JSONText.decode(type, from: JSONSerialization.data(withJSONObject: object))
        }
        func statistics() throws -> WorkoutJSON.Statistics {
            var object: [String: Any] = [
                "average": number(), "count": Int.random(in: 0...100_000, using: &generator), "max": number(),
                "min": number(), "mostRecent": number(), "sum": number(),
                "unit": ["count/min", "s", "%"].randomElement()!,
            ]
            if Bool.random(using: &generator) {
                object["bySource"] = (0..<Int.random(in: 0...3, using: &generator)).map { index in
                    [
                        "count": index, "date": Bool.random() ? "2027-01-15T08:00:30.125Z" : NSNull(),
                        "mostRecent": number(), "name": name(), "sensor": "C0:FF:EE:00:00:0\(index)",
                    ] as [String: Any]
                }
            }
            return try decoded(WorkoutJSON.Statistics.self, object)
        }
        for round in 0..<1_000 {
            var session = SessionJSON(
                id: UUID(), athlete: (name() as? String) ?? "alice", guest: Bool.random(using: &generator),
                state: ["running", "paused", "prepared"].randomElement(using: &generator)!,
                activity: "cycling", location: "indoor",
                sensors: (0..<Int.random(in: 0...3, using: &generator)).map { _ in (name() as? String) ?? "" },
                start: Date(timeIntervalSince1970: Double.random(in: 0...4_102_444_800, using: &generator)),
                elapsedTime: Double.random(in: 0...100_000, using: &generator))
            var figures: [String: WorkoutJSON.Statistics] = [:]
            for type in ["heartRate", "heartbeatSeries", "activeEnergyBurned", "batteryLevel", "cyclingPower"]
            where Bool.random(using: &generator) {
                figures[type] = try statistics()
            }
            let zones = try (0..<Int.random(in: 0...5, using: &generator)).map { index in
                try decoded(
                    WorkoutJSON.ZoneDuration.self,
                    [
                        "duration": Double.random(in: 0...5_000, using: &generator), "index": index, "lower": number(),
                        "upper": number(),
                    ])
            }
            let zone =
                Bool.random(using: &generator)
                ? try decoded(WorkoutJSON.Zone.self, ["index": 2, "lower": number(), "upper": number()]) : nil
            var window: [String: Any] = [
                "alpha1": number(), "artefactPercent": Double.random(in: 0...100, using: &generator),
                "artefacts": NSNull(), "beats": Int.random(in: 0...400, using: &generator),
                "end": Double.random(in: 0...7_200, using: &generator), "heartRate": 142.5, "power": number(),
                "reliable": Bool.random(using: &generator),
            ]
            if Bool.random(using: &generator) {
                window["artefacts"] = ["ectopic": 1, "extra": 0, "longShort": 3, "missed": round % 5]
            }
            let alpha1 = Bool.random(using: &generator) ? try decoded(WorkoutJSON.HRVWindow.self, window) : nil
            session.live = SessionJSON.Live(
                statistics: figures, zones: zones, zone: zone, rmssd: number() as? Double, alpha1: alpha1,
                activeEnergy: number() as? Double, laps: round % 4, plan: nil, hrvUnavailable: name() as? String)
            if round.isMultiple(of: 3) {
                session.store = try decoded(
                    StoreHealthJSON.self,
                    [
                        "error": round.isMultiple(of: 2) ? "disk full" : NSNull(), "lost": 0, "spilled": round,
                        "waiting": 12,
                    ])
            }
            let typed = TaggedJSON(kind: .session, session: session.id, payload: session)
            #expect(session.liveLine() == (try JSONText.line(typed)), "round \(round)")
            #expect(LiveMessage.session(session).json == (try JSONText.line(typed)))
        }
        // The rare shapes are the encoder's.
        let live = try JSONText.decode(SessionJSON.self, from: Data(WireDecodingTests.liveSession.utf8))
        #expect(live.live?.plan != nil && live.liveLine() == nil)
        let ended = try JSONText.decode(SessionJSON.self, from: Data(WireDecodingTests.endedSession.utf8))
        #expect(ended.liveLine() == nil)
        #expect(
            LiveMessage.session(ended).json
                == (try JSONText.line(TaggedJSON(kind: .session, session: ended.id, payload: ended))))
    }

    @Test("sensor lines: random statuses, awkward names and reasons, every state, refusals by reason")
    func sensors() throws {
        var generator = SystemRandomNumberGenerator()
        func maybe<Value>(_ value: @autoclosure () -> Value) -> Value? {
            Bool.random(using: &generator) ? value() : nil
        }
        func text() -> String? { Self.awkwardNames.randomElement(using: &generator)! }
        for round in 0..<2_000 {
            var status = SensorStatus(
                address: String(format: "C0:FF:EE:%02X:%02X:%02X", round % 256, round / 256, round % 7),
                adapter: ["hci0", "gw-1", #"odd "node"\"#].randomElement(using: &generator)!, name: text(),
                state: SensorState.allCases.randomElement(using: &generator)!, athlete: text())
            status.reason = text()
            status.heartRate = maybe(Int.random(in: 0...300, using: &generator))
            status.batteryLevel = maybe(Int.random(in: 0...100, using: &generator))
            status.rssi = maybe(Int.random(in: -127...20, using: &generator))
            status.lastMeasurement = maybe(
                Date(timeIntervalSince1970: Double.random(in: 0...4_102_444_800, using: &generator)))
            status.framesDecoded = Int.random(in: 0...Int(Int32.max), using: &generator)
            status.framesRefused = Int.random(in: 0...1_000, using: &generator)
            for reason in ["trailing_bytes", "unknown_length", "Zebra", "ärger", "a\"quote"]
            where Bool.random(using: &generator) {
                status.refusedByReason[reason] = Int.random(in: 1...1_000, using: &generator)
            }
            status.disconnections = Int.random(in: 0...50, using: &generator)
            status.session = maybe(UUID())
            status.athleteName = text()
            status.zone = maybe(Int.random(in: 1...5, using: &generator))
            status.percentOfMax = maybe(Int.random(in: 0...130, using: &generator))
            status.via = maybe(["connection", "advertisement"].randomElement(using: &generator)!)
            status.bonded = maybe(Bool.random(using: &generator))
            let typed = TaggedJSON(kind: .sensor, sensor: status.address, payload: status)
            #expect(status.liveLine() == (try JSONText.line(typed)), "round \(round)")
        }
    }
}
