import BridgeOut
import FoundationEssentials
import GATT
import Sensors
import Testing

@Suite("relay: what the heart-rate peripheral sends")
struct HeartRateRelayTests {
    private let strap = SensorIdentity(adapter: "hci0", address: "C1:00:00:00:00:0A")
    private let other = SensorIdentity(adapter: "hci0", address: "C1:00:00:00:00:0B")

    private func frame(_ sensor: SensorIdentity, _ bytes: [UInt8]) throws -> SensorEvent {
        let value = GATTValue.heartRateMeasurement(try HeartRateMeasurement(bytes: bytes))
        return .measurement(
            SensorMeasurement(
                sensor: sensor, characteristic: .heartRateMeasurement, value: value,
                receivedAt: Date(timeIntervalSince1970: 0)))
    }

    private func sent(_ actions: [HeartRateRelay.Action]) -> [[UInt8]] {
        actions.compactMap { if case .send(let frame) = $0 { frame.encoded() } else { nil } }
    }

    @Test(
        "frames of the followed strap pass on byte for byte when they fit",
        arguments: [
            [0x00, 72] as [UInt8],  // uint8, no contact support
            [0x06, 72],  // contact detected
            [0x04, 72],  // contact supported, not detected: said as the strap says it
            [0x16, 65, 0x40, 0x04, 0x00, 0x04],  // two RR
            [0x01, 0x2C, 0x01],  // uint16 300 bpm
            [0x10, 80] + Array(repeating: 0x11, count: 18),  // nine RR: exactly 20 bytes
        ])
    func passThrough(bytes: [UInt8]) throws {
        var relay = HeartRateRelay(address: "c1:00:00:00:00:0a")
        #expect(sent(relay.handle(try frame(strap, bytes))) == [bytes])
        #expect(relay.framesIn == 1 && relay.framesOut == 1)
    }

    @Test("other straps, other characteristics and a strap not followed send nothing")
    func onlyTheFollowedStrap() throws {
        var relay = HeartRateRelay(address: strap.address)
        #expect(relay.handle(try frame(other, [0x00, 72])).isEmpty)
        var idle = HeartRateRelay(address: nil)
        #expect(idle.handle(try frame(strap, [0x00, 72])).isEmpty)
        #expect(relay.handle(.batteryLevel(other, 50)).isEmpty)
        #expect(relay.handle(.batteryLevel(strap, 50)) == [.battery(50)])
    }

    @Test("a frame that would not fit 20 bytes is split: every RR once, in order, heart rate repeated, energy once")
    func split() throws {
        let intervals: [UInt16] = (1...12).map { 800 + $0 }
        let bytes: [UInt8] = [0x1E, 44, 0x2C, 0x01] + intervals.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        var relay = HeartRateRelay(address: strap.address, options: .init(forwardEnergy: true))
        let frames = relay.handle(try frame(strap, bytes)).compactMap {
            if case .send(let frame) = $0 { frame } else { nil }
        }
        #expect(frames.allSatisfy { $0.encoded().count <= 20 })
        #expect(frames.flatMap(\.rrIntervals).map(\.raw) == intervals)
        #expect(frames.map(\.heartRate) == Array(repeating: 44, count: frames.count))
        #expect(frames.compactMap(\.energyExpended) == [300])
        #expect(frames.map(\.sensorContact) == Array(repeating: .detected, count: frames.count))
        #expect(frames.count == 2)
    }

    @Test("energy and RR are left out unless forwarded")
    func options() throws {
        var relay = HeartRateRelay(address: strap.address, options: .init(forwardRR: false))
        #expect(sent(relay.handle(try frame(strap, [0x1E, 72, 0x10, 0x00, 0x40, 0x04]))) == [[0x06, 72]])
    }

    @Test("the strap dropping and coming back is said once each; nothing is sent meanwhile")
    func drop() throws {
        var relay = HeartRateRelay(address: strap.address)
        #expect(relay.handle(.connectionChanged(strap, .connecting)).isEmpty)
        #expect(relay.handle(.connectionChanged(strap, .ready)) == [.source(strap, up: true)])
        #expect(relay.handle(.connectionChanged(strap, .disconnected(.linkLost))) == [.source(strap, up: false)])
        #expect(relay.handle(.connectionChanged(strap, .disconnected(.timeout))).isEmpty)
        #expect(relay.handle(.connectionChanged(strap, .ready)) == [.source(strap, up: true)])
    }

    @Test("following another strap (the session's primary changed)")
    func follow() throws {
        var relay = HeartRateRelay(address: strap.address)
        _ = relay.handle(.connectionChanged(strap, .ready))
        relay.follow(other.address)
        #expect(relay.handle(try frame(strap, [0x00, 72])).isEmpty)
        #expect(sent(relay.handle(try frame(other, [0x00, 99]))) == [[0x00, 99]])
        #expect(!relay.isUp)
        relay.follow(strap.address, isUp: true)
        #expect(relay.isUp, "a strap already streaming when followed")
        relay.follow(nil, isUp: true)
        #expect(!relay.isUp, "no strap is never up")
    }

    @Test("a strap up before its events were heard: its link as the sensors know it")
    func linkKnownAtStart() {
        var relay = HeartRateRelay(address: strap.address)
        relay.linkIs(up: true)
        #expect(relay.isUp)
        #expect(relay.handle(.connectionChanged(strap, .ready)).isEmpty, "already up: nothing to say")
        #expect(relay.handle(.connectionChanged(strap, .disconnected(.linkLost))) == [.source(strap, up: false)])
        var none = HeartRateRelay(address: nil)
        none.linkIs(up: true)
        #expect(!none.isUp, "no strap is never up")
    }

    /// What an app is sent as energy for each step (`nil`: a reset written, or a frame without energy).
    enum EnergyStep: Sendable {
        case count(UInt16, sent: UInt16)
        case reset
        case follow(SensorIdentity)
    }

    @Test(
        "an app's reset: it is sent the energy spent since, the strap's own count untouched",
        arguments: [
            ("a reset takes the last count as zero", [.count(100, sent: 100), .reset, .count(130, sent: 30)]),
            (
                "a reset before any count: the first count is zero",
                [.reset, .count(500, sent: 0), .count(512, sent: 12)]
            ),
            (
                "the strap's own count starting again (below the baseline) is sent as it is",
                [.count(100, sent: 100), .reset, .count(140, sent: 40), .count(5, sent: 5), .count(9, sent: 9)]
            ),
            (
                "another strap followed: its count starts at zero",
                [
                    .count(100, sent: 100), .follow(SensorIdentity(adapter: "hci0", address: "C1:00:00:00:00:0B")),
                    .count(800, sent: 0), .count(811, sent: 11),
                ]
            ),
            (
                "a saturated count (this much or more) is sent saturated, after a reset too",
                [
                    .reset, .count(1_000, sent: 0), .count(0xFFFF, sent: 0xFFFF), .reset, .count(0xFFFF, sent: 0xFFFF),
                    .count(20, sent: 20),
                ]
            ),
        ] as [(String, [EnergyStep])])
    func energyReset(_ name: String, steps: [EnergyStep]) throws {
        var relay = HeartRateRelay(address: strap.address, options: .init(forwardEnergy: true))
        var sensor = strap
        for (index, step) in steps.enumerated() {
            switch step {
            case .count(let count, let expected):
                let frame = try frame(sensor, [0x08, 72, UInt8(count & 0xFF), UInt8(count >> 8)])
                let value = sent(relay.handle(frame))
                #expect(value == [[0x08, 72, UInt8(expected & 0xFF), UInt8(expected >> 8)]], "\(name), step \(index)")
            case .reset:
                relay.resetEnergy()
            case .follow(let next):
                relay.follow(next.address)
                sensor = next
            }
        }
    }

    @Test("frames without energy, or energy not forwarded, leave the count alone")
    func energyNotForwarded() throws {
        var relay = HeartRateRelay(address: strap.address, options: .init(forwardEnergy: true))
        _ = relay.handle(try frame(strap, [0x08, 72, 100, 0]))
        relay.resetEnergy()
        #expect(sent(relay.handle(try frame(strap, [0x00, 72]))) == [[0x00, 72]])
        #expect(sent(relay.handle(try frame(strap, [0x08, 72, 110, 0]))) == [[0x08, 72, 10, 0]])
        var plain = HeartRateRelay(address: strap.address)
        plain.resetEnergy()
        #expect(sent(plain.handle(try frame(strap, [0x08, 72, 100, 0]))) == [[0x00, 72]], "energy not forwarded")
    }
}
