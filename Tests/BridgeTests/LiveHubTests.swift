import Bridge
import Foundation
import JSONSupport
import Testing
import Wire

@Suite("Live hub: routing filters and a byte budget per client")
struct LiveHubTests {
    /// The tests' own payload: a message's number.
    struct Numbered: Decodable {
        var n: Int
    }

    func number(_ delivery: LiveSubscription.Delivery) -> Int? {
        guard case .message(let message) = delivery else { return nil }
        return try? JSONText.decode(Numbered.self, from: Data(message.json.utf8)).n
    }

    @Test("a client that does not read keeps only the newest messages within its budget, and is told what it lost")
    func byteBudget() async {
        let hub = LiveHub()
        let budget = 16 * 1024
        let stuck = hub.subscribe(byteBudget: budget)
        let total = 2_000
        for index in 0..<total { hub.publish(LiveMessage(kind: .measurement, sensor: "A", payload: ["n": index])) }
        #expect(stuck.queuedBytes <= budget)
        hub.finish()
        var deliveries: [LiveSubscription.Delivery] = []
        for await delivery in stuck { deliveries.append(delivery) }
        guard case .dropped(let dropped) = deliveries.first else {
            Issue.record("the first delivery says how many were dropped: \(deliveries.prefix(2))")
            return
        }
        let received = deliveries.compactMap(number)
        #expect(dropped + received.count == total, "nothing vanishes unannounced")
        #expect(received.first == dropped, "the oldest were dropped")
        #expect(received.last == total - 1)
        #expect(deliveries.last?.json.contains(#""n":1999"#) == true)
        #expect(LiveSubscription.Delivery.dropped(3).json == #"{"kind":"dropped","count":3}"#)
    }

    @Test("filters apply before buffering: a client following one sensor holds nothing of the others")
    func filteredBeforeBuffering() async {
        let hub = LiveHub()
        let onlyB = hub.subscribe(sensor: "b")
        for index in 0..<500 { hub.publish(LiveMessage(kind: .measurement, sensor: "A", payload: ["n": index])) }
        #expect(onlyB.queuedBytes == 0)
        hub.publish(LiveMessage(kind: .measurement, sensor: "B", payload: ["n": 7]))
        hub.finish()
        var received: [Int] = []
        for await delivery in onlyB { received += number(delivery).map { [$0] } ?? [] }
        #expect(received == [7])
    }

    @Test("the hub routes by kind, session and sensor (case-insensitively); a line nobody wants is never encoded")
    func routing() async {
        let hub = LiveHub()
        let session = UUID()
        let everything = hub.subscribe(kinds: nil)
        let board = hub.subscribe(kinds: LiveMessageKind.streamedByDefault)
        let oneSession = hub.subscribe(session: session, kinds: [.sample, .session])
        let oneSensor = hub.subscribe(sensor: "c0:ff:ee:00:00:01")
        var encoded = 0
        for (index, kind) in [LiveMessageKind.sample, .session, .measurement].enumerated() {
            for (offset, (messageSession, sensor)) in [
                (session, "C0:FF:EE:00:00:01"), (UUID(), "C0:FF:EE:00:00:02"), (nil, "C0:FF:EE:00:00:01"),
            ].enumerated() {
                let n = index * 10 + offset
                hub.publish(kind: kind, session: messageSession, sensor: sensor) {
                    encoded += 1
                    return #"{"kind":"\#(kind)","n":\#(n)}"#
                }
            }
        }
        // Nobody but `everything` and the sensor's follower takes samples of other sessions.
        hub.publish(kind: .sample, session: UUID(), sensor: "C0:FF:EE:00:00:09") {
            encoded += 1
            return "{}"
        }
        let unwanted = LiveMessage(kind: .sample, session: UUID(), sensor: "C0:FF:EE:00:00:09", json: "{}")
        hub.publish(unwanted)
        hub.finish()
        func numbers(_ subscription: LiveSubscription) async -> [Int] {
            var found: [Int] = []
            for await delivery in subscription { found += number(delivery).map { [$0] } ?? [] }
            return found
        }
        #expect(await numbers(board) == [10, 11, 12, 20, 21, 22])
        #expect(await numbers(oneSession) == [0, 10])
        #expect(await numbers(oneSensor) == [0, 2, 10, 12, 20, 22])
        #expect(await numbers(everything) == [0, 1, 2, 10, 11, 12, 20, 21, 22])
        #expect(encoded == 10, "every line encoded once, the last one for `everything` alone")

        let boardsOnly = LiveHub()
        let tab = boardsOnly.subscribe(kinds: LiveMessageKind.streamedByDefault)
        boardsOnly.publish(kind: .sample, session: session, sensor: "C0:FF:EE:00:00:01") {
            Issue.record("a sample line encoded with no reader for samples")
            return "{}"
        }
        #expect(tab.queuedBytes == 0)
        // A reader of samples that goes away takes its interest with it.
        var reader: LiveSubscription? = boardsOnly.subscribe(kinds: [.sample])
        var delivered = 0
        boardsOnly.publish(kind: .sample, session: session, sensor: "C0:FF:EE:00:00:01") {
            delivered += 1
            return "{}"
        }
        #expect(delivered == 1 && reader?.queuedBytes == 2)
        reader = nil
        boardsOnly.publish(kind: .sample, session: session, sensor: "C0:FF:EE:00:00:01") {
            Issue.record("a sample line encoded after its only reader went")
            return "{}"
        }
        #expect(boardsOnly.subscriberCount == 1)
    }

    /// What a `figures` message holds: its routing session and its sessions' numbers.
    struct Figures: Decodable {
        var kind: String
        var session: UUID?
        var sessions: [Numbered]
    }

    @Test(
        "sessions' figures: one message with all of them to a board, its own to a session's follower, none to readers of changes or of a strap"
    )
    func figures() async throws {
        let hub = LiveHub()
        let session = UUID()
        let other = UUID()
        let status = hub.subscribe(kinds: [.sensor, .session])
        let strapFollower = hub.subscribe(sensor: "C0:FF:EE:00:00:01")
        #expect(!hub.wantsFigures(of: session), "no reader takes figures: they need not be worked out")
        let follower = hub.subscribe(session: other, kinds: [.figures])
        #expect(!hub.wantsFigures(of: session) && hub.wantsFigures(of: other))
        let board = hub.subscribe()
        #expect(hub.wantsFigures(of: session) && hub.wantsFigures(of: other))
        let parts = [
            LiveMessage(kind: .session, session: session, payload: ["n": 1]),
            LiveMessage(kind: .session, session: other, payload: ["n": 2]),
        ]
        hub.publishFigures(parts)
        hub.publish(LiveMessage(kind: .session, session: session, payload: ["n": 3]))
        hub.finish()
        func messages(_ subscription: LiveSubscription) async -> [LiveMessage] {
            var found: [LiveMessage] = []
            for await delivery in subscription {
                if case .message(let message) = delivery { found.append(message) }
            }
            return found
        }
        let boardGot = await messages(board)
        #expect(boardGot.map(\.kind) == [.figures, .session])
        let all = try JSONText.decode(Figures.self, from: Data(boardGot[0].json.utf8))
        #expect(all.kind == "figures" && all.session == nil && all.sessions.map(\.n) == [1, 2])
        #expect(boardGot[0].parts == parts, "a reader that publishes per session takes the parts")
        let followerGot = await messages(follower)
        #expect(followerGot.count == 1)
        let own = try JSONText.decode(Figures.self, from: Data(followerGot[0].json.utf8))
        #expect(own.session == other && own.sessions.map(\.n) == [2] && followerGot[0].session == other)
        #expect(
            await messages(status).compactMap { number(.message($0)) } == [3], "a change reaches it, figures do not")
        #expect(await messages(strapFollower).isEmpty)
    }

    @Test("a follower that went takes its interest in figures with it")
    func figuresInterestEnds() {
        let hub = LiveHub()
        let session = UUID()
        var follower: LiveSubscription? = hub.subscribe(session: session, kinds: [.figures])
        #expect(hub.wantsFigures(of: session))
        withExtendedLifetime(follower) {}
        follower = nil
        #expect(!hub.wantsFigures(of: session))
    }

    @Test("a reader that keeps up gets everything, in order")
    func liveReader() async {
        let hub = LiveHub()
        let reader = hub.subscribe()
        let collected = Task {
            var numbers: [Int] = []
            for await delivery in reader {
                numbers += number(delivery).map { [$0] } ?? []
                if numbers.count == 100 { break }
            }
            return numbers
        }
        for index in 0..<100 { hub.publish(LiveMessage(kind: .measurement, sensor: "A", payload: ["n": index])) }
        #expect(await collected.value == Array(0..<100))
        #expect(hub.subscriberCount == 1)
        hub.finish()
    }

    @Test("filters match the session and the sensor (case-insensitively), nil matching everything")
    func filters() {
        let session = UUID()
        let message = LiveMessage(
            kind: .sample, session: session, sensor: "C0:FF:EE:00:00:01", payload: [String: Int]())
        #expect(message.matches(session: nil, sensor: nil))
        #expect(message.matches(session: session, sensor: "c0:ff:ee:00:00:01"))
        #expect(!message.matches(session: UUID(), sensor: nil))
        #expect(!message.matches(session: nil, sensor: "C0:FF:EE:00:00:02"))
        #expect(message.json.contains(#""kind":"sample""#))
        #expect(message.json.contains(session.uuidString.lowercased()))
    }

    @Test("a kind's ordinal is its place among allCases (the hub's bit for it)")
    func ordinals() {
        for (index, kind) in LiveMessageKind.allCases.enumerated() {
            #expect(kind.ordinal == index, "\(kind)")
        }
        #expect(LiveMessageKind.allCases.count <= 32, "a subscriber's kinds are one bit each in a UInt32")
    }
}
