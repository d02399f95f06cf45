import BridgeOut
import Foundation
import GATT
import Testing

/// The feed as a table: facts in, timed messages out, driven only by the times it is given.
@Suite struct OSCFeedTests {
    static let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let beat = "/avatar/parameters/isHRBeat"
    static let toggle = "/avatar/parameters/HeartBeatToggle"
    static let connected = "/avatar/parameters/isHRConnected"
    static let heartRate = "/avatar/parameters/HR"

    static func reading(_ bpm: Int, rr raws: [UInt16] = [], at time: Date, contact: SensorContact = .detected)
        -> OSCFact
    {
        .reading(
            OSCReading(heartRate: bpm, rrIntervals: raws.map(RRInterval.init(raw:)), contact: contact, receivedAt: time)
        )
    }

    /// Wakes the feed at each time it asks for, up to `end`; everything it sends, in order.
    static func run(_ feed: inout OSCFeed, until end: Date) -> [OSCTimedMessage] {
        var sent: [OSCTimedMessage] = []
        while let due = feed.nextDue, due <= end { sent += feed.tick(now: due) }
        return sent
    }

    static func seconds(_ raws: [UInt16]) -> Double { Double(raws.reduce(0) { $0 + Int($1) }) / 1024 }

    static func dues(_ sent: [OSCTimedMessage], _ address: String, _ value: Bool) -> [Date] {
        sent.filter { $0.message == OSCMessage(address, [.bool(value)]) }.map(\.due)
    }

    /// The same times within a microsecond (date sums round differently in the last bit).
    static func close(_ actual: [Date], _ expected: [Date]) -> Bool {
        actual.count == expected.count
            && zip(actual, expected).allSatisfy { abs($0.timeIntervalSince($1)) < 0.000_001 }
    }

    // MARK: values

    @Test func nothingIsSentBeforeTheFirstFact() {
        var feed = OSCFeed()
        #expect(feed.nextDue == nil)
        #expect(feed.tick(now: Self.t0).isEmpty)
        #expect(feed.finish(at: Self.t0).isEmpty)
    }

    @Test func valuesGoOutOnEveryReadingAndEverySecondBetween() {
        var feed = OSCFeed(configuration: .init(preset: .vrcosc))
        let first = feed.receive(Self.reading(72, at: Self.t0))
        #expect(first.count == 6 && first.allSatisfy { $0.due == Self.t0 })
        #expect(feed.nextDue == Self.t0 + 1)
        #expect(feed.tick(now: Self.t0 + 0.5).isEmpty)
        let resent = feed.tick(now: Self.t0 + 1)
        #expect(resent.map(\.message) == first.map(\.message))
        #expect(resent.allSatisfy { $0.due == Self.t0 + 1 })
        // A reading resets the resend timer.
        let second = feed.receive(Self.reading(80, at: Self.t0 + 1.7))
        #expect(second.first?.message == OSCMessage("/avatar/parameters/VRCOSC/Heartrate/Connected", [.bool(true)]))
        #expect(second[1].message == OSCMessage("/avatar/parameters/VRCOSC/Heartrate/Value", [.int32(80)]))
        #expect(Self.close(feed.nextDue.map { [$0] } ?? [], [Self.t0 + 2.7]))
    }

    @Test func aLateWakeSendsOnceNotOncePerMissedSecond() {
        var feed = OSCFeed(configuration: .init(preset: .custom([.heartRate: "HR"])))
        _ = feed.receive(Self.reading(72, at: Self.t0))
        let late = feed.tick(now: Self.t0 + 5.5)
        #expect(late.count == 1)
        #expect(feed.nextDue == Self.t0 + 6.5)
    }

    @Test func connectingComesBeforeAnyReadingAndIsNotActive() {
        var feed = OSCFeed(configuration: .init(preset: .hrtovrchat))
        let sent = feed.receive(.connected(at: Self.t0)).map(\.message)
        #expect(sent.contains(OSCMessage(Self.connected, [.bool(true)])))
        #expect(sent.contains(OSCMessage("/avatar/parameters/isHRActive", [.bool(false)])))
        #expect(sent.contains(OSCMessage(Self.heartRate, [.int32(0)])))
        #expect(feed.receive(.connected(at: Self.t0 + 0.2)).isEmpty)
        let reading = feed.receive(Self.reading(64, at: Self.t0 + 0.5)).map(\.message)
        #expect(reading.contains(OSCMessage("/avatar/parameters/isHRActive", [.bool(true)])))
    }

    @Test func aBatteryChangeIsSentAtOnceAndARepeatIsNot() {
        var feed = OSCFeed(configuration: .init(preset: .custom([.battery: "Battery"])))
        #expect(
            feed.receive(.battery(percent: 85, at: Self.t0)).map(\.message) == [
                OSCMessage("/avatar/parameters/Battery", [.int32(85)])
            ])
        #expect(feed.receive(.battery(percent: 85, at: Self.t0 + 0.1)).isEmpty)
        #expect(
            feed.receive(.battery(percent: 140, at: Self.t0 + 0.2)).map(\.message) == [
                OSCMessage("/avatar/parameters/Battery", [.int32(100)])
            ])
    }

    // MARK: beats

    /// Beats are the ends of the RR intervals, back-dated from the frame's receipt and played
    /// `beatDelay` later; each raises isHRBeat for the pulse and flips the toggle.
    @Test func beatsPlayAtTheirOwnTimesFromRR() {
        var feed = OSCFeed(configuration: .init(preset: .ironHeart, beatDelay: .seconds(2)))
        let frame1: [UInt16] = [800, 830, 790]
        let atArrival = feed.receive(Self.reading(72, rr: frame1, at: Self.t0))
        #expect(Self.dues(atArrival, Self.beat, true).isEmpty, "every beat is still ahead")
        let frame2: [UInt16] = [815]
        var sent = Self.run(&feed, until: Self.t0 + Self.seconds(frame2) - 0.01)
        sent += feed.receive(Self.reading(73, rr: frame2, at: Self.t0 + Self.seconds(frame2)))
        sent += Self.run(&feed, until: Self.t0 + 4)

        let beatTimes = [
            Self.t0 - Self.seconds([830, 790]), Self.t0 - Self.seconds([790]), Self.t0,
            Self.t0 + Self.seconds(frame2),
        ].map { $0 + 2 }
        let rises = Self.dues(sent, Self.beat, true)
        #expect(rises.count == beatTimes.count)
        for (rise, expected) in zip(rises, beatTimes) {
            #expect(abs(rise.timeIntervalSince(expected)) < 0.001, "beat at \(rise), RR says \(expected)")
        }
        let falls = Self.dues(sent, Self.beat, false)
        #expect(falls.count == rises.count)
        for (fall, rise) in zip(falls, rises) { #expect(abs(fall.timeIntervalSince(rise) - 0.1) < 0.001) }
        let toggles = sent.filter { $0.message.address == Self.toggle }
        #expect(toggles.map(\.message.arguments) == [[.bool(true)], [.bool(false)], [.bool(true)], [.bool(false)]])
        #expect(toggles.map(\.due) == rises)
        // The feed asks to be woken at each beat's edges: the times it was given are the dues.
        #expect(sent.map(\.due) == sent.map(\.due).sorted())
    }

    /// With no delay a frame's beats are already due at its arrival: they go at once, in order,
    /// each pulse complete, the last one falling a pulse later.
    @Test func beatsAlreadyDueFireAtOnceInOrder() {
        var feed = OSCFeed(configuration: .init(preset: .ironHeart, beatDelay: .zero))
        let sent = feed.receive(Self.reading(70, rr: [860, 840], at: Self.t0))
        let beats = sent.filter { $0.message.address == Self.beat || $0.message.address == Self.toggle }
        let first = Self.t0 - Self.seconds([840])
        #expect(
            beats.map(\.message) == [
                OSCMessage(Self.toggle, [.bool(true)]), OSCMessage(Self.beat, [.bool(true)]),
                OSCMessage(Self.beat, [.bool(false)]),
                OSCMessage(Self.toggle, [.bool(false)]), OSCMessage(Self.beat, [.bool(true)]),
            ])
        #expect(beats.map(\.due) == [first, first, first + 0.1, Self.t0, Self.t0])
        #expect(feed.nextDue == Self.t0 + 0.1)
        #expect(feed.tick(now: Self.t0 + 0.1).map(\.message) == [OSCMessage(Self.beat, [.bool(false)])])
    }

    /// A later frame's beat that back-dates before a beat already played is played after it:
    /// every RR is one beat, in the heart's order, none twice.
    @Test func beatsKeepTheirOrderAcrossFramesAndNeverRepeat() {
        var feed = OSCFeed(configuration: .init(preset: .hrtovrchat, beatDelay: .milliseconds(500)))
        var sent = feed.receive(Self.reading(70, rr: [850], at: Self.t0))
        // Arrives 0.3 s later with an RR of 0.9 s: its beat back-dates to before the first frame's.
        sent += feed.receive(Self.reading(70, rr: [900, 310], at: Self.t0 + 0.3))
        sent += Self.run(&feed, until: Self.t0 + 5)
        let rises = Self.dues(sent, Self.beat, true)
        #expect(Self.close(rises, [Self.t0 + 0.5, Self.t0 + 0.5, Self.t0 + 0.8]), "\(rises)")
        #expect(rises == rises.sorted())
        // The second beat comes while the first pulse is up: the pulse lasts a pulse from it.
        #expect(Self.close(Self.dues(sent, Self.beat, false), [Self.t0 + 0.6, Self.t0 + 0.9]))
    }

    @Test func noRRNoBeats() {
        var feed = OSCFeed(configuration: .init(preset: .ironHeart))
        var sent: [OSCTimedMessage] = []
        for second in 0..<5 {
            sent += feed.receive(Self.reading(72, at: Self.t0 + Double(second)))
            sent += Self.run(&feed, until: Self.t0 + Double(second) + 0.99)
        }
        sent += feed.receive(Self.reading(72, rr: [0], at: Self.t0 + 5))
        sent += Self.run(&feed, until: Self.t0 + 8)
        #expect(!sent.contains { $0.message.address == Self.beat || $0.message.address == Self.toggle })
        #expect(!sent.isEmpty)
    }

    @Test func aPresetWithoutBeatParametersSchedulesNone() {
        var feed = OSCFeed(configuration: .init(preset: .vrcosc))
        _ = feed.receive(Self.reading(72, rr: [800, 800], at: Self.t0))
        #expect(feed.nextDue == Self.t0 + 1, "woken for the resend only")
    }

    // MARK: drop

    /// The strap drops while a pulse is up and more beats wait: the pulse falls, the heart rate
    /// goes to 0, connected false, and no beat follows.
    @Test func theDropSequence() {
        var feed = OSCFeed(configuration: .init(preset: .hrtovrchat, beatDelay: .seconds(1)))
        _ = feed.receive(Self.reading(72, rr: [800, 800], at: Self.t0))
        let firstBeat = Self.t0 - Self.seconds([800]) + 1
        let rise = Self.run(&feed, until: firstBeat)
        #expect(rise.last?.message == OSCMessage(Self.beat, [.bool(true)]))
        let drop = Self.t0 + 0.25
        let sent = feed.receive(.disconnected(at: drop))
        #expect(sent.allSatisfy { $0.due == drop })
        #expect(
            sent.map(\.message) == [
                OSCMessage(Self.beat, [.bool(false)]),
                OSCMessage(Self.heartRate, [.int32(0)]), OSCMessage("/avatar/parameters/onesHR", [.int32(0)]),
                OSCMessage("/avatar/parameters/tensHR", [.int32(0)]),
                OSCMessage("/avatar/parameters/hundredsHR", [.int32(0)]),
                OSCMessage(Self.connected, [.bool(false)]), OSCMessage("/avatar/parameters/isHRActive", [.bool(false)]),
                OSCMessage("/avatar/parameters/HRPercent", [.float32(0)]),
            ])
        let after = Self.run(&feed, until: Self.t0 + 5)
        #expect(!after.contains { $0.message.address == Self.beat }, "the beat due at t0 + 1 s never fires")
        #expect(
            after.filter { $0.message == OSCMessage(Self.connected, [.bool(false)]) }.count == 4, "resent each second")
        let again = feed.receive(.disconnected(at: Self.t0 + 5.5))
        #expect(
            !again.contains { $0.due == Self.t0 + 5.5 },
            "a second drop says nothing new (only the resend due before it)")
    }

    @Test func holdKeepsTheLastHeartRateOnDrop() {
        var feed = OSCFeed(configuration: .init(preset: .hrpresence, onDrop: .hold))
        _ = feed.receive(Self.reading(72, rr: [819], at: Self.t0))
        let sent = feed.receive(.disconnected(at: Self.t0 + 0.5)).map(\.message)
        #expect(sent.contains(OSCMessage(Self.heartRate, [.int32(72)])))
        #expect(sent.contains(OSCMessage("/avatar/parameters/RRInterval", [.int32(800)])))
        #expect(sent.contains(OSCMessage(Self.connected, [.bool(false)])))
    }

    @Test func zeroAlsoZeroesTheRRInterval() {
        var feed = OSCFeed(configuration: .init(preset: .hrpresence))
        _ = feed.receive(Self.reading(72, rr: [819], at: Self.t0))
        let sent = feed.receive(.disconnected(at: Self.t0 + 0.5)).map(\.message)
        #expect(sent.contains(OSCMessage("/avatar/parameters/RRInterval", [.int32(0)])))
        #expect(sent.contains(OSCMessage("/avatar/parameters/floatHR", [.float32(-1)])))
    }

    /// After a reconnect, a frame's beats from before the drop are not played.
    @Test func beatsFromBeforeTheDropNeverFire() {
        var feed = OSCFeed(configuration: .init(preset: .hrtovrchat, beatDelay: .seconds(1)))
        _ = feed.receive(Self.reading(72, at: Self.t0))
        _ = feed.receive(.disconnected(at: Self.t0 + 1))
        _ = feed.receive(.connected(at: Self.t0 + 1.2))
        var sent = feed.receive(Self.reading(72, rr: [700, 600], at: Self.t0 + 1.5))
        sent += Self.run(&feed, until: Self.t0 + 5)
        #expect(Self.close(Self.dues(sent, Self.beat, true), [Self.t0 + 2.5]))
    }

    @Test func finishSendsTheDropAndThenNothing() {
        var feed = OSCFeed(configuration: .init(preset: .ironHeart))
        _ = feed.receive(Self.reading(72, rr: [800], at: Self.t0))
        let sent = feed.finish(at: Self.t0 + 0.5).map(\.message)
        #expect(sent.contains(OSCMessage(Self.connected, [.bool(false)])))
        #expect(feed.nextDue == nil)
        #expect(feed.receive(Self.reading(72, at: Self.t0 + 1)).isEmpty)
    }

    // MARK: chatbox

    @Test func theChatboxIsRateLimitedAndOnlyWhileAHeartRateArrives() {
        let chatbox = OSCChatbox(format: "❤ {hr} bpm", every: .seconds(5))
        var feed = OSCFeed(configuration: .init(preset: .custom([.heartRate: "HR"]), chatbox: chatbox))
        var sent: [OSCTimedMessage] = []
        for second in 0...11 {
            sent += feed.receive(Self.reading(70 + second, at: Self.t0 + Double(second)))
            sent += Self.run(&feed, until: Self.t0 + Double(second) + 0.5)
        }
        let lines = sent.filter { $0.message.address == OSCChatbox.address }
        #expect(Self.close(lines.map(\.due), [Self.t0, Self.t0 + 5, Self.t0 + 10]))
        #expect(
            lines.map(\.message)
                == [70, 75, 80].map {
                    OSCMessage("/chatbox/input", [.string("❤ \($0) bpm"), .bool(true), .bool(false)])
                })
        var afterDrop = feed.receive(.disconnected(at: Self.t0 + 12))
        afterDrop += Self.run(&feed, until: Self.t0 + 30)
        #expect(!afterDrop.contains { $0.message.address == OSCChatbox.address })
    }

    @Test func theChatboxWaitsForANonZeroHeartRate() {
        var feed = OSCFeed(configuration: .init(preset: .custom([.heartRate: "HR"]), chatbox: OSCChatbox()))
        var sent = feed.receive(.connected(at: Self.t0))
        sent += feed.receive(Self.reading(0, at: Self.t0 + 1))
        sent += Self.run(&feed, until: Self.t0 + 3)
        #expect(!sent.contains { $0.message.address == OSCChatbox.address })
        let reading = feed.receive(Self.reading(61, at: Self.t0 + 3.5))
        #expect(reading.last?.message.arguments.first == .string("❤ 61 bpm"))
    }
}
