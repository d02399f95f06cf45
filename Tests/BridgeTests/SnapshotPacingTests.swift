import Synchronization
import Testing

@testable import Bridge

@Suite("Snapshot pacing: every session's figures in one round a second")
struct SnapshotPacingTests {
    /// A step: `member` pokes at `milliseconds` (or, with `remove`, stops), and who publishes.
    struct Step: Sendable, CustomTestStringConvertible {
        let milliseconds: Int
        let member: String
        var remove = false
        let publishes: [String]

        var testDescription: String {
            remove ? "\(member) stops at \(milliseconds) ms" : "\(member) at \(milliseconds) ms → \(publishes)"
        }
    }

    static let base = ContinuousClock.now

    static let cases: [(String, [Step])] = [
        (
            "one session: at most once a second, on its own samples",
            [
                Step(milliseconds: 0, member: "a", publishes: ["a"]),
                Step(milliseconds: 500, member: "a", publishes: []),
                Step(milliseconds: 999, member: "a", publishes: []),
                Step(milliseconds: 1_000, member: "a", publishes: ["a"]),
                Step(milliseconds: 1_250, member: "a", publishes: []),
                Step(milliseconds: 2_600, member: "a", publishes: ["a"]),
            ]
        ),
        (
            "three sessions: the ones with samples since the last round publish together, in arrival order",
            [
                Step(milliseconds: 0, member: "a", publishes: ["a"]),
                Step(milliseconds: 100, member: "b", publishes: []),
                Step(milliseconds: 200, member: "c", publishes: []),
                Step(milliseconds: 350, member: "b", publishes: []),
                Step(milliseconds: 1_000, member: "a", publishes: ["b", "c", "a"]),
                Step(milliseconds: 1_100, member: "c", publishes: []),
                // The next round is a second after the last one, whoever starts it.
                Step(milliseconds: 1_999, member: "b", publishes: []),
                Step(milliseconds: 2_000, member: "b", publishes: ["c", "b"]),
            ]
        ),
        (
            "a session that stops while waiting is not in the round",
            [
                Step(milliseconds: 0, member: "a", publishes: ["a"]),
                Step(milliseconds: 100, member: "b", publishes: []),
                Step(milliseconds: 150, member: "b", remove: true, publishes: []),
                Step(milliseconds: 1_000, member: "a", publishes: ["a"]),
            ]
        ),
    ]

    @Test("rounds", arguments: cases)
    func rounds(_ name: String, _ steps: [Step]) {
        var pacing = SnapshotPacing<String>()
        for step in steps {
            if step.remove {
                pacing.remove(step.member)
                continue
            }
            let published = pacing.poke(step.member, at: Self.base + .milliseconds(step.milliseconds))
            #expect(published == step.publishes, "\(name): \(step.testDescription)")
        }
        #expect(pacing.waitingCount == 0 || steps.last?.publishes.isEmpty == true)
    }

    /// Counts the looks at a trigger's reader check: one per publication requested.
    final class Looks: Sendable {
        let count = Mutex(0)
        let answer: Bool
        init(answer: Bool = true) { self.answer = answer }
        var seen: Int { count.withLock { $0 } }
    }

    @Test("triggers sharing a pacer request their publications in one round; a reader-less one is not woken")
    func triggersShareRounds() async {
        let clock = Mutex(Self.base)
        let pacer = SnapshotPacer(now: { clock.withLock { $0 } })
        let triggers = [SnapshotTrigger(pacer: pacer), SnapshotTrigger(pacer: pacer), SnapshotTrigger(pacer: pacer)]
        let looks = [Looks(), Looks(), Looks(answer: false)]
        for (trigger, look) in zip(triggers, looks) {
            trigger.whenWanted {
                look.count.withLock { $0 += 1 }
                return look.answer
            }
        }
        triggers[0].poke()
        #expect(looks.map(\.seen) == [1, 0, 0], "the first samples start a round")
        clock.withLock { $0 = Self.base + .milliseconds(300) }
        triggers[1].poke()
        triggers[2].poke()
        #expect(looks.map(\.seen) == [1, 0, 0], "within the second, the others wait for the next round")
        #expect(pacer.waitingCount == 2)
        clock.withLock { $0 = Self.base + .milliseconds(1_000) }
        triggers[0].poke()
        #expect(looks.map(\.seen) == [2, 1, 1], "one poke a second later publishes all three")
        #expect(pacer.waitingCount == 0)

        for trigger in triggers { trigger.finish() }
        var requests: [Int] = []
        for trigger in triggers {
            var count = 0
            for await _ in trigger.requests { count += 1 }
            requests.append(count)
        }
        // The stream keeps the newest request only: two requested are one waiting.
        #expect(requests == [1, 1, 0], "the reader-less trigger's session is not woken")
    }

    @Test("a trigger dropped while waiting leaves the pacer")
    func droppedTriggerLeaves() {
        let clock = Mutex(Self.base)
        let pacer = SnapshotPacer(now: { clock.withLock { $0 } })
        let first = SnapshotTrigger(pacer: pacer)
        first.poke()
        do {
            let dropped = SnapshotTrigger(pacer: pacer)
            dropped.poke()
            #expect(pacer.waitingCount == 1)
        }
        #expect(pacer.waitingCount == 0)
        clock.withLock { $0 = Self.base + .seconds(1) }
        let looks = Looks()
        first.whenWanted {
            look(looks)
        }
        first.poke()
        #expect(looks.seen == 1)
    }

    private func look(_ looks: Looks) -> Bool {
        looks.count.withLock { $0 += 1 }
        return true
    }
}
