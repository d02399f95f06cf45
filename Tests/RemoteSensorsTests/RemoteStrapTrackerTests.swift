import Foundation
import GATT
import Sensors
import Testing

@testable import RemoteSensors

private let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
private let strap = "C0:FF:EE:00:00:01"
private let other = "C0:FF:EE:00:00:02"

/// A measurement envelope as a gateway sends it, dated `sent` seconds after the start by the
/// gateway (nil: when it is fed, as a gateway whose clock agrees with the hub's), of its boot
/// `boot` (nil: a gateway without a key).
private func envelope(
    _ sequence: UInt32, from node: String = "room-1", address: String = strap, heartRate: UInt16 = 60,
    bytes: [UInt8]? = nil, sent: Double? = nil, boot: UInt64? = nil
) -> RemoteStrapTracker.Input {
    let measurement = RemoteMeasurement(
        sequence: sequence, receivedAt: sent.map { start.addingTimeInterval($0) } ?? .distantPast, via: .connection,
        characteristic: .heartRateMeasurement,
        bytes: bytes ?? HeartRateMeasurement(heartRate: heartRate, sensorContact: .detected).encoded(), boot: boot)
    return .envelope(measurement, address: address, node: node)
}

/// An action, short: `ready room-1/01`, `gap 3 room-1/01`, `hr 60 room-1/01`.
private func summary(_ action: RemoteStrapTracker.Action) -> String {
    func tag(_ identity: SensorIdentity) -> String {
        "\(identity.adapter)/\(identity.address.suffix(2))" + (identity.name.map { " '\($0)'" } ?? "")
    }
    switch action {
    case .emit(.discovered(let sensor)): return "discovered \(tag(sensor.identity))"
    case .emit(.connectionChanged(let identity, .connected)): return "connected \(tag(identity))"
    case .emit(.connectionChanged(let identity, .ready)): return "ready \(tag(identity))"
    case .emit(.connectionChanged(let identity, .disconnected(let reason))):
        return "disconnected(\(reason)) \(tag(identity))"
    case .emit(.measurement(let measurement)):
        guard case .heartRateMeasurement(let frame) = measurement.value else { return "measurement" }
        return "hr \(frame.heartRate) \(tag(measurement.sensor))"
    case .emit(.decodingFailed(let identity, _, _)): return "decodingFailed \(tag(identity))"
    case .emit(let event): return "\(event)"
    case .sequenceGap(let identity, let missing): return "gap \(missing) \(tag(identity))"
    case .askForReplay(let request, let node):
        // To the millisecond, as the request's text says it.
        let from = (request.from.timeIntervalSince(start) * 1000).rounded() / 1000
        let to = (request.to.timeIntervalSince(start) * 1000).rounded() / 1000
        return "ask \(node)/\(request.address.suffix(2)) \(from)–\(to)"
    case .moved(let address, let from, let to): return "moved \(address.suffix(2)) \(from)→\(to)"
    case .limitReached(let address, let node): return "limit \(node)/\(address.suffix(2))"
    case .evicted(let address): return "evicted \(address.suffix(2))"
    case .refused(let error, let address, let node): return "refused \(error.metricName) \(node)/\(address.suffix(2))"
    case .cannotResume(let address, let node): return "cannotResume \(node)/\(address.suffix(2))"
    }
}

/// A tracker (silence expires after 10 s, at most 2 straps) and what its inputs did.
private struct TrackerDriver {
    var tracker = RemoteStrapTracker(configuration: .init(expire: 10, sensorLimit: 2))

    /// Feeds `input` at `seconds` after the start; the actions, short.
    @discardableResult
    mutating func feed(_ input: RemoteStrapTracker.Input, at seconds: Double = 0) -> [String] {
        let now = start.addingTimeInterval(seconds)
        var input = input
        if case .envelope(var measurement, let address, let node) = input, measurement.receivedAt == .distantPast {
            measurement.receivedAt = now
            input = .envelope(measurement, address: address, node: node)
        }
        return tracker.handle(input, at: now).map(summary)
    }

    /// Seconds from the start to the next deadline.
    var deadline: Double? { tracker.nextDeadline.map { $0.timeIntervalSince(start) } }
}

/// Where a strap is before the input under test, each reached the way the broker reaches it.
enum StrapSituation: String, CaseIterable, Sendable {
    /// Nothing heard.
    case unheard
    /// Streaming through room-1: sequence 5 heard at 0 s.
    case ready
    /// Dropped by room-1's Will at 1 s.
    case dropped
    /// Silent since 0 s, expired at 10 s.
    case expired
    /// Forgotten at 1 s.
    case forgotten

    fileprivate var driver: TrackerDriver {
        var driver = TrackerDriver()
        if self == .unheard { return driver }
        driver.feed(envelope(5))
        switch self {
        case .unheard, .ready: break
        case .dropped: driver.feed(.gatewayOffline(node: "room-1"), at: 1)
        case .expired: driver.feed(.timePassed, at: 10)
        case .forgotten: driver.feed(.forgotten(address: strap), at: 1)
        }
        return driver
    }
}

/// One row of the transition table.
struct Transition: Sendable, CustomTestStringConvertible {
    var name: String
    var from: StrapSituation
    var input: RemoteStrapTracker.Input
    var at: Double
    var actions: [String]
    /// Seconds from the start to the next deadline afterwards (nil: none).
    var deadline: Double?

    var testDescription: String { "\(from.rawValue), \(name)" }
}

@Suite("Remote straps: envelopes, availability and silence in, sensor events out")
struct RemoteStrapTrackerTests {
    static let transitions: [Transition] = [
        Transition(
            name: "first envelope: discovered, connected, ready, the measurement", from: .unheard, input: envelope(0),
            at: 0, actions: ["discovered room-1/01", "connected room-1/01", "ready room-1/01", "hr 60 room-1/01"],
            deadline: 10),
        Transition(
            name: "first envelope with any sequence number: no gap", from: .unheard, input: envelope(1234), at: 2,
            actions: ["discovered room-1/01", "connected room-1/01", "ready room-1/01", "hr 60 room-1/01"],
            deadline: 12),
        Transition(
            name: "in order: the measurement alone, the deadline later", from: .ready,
            input: envelope(6, heartRate: 61), at: 1, actions: ["hr 61 room-1/01"], deadline: 11),
        Transition(
            name: "sequence gap: counted, dropped as a lost link and back at once, the gateway asked for it",
            from: .ready, input: envelope(9), at: 1,
            actions: [
                "gap 3 room-1/01", "disconnected(link lost) room-1/01", "connected room-1/01", "ready room-1/01",
                "ask room-1/01 0.0–1.0", "hr 60 room-1/01",
            ], deadline: 11),
        Transition(
            name: "duplicate sequence number: passed on as it comes", from: .ready, input: envelope(5), at: 1,
            actions: ["hr 60 room-1/01"], deadline: 11),
        Transition(
            name: "older sequence number (the gateway started again): goes on, no gap", from: .ready,
            input: envelope(0), at: 1, actions: ["hr 60 room-1/01"], deadline: 11),
        Transition(
            name: "a replay (no later in sequence or time): refused, the strap as it was", from: .ready,
            input: envelope(5, sent: 0), at: 1, actions: ["refused replayed room-1/01"], deadline: 10),
        Transition(
            name: "dated more than the skew behind the hub: no longer live, refused", from: .ready,
            input: envelope(6, sent: 0), at: 5.5, actions: ["refused behind_hub room-1/01"], deadline: 10),
        Transition(
            name: "another gateway while the owner streams: refused, the strap stays with its owner", from: .ready,
            input: envelope(0, from: "room-2"), at: 1, actions: ["refused foreign_node room-2/01"], deadline: 10),
        Transition(
            name: "another gateway once the owner was silent for expire: handed over", from: .expired,
            input: envelope(0, from: "room-2"), at: 11,
            actions: ["moved 01 room-1→room-2", "connected room-2/01", "ready room-2/01", "hr 60 room-2/01"],
            deadline: 21),
        Transition(
            name: "moved while dropped: connected through the new gateway", from: .dropped,
            input: envelope(9, from: "room-2"), at: 2,
            actions: ["moved 01 room-1→room-2", "connected room-2/01", "ready room-2/01", "hr 60 room-2/01"],
            deadline: 12),
        Transition(
            name: "the owning gateway's Will: dropped as a lost link", from: .ready,
            input: .gatewayOffline(node: "room-1"), at: 1, actions: ["disconnected(link lost) room-1/01"],
            deadline: nil),
        Transition(
            name: "another gateway's Will: nothing", from: .ready, input: .gatewayOffline(node: "room-2"), at: 1,
            actions: [], deadline: 10),
        Transition(
            name: "availability offline from the owning gateway: dropped as a lost link", from: .ready,
            input: .strapOffline(address: strap, node: "room-1"), at: 1,
            actions: ["disconnected(link lost) room-1/01"], deadline: nil),
        Transition(
            name: "availability offline from a gateway the strap is not on: refused, the strap streams on",
            from: .ready, input: .strapOffline(address: strap, node: "room-2"), at: 1,
            actions: ["refused foreign_node room-2/01"], deadline: 10),
        Transition(
            name: "availability offline for another strap: nothing", from: .ready,
            input: .strapOffline(address: other, node: "room-1"), at: 1, actions: [], deadline: 10),
        Transition(
            name: "silence just before the deadline: nothing", from: .ready, input: .timePassed, at: 9.999,
            actions: [], deadline: 10),
        Transition(
            name: "silence at exactly the deadline: timeout", from: .ready, input: .timePassed, at: 10,
            actions: ["disconnected(timeout) room-1/01"], deadline: nil),
        Transition(
            name: "silence past the deadline: timeout", from: .ready, input: .timePassed, at: 60,
            actions: ["disconnected(timeout) room-1/01"], deadline: nil),
        Transition(
            name: "the broker lost: dropped, the adapter unavailable", from: .ready, input: .brokerLost, at: 1,
            actions: ["disconnected(adapter unavailable) room-1/01"], deadline: nil),
        Transition(
            name: "forgotten: dropped as requested", from: .ready, input: .forgotten(address: strap), at: 1,
            actions: ["disconnected(requested) room-1/01"], deadline: nil),
        Transition(
            name: "heard again after expiry: connected and ready, no discovery, no gap", from: .expired,
            input: envelope(100), at: 20, actions: ["connected room-1/01", "ready room-1/01", "hr 60 room-1/01"],
            deadline: 30),
        Transition(
            name: "heard again after the Will: connected and ready, no gap", from: .dropped, input: envelope(100),
            at: 20, actions: ["connected room-1/01", "ready room-1/01", "hr 60 room-1/01"], deadline: 30),
        Transition(
            name: "heard again after being forgotten: discovered anew", from: .forgotten, input: envelope(6), at: 2,
            actions: ["discovered room-1/01", "connected room-1/01", "ready room-1/01", "hr 60 room-1/01"],
            deadline: 12),
        Transition(
            name: "a bad value in a good envelope: the decoder's refusal, the strap ready", from: .unheard,
            input: envelope(0, bytes: [0x10, 70, 0x01]), at: 0,
            actions: ["discovered room-1/01", "connected room-1/01", "ready room-1/01", "decodingFailed room-1/01"],
            deadline: 10),
    ]

    /// Inputs that change nothing for a strap that is not streaming.
    static let idleInputs: [(String, RemoteStrapTracker.Input)] = [
        ("the Will", .gatewayOffline(node: "room-1")),
        ("availability offline", .strapOffline(address: strap, node: "room-1")),
        ("time passing", .timePassed), ("the broker lost", .brokerLost),
    ]

    @Test("every transition", arguments: transitions)
    func transition(_ row: Transition) {
        var driver = row.from.driver
        #expect(driver.feed(row.input, at: row.at) == row.actions)
        #expect(driver.deadline == row.deadline)
    }

    @Test(
        "a strap not streaming: the Will, availability, time and the broker change nothing",
        arguments: [StrapSituation.unheard, .dropped, .expired, .forgotten], idleInputs)
    func notStreaming(_ situation: StrapSituation, input: (String, RemoteStrapTracker.Input)) {
        var driver = situation.driver
        let before = driver.tracker.straps
        #expect(driver.feed(input.1, at: 30).isEmpty, "\(input.0)")
        #expect(driver.tracker.straps == before)
        #expect(driver.deadline == nil)
    }

    @Test("the sequence numbers wrap around: 2³²−1 then 0 is in order")
    func wrapAround() {
        var driver = TrackerDriver()
        driver.feed(envelope(.max))
        #expect(driver.feed(envelope(0), at: 1) == ["hr 60 room-1/01"])
        #expect(
            driver.feed(envelope(2), at: 2) == [
                "gap 1 room-1/01", "disconnected(link lost) room-1/01", "connected room-1/01", "ready room-1/01",
                "ask room-1/01 1.0–2.0", "hr 60 room-1/01",
            ])
    }

    @Test(
        "the gateway is asked for the gaps it cannot know of (the hub off the broker, frames lost between them), once each, at most their last 10 minutes, and never for one it saw itself (its Will, its availability) or silence"
    )
    func replayRequests() {
        var driver = TrackerDriver()
        driver.feed(envelope(0))
        driver.feed(envelope(1), at: 1)
        // The hub loses the broker: the gateway goes on publishing into it.
        #expect(driver.feed(.brokerLost, at: 2) == ["disconnected(adapter unavailable) room-1/01"])
        #expect(
            driver.feed(envelope(9), at: 5) == [
                "connected room-1/01", "ready room-1/01", "ask room-1/01 1.0–5.0", "hr 60 room-1/01",
            ])
        #expect(driver.feed(envelope(10), at: 6) == ["hr 60 room-1/01"], "asked once")
        // Its Will: the gateway itself was away, and sends its own outage again unasked.
        driver.feed(.gatewayOffline(node: "room-1"), at: 7)
        #expect(driver.feed(envelope(11), at: 8) == ["connected room-1/01", "ready room-1/01", "hr 60 room-1/01"])
        // Silence: nothing was sent.
        #expect(driver.feed(.timePassed, at: 18) == ["disconnected(timeout) room-1/01"])
        #expect(driver.feed(envelope(12), at: 19) == ["connected room-1/01", "ready room-1/01", "hr 60 room-1/01"])
        // The hub off the broker for an hour: only the last 10 minutes are asked for.
        driver.feed(.brokerLost, at: 20)
        #expect(driver.feed(envelope(13), at: 3_620).contains("ask room-1/01 3020.0–3620.0"))
    }

    @Test(
        "a hub started again asks for what a recovered session missed: from the last stored frame (on the gateway's clock, by the least lead seen, plus the margin) to the first recorded since, once the gateway's clock is judged; a gap still open stays the one the next frame closes"
    )
    func resumeAfterRestart() {
        var driver = TrackerDriver()
        let settle = RemoteStrapTracker.resumeSettle
        // The gateway's clock runs 0.3 s behind the hub's (the quickest trip included); one frame waited.
        driver.feed(envelope(100, sent: -0.3), at: 0)
        driver.feed(envelope(101, sent: 0.2), at: 1.5)
        driver.feed(envelope(102, sent: 1.7), at: 2)
        // The session recorded up to -10 before the restart (the hub's time), and again from the frame at 2.
        let resumed = RemoteStrapTracker.Input.resumed(
            address: strap, node: "room-1", storedUntil: start - 10, firstLive: start + 2)
        #expect(driver.feed(resumed, at: 2.1).isEmpty, "the gateway's clock is judged only after 30 s of its frames")
        #expect(driver.feed(envelope(103, sent: 2.7), at: 3) == ["hr 60 room-1/01"])
        // The strap drops meanwhile: its gap stays open until its next frame.
        #expect(driver.feed(.brokerLost, at: 10) == ["disconnected(adapter unavailable) room-1/01"])
        // Another strap of the gateway brings the judgement.
        #expect(
            driver.feed(envelope(0, address: other, sent: settle - 0.3), at: settle) == [
                "discovered room-1/02", "connected room-1/02", "ready room-1/02", "ask room-1/01 -10.25–1.7",
                "hr 60 room-1/02",
            ])
        #expect(driver.tracker.resumes.isEmpty)
        #expect(
            driver.feed(envelope(104, sent: settle + 0.7), at: settle + 1) == [
                "connected room-1/01", "ready room-1/01", "ask room-1/01 2.7–30.7", "hr 60 room-1/01",
            ], "the open gap closed by the next frame, asked once")
        // Backfill fills both stretches, strictly inside: not the frame stored last (sent at
        // -10.3), nor the first recorded again, nor the frames heard live.
        let admitted = driver.tracker.admitBackfill(
            frames([-10.3, -10.2, -5, 1.6, 1.7, 2.7, 10, 30.7]), address: strap, node: "room-1", at: start + 32)
        #expect(
            admitted.admitted.map { ($0.receivedAt.timeIntervalSince(start) * 1000).rounded() / 1000 } == [
                -10.2, -5, 1.6, 10,
            ])
        #expect(admitted.refused == [.outsideGap, .outsideGap, .outsideGap, .outsideGap])

        // Judged already: asked at once. Nothing after the store's end: nothing asked.
        #expect(
            driver.feed(
                .resumed(address: strap, node: "room-1", storedUntil: start + 31, firstLive: start + 31), at: 32
            ).isEmpty)
        #expect(
            driver.feed(
                .resumed(address: strap, node: "room-1", storedUntil: start + 20, firstLive: start + 31), at: 32)
                == ["ask room-1/01 19.75–30.7"])
        // A first recorded frame the hub does not know, or a strap heard through another gateway
        // than its stored frames: said at once, nothing asked.
        #expect(
            driver.feed(
                .resumed(address: strap, node: "room-1", storedUntil: start, firstLive: start + 5.5), at: 33)
                == ["cannotResume room-1/01"])
        #expect(
            driver.feed(
                .resumed(address: strap, node: "room-2", storedUntil: start, firstLive: start + 31), at: 33)
                == ["cannotResume room-2/01"])
        #expect(driver.tracker.resumes.isEmpty)
    }

    @Test("the gateways' clocks are bounded: at the limit, those no followed strap is heard through make room")
    func gatewayClocksBounded() {
        var driver = TrackerDriver()
        driver.feed(envelope(0, from: "room-1"), at: 0)
        driver.feed(envelope(0, from: "room-2", address: other), at: 0)
        #expect(Set(driver.tracker.gatewayClocks.keys) == ["room-1", "room-2"])
        driver.feed(.forgotten(address: other), at: 1)
        driver.feed(envelope(0, from: "room-3", address: other), at: 2)
        #expect(Set(driver.tracker.gatewayClocks.keys) == ["room-1", "room-3"])
    }

    @Test("a strap's recent frame times: the last 64 kept, each found by the hub's time exactly")
    func recentFrameTimes() {
        var recent = RecentFrameTimes()
        for index in 0..<100 {
            recent.append(heard: start + Double(index), sent: start + Double(index) - 0.25)
        }
        #expect(recent.sent(heardAt: start + 99) == start + 98.75)
        #expect(recent.sent(heardAt: start + 36) == start + 35.75, "the 64th latest")
        #expect(recent.sent(heardAt: start + 35) == nil, "overwritten")
        #expect(recent.sent(heardAt: start + 50.5) == nil, "no frame then")
    }

    @Test("after a gateway starts again from 0, its next frames are in order")
    func restartedGateway() {
        var driver = TrackerDriver()
        driver.feed(envelope(500))
        #expect(driver.feed(envelope(0), at: 1) == ["hr 60 room-1/01"])
        #expect(driver.feed(envelope(1), at: 2) == ["hr 60 room-1/01"])
        #expect(driver.tracker.straps[strap]?.link == .up(lastSequence: 1, lastHeard: start.addingTimeInterval(2)))
    }

    @Test(
        "a gateway that restarted: a frame of its earlier boot sent again is refused (stale_boot), though later in sequence than the new boot's and within the skew; the new boot's frames go on in order"
    )
    func replayAcrossBoots() {
        var driver = TrackerDriver()
        let bootA: UInt64 = 1_000
        let bootB: UInt64 = 2_000
        for sequence in 1...10 {
            driver.feed(
                envelope(UInt32(sequence), heartRate: 60 + UInt16(sequence), boot: bootA), at: Double(sequence) / 4)
        }
        // Restarted: its numbers start over; no gap, no replay.
        #expect(driver.feed(envelope(1, heartRate: 101, boot: bootB), at: 3) == ["hr 101 room-1/01"])
        // Frame 11 of the earlier boot, captured just before the restart (dated 2.75 s: 0.5 s behind
        // the hub, within the skew) and sent again.
        #expect(
            driver.feed(envelope(11, heartRate: 71, sent: 2.75, boot: bootA), at: 3.25) == [
                "refused stale_boot room-1/01"
            ])
        #expect(driver.feed(envelope(2, heartRate: 102, boot: bootB), at: 3.5) == ["hr 102 room-1/01"])
        #expect(driver.tracker.boots == ["room-1": bootB])
        #expect(driver.tracker.straps[strap]?.boot == bootB)
        // A boot dated an hour ahead of the hub (the gateway's clock wrong at its start) is
        // refused, not kept: kept, it would make every later boot of the gateway stale.
        let ahead = UInt64((start.timeIntervalSince1970 + 3_600) * 1000)
        #expect(driver.feed(envelope(3, heartRate: 103, boot: ahead), at: 3.5) == ["refused ahead_of_hub room-1/01"])
        #expect(driver.tracker.boots == ["room-1": bootB])
        #expect(driver.tracker.straps[strap]?.link == .up(lastSequence: 2, lastHeard: start.addingTimeInterval(3.5)))
        // Another gateway's boots are its own.
        #expect(driver.feed(envelope(0, from: "room-2", address: other, boot: 5), at: 4).contains("ready room-2/02"))
    }

    @Test(
        "a signed offline: of an earlier boot refused; a strap's dated before its last frame refused; the gateway's (its Will) once per boot, a later one (its farewell) again"
    )
    func signedOffline() {
        var driver = TrackerDriver()
        let bootA: UInt64 = 1_000
        let bootB: UInt64 = 2_000
        func offline(_ address: String?, boot: UInt64, sent: Double) -> RemoteStrapTracker.Input {
            .signedOffline(address: address, node: "room-1", boot: boot, sent: start.addingTimeInterval(sent))
        }
        driver.feed(envelope(0, boot: bootA))
        driver.feed(envelope(0, boot: bootB), at: 1)
        #expect(driver.feed(offline(nil, boot: bootA, sent: 0), at: 2) == ["refused stale_boot room-1/"])
        #expect(driver.feed(offline(strap, boot: bootA, sent: 2), at: 2) == ["refused stale_boot room-1/01"])
        #expect(driver.feed(offline(strap, boot: bootB, sent: 0.5), at: 2) == ["refused replayed room-1/01"])
        #expect(driver.feed(offline(strap, boot: bootB, sent: 9), at: 2) == ["refused ahead_of_hub room-1/01"])
        // The gateway's own offline dated ahead, or of a boot dated ahead: refused too.
        #expect(driver.feed(offline(nil, boot: bootB, sent: 9), at: 2) == ["refused ahead_of_hub room-1/"])
        let ahead = UInt64((start.timeIntervalSince1970 + 3_600) * 1000)
        #expect(driver.feed(offline(nil, boot: ahead, sent: 2), at: 2) == ["refused ahead_of_hub room-1/"])
        #expect(driver.tracker.straps[strap]?.isReady == true)
        #expect(driver.feed(offline(strap, boot: bootB, sent: 1.5), at: 2) == ["disconnected(link lost) room-1/01"])
        #expect(driver.tracker.straps[strap]?.released == true)

        // The Will, signed when the gateway started (at 0.9 s).
        driver.feed(envelope(1, boot: bootB), at: 3)
        #expect(driver.feed(offline(nil, boot: bootB, sent: 0.9), at: 4) == ["disconnected(link lost) room-1/01"])
        driver.feed(envelope(2, boot: bootB), at: 5)
        #expect(driver.feed(offline(nil, boot: bootB, sent: 0.9), at: 6) == ["refused replayed room-1/"])
        #expect(driver.tracker.straps[strap]?.isReady == true)
        // Its farewell, signed when said.
        #expect(driver.feed(offline(nil, boot: bootB, sent: 7), at: 7) == ["disconnected(link lost) room-1/01"])
    }

    @Test(
        "a signed online of a newer boot: the boot is the gateway's latest before its first frame, so a frame of the boot before, sent again, is refused; an online of an earlier boot or dated ahead is refused and changes nothing"
    )
    func signedOnline() {
        var driver = TrackerDriver()
        let bootA: UInt64 = 1_000
        let bootB: UInt64 = 2_000
        func online(boot: UInt64, sent: Double) -> RemoteStrapTracker.Input {
            .signedOnline(node: "room-1", boot: boot, sent: start.addingTimeInterval(sent))
        }
        #expect(driver.feed(online(boot: bootA, sent: 0)).isEmpty)
        #expect(driver.tracker.boots == ["room-1": bootA], "known before any frame")
        driver.feed(envelope(1, heartRate: 61, boot: bootA), at: 0.25)
        // Restarted: its `online` comes before its first frame of the new boot.
        #expect(driver.feed(online(boot: bootB, sent: 2), at: 2).isEmpty)
        #expect(driver.tracker.boots == ["room-1": bootB])
        #expect(
            driver.feed(envelope(2, heartRate: 62, sent: 1.9, boot: bootA), at: 2.1) == ["refused stale_boot room-1/01"]
        )
        #expect(driver.feed(envelope(1, heartRate: 101, boot: bootB), at: 2.5) == ["hr 101 room-1/01"])
        // The earlier boot's online, kept and sent again; one dated ahead; a boot dated ahead.
        #expect(driver.feed(online(boot: bootA, sent: 0), at: 3) == ["refused stale_boot room-1/"])
        #expect(driver.feed(online(boot: 3_000, sent: 9), at: 3) == ["refused ahead_of_hub room-1/"])
        let ahead = UInt64((start.timeIntervalSince1970 + 3_600) * 1000)
        #expect(driver.feed(online(boot: ahead, sent: 3), at: 3) == ["refused ahead_of_hub room-1/"])
        #expect(driver.tracker.boots == ["room-1": bootB])
        // A signed offline of a newer boot (its Will, retained) makes that boot the latest too.
        let bootC: UInt64 = 4_000
        driver.feed(.signedOffline(address: nil, node: "room-1", boot: bootC, sent: start.addingTimeInterval(4)), at: 4)
        #expect(driver.tracker.boots == ["room-1": bootC])
        #expect(driver.feed(envelope(2, heartRate: 102, boot: bootB), at: 4.5) == ["refused stale_boot room-1/01"])
    }

    @Test("the deadline: the earliest silence of the ready straps, later as they are heard, none when none streams")
    func deadlines() {
        var driver = TrackerDriver()
        #expect(driver.deadline == nil)
        driver.feed(envelope(0))
        driver.feed(envelope(0, address: other), at: 3)
        #expect(driver.deadline == 10)
        driver.feed(envelope(1), at: 5)
        #expect(driver.deadline == 13, "the first strap heard again: the other one's silence ends first")
        #expect(driver.feed(.timePassed, at: 13) == ["disconnected(timeout) room-1/02"])
        #expect(driver.deadline == 15)
        #expect(driver.feed(.timePassed, at: 15) == ["disconnected(timeout) room-1/01"])
        #expect(driver.deadline == nil)
    }

    @Test("several straps due at once expire together, in address order")
    func expireTogether() {
        var driver = TrackerDriver()
        driver.feed(envelope(0, address: other))
        driver.feed(envelope(0), at: 1)
        #expect(
            driver.feed(.timePassed, at: 30) == ["disconnected(timeout) room-1/01", "disconnected(timeout) room-1/02"])
    }

    @Test("the Will drops only its own gateway's straps")
    func willOfOneGateway() {
        var driver = TrackerDriver()
        driver.feed(envelope(0))
        driver.feed(envelope(0, from: "room-2", address: other))
        #expect(driver.feed(.gatewayOffline(node: "room-2"), at: 1) == ["disconnected(link lost) room-2/02"])
        #expect(driver.tracker.straps[strap]?.isReady == true)
        #expect(driver.feed(.brokerLost, at: 2) == ["disconnected(adapter unavailable) room-1/01"])
    }

    @Test("names: heard before the strap, used when it comes; heard after, announced again; cleaned and bounded")
    func names() {
        var driver = TrackerDriver()
        #expect(driver.feed(.named(address: strap, name: "Ann", node: "room-1")).isEmpty, "no strap yet")
        #expect(driver.feed(envelope(0)).first == "discovered room-1/01 'Ann'")
        #expect(driver.feed(.named(address: strap, name: "Ann", node: "room-1")).isEmpty, "the same name")
        #expect(driver.feed(.named(address: strap, name: "", node: "room-1")).isEmpty, "an empty name is none")
        #expect(driver.feed(.named(address: strap, name: "Bea", node: "room-1")) == ["discovered room-1/01 'Bea'"])
        #expect(driver.feed(envelope(1)) == ["hr 60 room-1/01 'Bea'"])
        driver.feed(.named(address: strap, name: String(repeating: "x", count: 300), node: "room-1"))
        #expect(driver.tracker.straps[strap]?.identity.name?.count == 248)
        #expect(driver.tracker.identity(address: strap, node: "room-9").name?.count == 248, "for backfill")
        #expect(driver.tracker.identity(address: other, node: "room-9").name == nil)
        // Anyone on the broker may publish a gateway's state: a name is attacker text.
        driver.feed(.named(address: strap, name: "\u{1B}[2J\u{202E}evil\nFAKE", node: "room-1"))
        #expect(
            driver.tracker.straps[strap]?.identity.name == "[2Jevil FAKE", "no escape, no bidi override, no newline")
        driver.feed(.named(address: strap, name: String(repeating: "é", count: 200), node: "room-1"))
        #expect(driver.tracker.straps[strap]?.identity.name?.utf8.count == 248, "cut by bytes")
        #expect(driver.feed(.named(address: strap, name: "\u{202E}\u{0007}", node: "room-1")).isEmpty, "nothing left")
        #expect(driver.tracker.straps[strap]?.identity.name?.hasPrefix("é") == true, "the last name stays")
    }

    @Test(
        "names: at most as many as straps are followed; one of an address not followed makes room, never a followed strap's"
    )
    func namesBounded() {
        var driver = TrackerDriver()
        driver.feed(envelope(0))
        driver.feed(.named(address: strap, name: "real", node: "room-1"))
        for index in 0..<5 {
            driver.feed(.named(address: "AA:00:00:00:00:0\(index)", name: "made-up \(index)", node: "room-1"))
        }
        func name(_ address: String) -> String? { driver.tracker.identity(address: address, node: "r").name }
        #expect(name(strap) == "real", "a followed strap's name stays")
        #expect(name("AA:00:00:00:00:04") == "made-up 4", "the newest made-up name took an older one's place")
        #expect((0..<4).allSatisfy { name("AA:00:00:00:00:0\($0)") == nil }, "two names at most")
        driver.feed(.named(address: strap, name: "renamed", node: "room-1"))
        #expect(name(strap) == "renamed", "a known one")
    }

    @Test("at the limit, the strap silent longest (beyond expire) makes room; one streaming or heard lately never does")
    func eviction() {
        var driver = TrackerDriver()
        driver.feed(envelope(0))
        driver.feed(envelope(0, address: other))
        let third = "C0:FF:EE:00:00:03"
        #expect(driver.feed(envelope(0, address: third), at: 5) == ["limit room-1/03"], "both stream")
        driver.feed(.gatewayOffline(node: "room-1"), at: 6)
        #expect(driver.feed(envelope(0, address: third), at: 7) == ["limit room-1/03"], "dropped, but heard 7 s ago")
        #expect(driver.feed(envelope(1), at: 10.5).contains("ready room-1/01"))
        #expect(
            driver.feed(envelope(0, address: third), at: 10.5).prefix(2) == ["evicted 02", "discovered room-1/03"],
            "silent for 10.5 s, beyond the 10 s expiry")
        #expect(driver.tracker.straps[other] == nil && driver.tracker.straps[third]?.isReady == true)
        #expect(driver.tracker.straps[strap]?.isReady == true, "the streaming one goes on")
    }

    @Test("at the strap limit a new strap is refused; the ones followed go on; a forgotten one frees a place")
    func limit() {
        var driver = TrackerDriver()
        driver.feed(envelope(0))
        driver.feed(envelope(0, address: other))
        let third = "C0:FF:EE:00:00:03"
        #expect(driver.feed(envelope(0, address: third), at: 1) == ["limit room-1/03"])
        #expect(driver.tracker.straps[third] == nil)
        #expect(driver.feed(envelope(1), at: 1) == ["hr 60 room-1/01"])
        driver.feed(.forgotten(address: other), at: 2)
        #expect(driver.feed(envelope(0, address: third), at: 3).first == "discovered room-1/03")
    }

    @Test(
        "at the limit, a strap bound to its gateway still gets a place: an unbound strap of the gateway holding the most makes room, streaming or not"
    )
    func boundStrapAtTheLimit() {
        var driver = TrackerDriver()
        let bound = "C0:FF:EE:00:00:09"
        driver.tracker = RemoteStrapTracker(configuration: .init(expire: 10, sensorLimit: 3, owners: [bound: "gym"]))
        // A keyed gateway streams for made-up addresses; another has one unbound strap.
        driver.feed(envelope(0, from: "flood", address: "AA:00:00:00:00:01"), at: 0)
        driver.feed(envelope(0, from: "flood", address: "AA:00:00:00:00:02"), at: 1)
        driver.feed(envelope(0, from: "room-1", address: strap), at: 2)
        #expect(
            driver.feed(envelope(0, from: "room-1", address: other), at: 3) == ["limit room-1/02"],
            "an unbound strap waits")
        #expect(
            driver.feed(envelope(0, from: "gym", address: bound), at: 3).prefix(3) == [
                "disconnected(link lost) flood/01", "evicted 01", "discovered gym/09",
            ], "the flood's strap heard longest ago, told gone first")
        #expect(driver.tracker.straps[strap] != nil, "the quieter gateway's strap stays")
        #expect(
            driver.feed(envelope(0, from: "room-2", address: bound), at: 4) == ["refused foreign_node room-2/09"])
    }

    @Test("a frame dated more than the skew allowed ahead of the hub is refused and changes nothing; within it, taken")
    func aheadOfTheHub() {
        var driver = TrackerDriver()
        // The frames are dated at 0 s: fed at -5.5 s, a frame is 5.5 s ahead of the hub's clock.
        #expect(driver.feed(envelope(0, sent: 0), at: -5.5) == ["refused ahead_of_hub room-1/01"])
        #expect(driver.tracker.straps.isEmpty && driver.deadline == nil, "no strap, nothing to expire")
        #expect(
            driver.feed(envelope(0, sent: 0), at: -5).first == "discovered room-1/01", "5 s ahead: the skew allowed")
        #expect(driver.feed(envelope(1, sent: 0), at: -6) == ["refused ahead_of_hub room-1/01"])
        #expect(driver.deadline == 5, "the refused frame did not keep the strap heard")
        #expect(
            RemoteStrapTracker.Configuration(maximumSkew: 1).refusal(of: start.addingTimeInterval(90), at: start)
                == .aheadOfHub(90))
    }

    @Test("a strap bound to a gateway by configuration: no other gateway speaks for it, silent or not")
    func boundStrap() {
        var driver = TrackerDriver()
        driver.tracker = RemoteStrapTracker(configuration: .init(expire: 10, sensorLimit: 2, owners: [strap: "room-1"]))
        #expect(driver.feed(envelope(0, from: "room-2")) == ["refused foreign_node room-2/01"], "not even first")
        driver.feed(envelope(0))
        driver.feed(.gatewayOffline(node: "room-1"), at: 1)
        #expect(driver.feed(envelope(1, from: "room-2"), at: 2) == ["refused foreign_node room-2/01"])
        #expect(driver.feed(envelope(2, from: "room-2"), at: 60) == ["refused foreign_node room-2/01"])
        #expect(
            driver.feed(.named(address: strap, name: "Eve", node: "room-2"), at: 61) == [
                "refused foreign_node room-2/01"
            ])
        #expect(driver.feed(envelope(3), at: 62).contains("ready room-1/01"))
    }

    @Test(
        "a genuine move: the owner says the strap is gone, the next gateway takes it over and it streams there; the old one is refused"
    )
    func handOver() {
        var driver = TrackerDriver()
        driver.feed(envelope(0))
        #expect(
            driver.feed(.strapOffline(address: strap, node: "room-1"), at: 1) == ["disconnected(link lost) room-1/01"])
        #expect(
            driver.feed(envelope(40, from: "room-2"), at: 2) == [
                "moved 01 room-1→room-2", "connected room-2/01", "ready room-2/01", "hr 60 room-2/01",
            ])
        #expect(driver.tracker.straps[strap]?.isReady == true && driver.tracker.owner(of: strap) == "room-2")
        #expect(driver.feed(envelope(41, from: "room-2"), at: 3) == ["hr 60 room-2/01"])
        #expect(driver.feed(envelope(1), at: 3) == ["refused foreign_node room-1/01"])
        #expect(driver.feed(.strapOffline(address: strap, node: "room-1"), at: 3) == ["refused foreign_node room-1/01"])
        #expect(driver.tracker.straps[strap]?.isReady == true)
    }

    @Test("live frames carry the hub's time; their gateway's (within the skew) only orders them")
    func hubTime() throws {
        var tracker = RemoteStrapTracker()
        guard case .envelope(let measurement, _, _) = envelope(0, sent: 0) else { return }
        let now = start.addingTimeInterval(3)
        let emitted = tracker.handle(.envelope(measurement, address: strap, node: "room-1"), at: now).compactMap {
            action -> SensorMeasurement? in
            if case .emit(.measurement(let measurement)) = action { measurement } else { nil }
        }
        #expect(emitted.map(\.receivedAt) == [now])
    }

    /// Frames of a backfill batch, dated `seconds` after the start by the gateway.
    private func frames(_ seconds: [Double], rr: [Double] = []) -> [RemoteMeasurement] {
        seconds.enumerated().map { index, second in
            RemoteMeasurement(
                sequence: UInt32(index), receivedAt: start.addingTimeInterval(second), via: .connection,
                characteristic: .heartRateMeasurement,
                bytes: HeartRateMeasurement(
                    heartRate: 70, sensorContact: .detected, rrIntervals: rr.map { RRInterval(seconds: $0) }
                ).encoded())
        }
    }

    @Test("backfill fills only gaps the hub saw, from the gateway that owned the strap then; never the future")
    func backfillGaps() {
        var driver = TrackerDriver()
        for second in 0...5 { driver.feed(envelope(UInt32(second)), at: Double(second)) }
        driver.feed(.brokerLost, at: 6)
        var admitted = driver.tracker.admitBackfill(frames([8]), address: strap, node: "room-1", at: start + 9)
        #expect(admitted.admitted.count == 1, "a gap still open: up to now")
        driver.feed(envelope(20), at: 20)
        admitted = driver.tracker.admitBackfill(
            frames([3, 5, 5.5, 12, 19.75, 20, 25]), address: strap, node: "room-1", at: start + 21)
        #expect(admitted.admitted.map { $0.receivedAt.timeIntervalSince(start) } == [5.5, 12, 19.75])
        #expect(admitted.admitted.allSatisfy { $0.sensor.adapter == "room-1" })
        #expect(admitted.refused == [.outsideGap, .outsideGap, .outsideGap, .outsideGap])
        #expect(
            driver.tracker.admitBackfill(frames([40]), address: strap, node: "room-1", at: start + 21).refused
                == [.aheadOfHub(19)])
        #expect(
            driver.tracker.admitBackfill(frames([12]), address: strap, node: "room-2", at: start + 21).refused
                == [.foreignNode(owner: "room-1")])
        #expect(
            driver.tracker.admitBackfill(frames([12]), address: other, node: "room-1", at: start + 21).refused
                == [.outsideGap], "a strap the hub never heard has no gap")
        // A sequence gap is a gap too.
        driver.feed(envelope(30), at: 30)
        #expect(
            driver.tracker.admitBackfill(frames([25, 29]), address: strap, node: "room-1", at: start + 31).admitted
                .count == 2)
    }

    @Test(
        "a gap is filled by the gateway it began under, after the strap moved on; not by another, nor against a binding"
    )
    func backfillAfterMove() {
        var driver = TrackerDriver()
        for second in 0...5 { driver.feed(envelope(UInt32(second)), at: Double(second)) }
        driver.feed(.brokerLost, at: 6)
        // Silent past expire: room-2 takes the strap over, which closes room-1's gap at 20 s.
        #expect(driver.feed(envelope(0, from: "room-2"), at: 20).contains("moved 01 room-1→room-2"))
        // Room-1 fills it up to the skew allowed (5 s) short of that end, which is room-2's time:
        // never into what room-2 sent live.
        let result = driver.tracker.admitBackfill(
            frames([5.5, 12, 14.75, 15.5, 21]), address: strap, node: "room-1", at: start + 22)
        #expect(result.admitted.map { $0.receivedAt.timeIntervalSince(start) } == [5.5, 12, 14.75])
        #expect(result.admitted.allSatisfy { $0.sensor.adapter == "room-1" }, "heard through room-1")
        #expect(result.refused == [.outsideGap, .outsideGap])
        #expect(
            driver.tracker.admitBackfill(frames([12]), address: strap, node: "room-3", at: start + 22).refused
                == [.foreignNode(owner: "room-2")], "no gap of its own")
        #expect(
            driver.tracker.admitBackfill(frames([12]), address: strap, node: "room-2", at: start + 22).refused
                == [.outsideGap], "the owner now, but the gap is room-1's")

        var bound = TrackerDriver()
        bound.tracker = RemoteStrapTracker(configuration: .init(expire: 10, sensorLimit: 2, owners: [strap: "room-1"]))
        bound.feed(envelope(0))
        bound.feed(.brokerLost, at: 1)
        #expect(
            bound.tracker.admitBackfill(frames([0.5]), address: strap, node: "room-2", at: start + 2).refused
                == [.foreignNode(owner: "room-1")])
        let own = bound.tracker.admitBackfill(frames([0.5]), address: strap, node: "room-1", at: start + 2)
        #expect(own.admitted.count == 1)
    }

    @Test("backfill frames with more than 32 RR intervals, or one outside 0.2–3 s, are refused")
    func backfillRR() {
        var driver = TrackerDriver()
        driver.feed(envelope(0))
        driver.feed(.brokerLost, at: 1)
        func refusals(_ rr: [Double]) -> [RemoteMeasurementError] {
            driver.tracker.admitBackfill(frames([0.5], rr: rr), address: strap, node: "room-1", at: start + 2).refused
        }
        #expect(refusals(Array(repeating: 0.8, count: 32)).isEmpty)
        #expect(refusals(Array(repeating: 0.8, count: 33)) == [.implausibleRR])
        #expect(refusals([0.8, 0.15]) == [.implausibleRR])
        #expect(refusals([3.5]) == [.implausibleRR])
        #expect(refusals([0.2, 3]).isEmpty)
    }

    @Test("a gateway's backfill budget: so many frames a minute, refilled evenly; another gateway has its own")
    func backfillBudget() {
        var driver = TrackerDriver()
        driver.tracker = RemoteStrapTracker(configuration: .init(expire: 10, sensorLimit: 2, backfillBudget: 120))
        driver.feed(envelope(0))
        driver.feed(envelope(0, address: other), at: 0)
        driver.feed(.brokerLost, at: 1)
        let many = frames((0..<150).map { 0.001 + Double($0) / 1000 })
        var result = driver.tracker.admitBackfill(many, address: strap, node: "room-1", at: start + 2)
        #expect(result.admitted.count == 120 && result.refused == Array(repeating: .overBudget, count: 30))
        result = driver.tracker.admitBackfill(Array(many.prefix(40)), address: strap, node: "room-1", at: start + 17)
        #expect(result.admitted.count == 30, "15 s later: a quarter of the budget again")
    }

    @Test("a dropped strap is still known (shown disconnected) until forgotten")
    func known() {
        var driver = TrackerDriver()
        driver.feed(envelope(0))
        driver.feed(.timePassed, at: 10)
        #expect(driver.tracker.straps[strap]?.isReady == false)
        driver.feed(.forgotten(address: strap), at: 11)
        #expect(driver.tracker.straps.isEmpty)
    }
}
