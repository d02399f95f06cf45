import Foundation
import Sensors
import Testing

@testable import BlueZ

/// A generator that always gives the same value: jitter factor 1 with a zero spread.
struct ZeroJitterRandom: RandomNumberGenerator {
    mutating func next() -> UInt64 { 0x8000_0000_0000_0000 }
}

private let start = Date(timeIntervalSinceReferenceDate: 800_000_000)

/// The usual surroundings: hci0 usable, seeing the strap, with a free slot.
private func around(
    _ seconds: Double = 0, candidates: [String] = ["hci0"], usable: Bool = true, known: Bool = true
) -> SensorConnection.Surroundings {
    .init(now: start.addingTimeInterval(seconds), candidates: candidates, adapterUsable: usable, deviceKnown: known)
}

private func configuration(repairs: Bool = false, reconnects: Bool = true) -> SensorConnection.Configuration {
    var configuration = SensorConnection.Configuration()
    configuration.backoff.jitter = 0
    configuration.backoff.initialDelay = .milliseconds(500)
    configuration.backoff.maximumDelay = .seconds(4)
    configuration.servicesTimeout = .seconds(10)
    configuration.connectTimeout = .seconds(20)
    configuration.backoff.repairsOnAuthenticationFailure = repairs
    configuration.reconnects = reconnects
    return configuration
}

private let transient = BlueZError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote")

/// A machine and the actions of its last input.
struct ConnectionDriver {
    var machine: SensorConnection
    var actions: [SensorConnection.Action] = []
    var random = ZeroJitterRandom()

    init(_ configuration: SensorConnection.Configuration = configuration()) {
        machine = SensorConnection(address: "AA:BB:CC:DD:EE:01", configuration: configuration)
    }

    @discardableResult
    mutating func feed(_ input: SensorConnection.Input, _ surroundings: SensorConnection.Surroundings = around())
        -> [SensorConnection.Action]
    {
        actions = machine.handle(input, in: surroundings, using: &random)
        return actions
    }

    var scheduled: Date? {
        actions.lazy.compactMap { if case .schedule(let date, _) = $0 { date } else { nil } }.first
    }
}

/// The states, each reached the way a real strap reaches it.
enum ConnectionSituation: String, CaseIterable {
    case idle, discovering, connecting, resolving, subscribing, ready, backingOff, rediscovering, waitingForAdapter,
        repairing

    var driver: ConnectionDriver {
        var driver = ConnectionDriver(configuration(repairs: self == .repairing))
        switch self {
        case .idle: break
        case .discovering: driver.feed(.start, around(candidates: [], known: false))
        case .connecting: driver.feed(.start)
        case .resolving, .subscribing, .ready:
            driver.feed(.start)
            driver.feed(.connectReplied(attempt: 1, .connected))
            if self != .resolving { driver.feed(.servicesResolved(adapter: "hci0")) }
            if self == .ready { driver.feed(.subscribeReplied(attempt: 1, nil)) }
        case .backingOff:
            driver.feed(.start)
            driver.feed(.connectReplied(attempt: 1, .failed(transient, linkUp: false)))
        case .rediscovering:
            driver.feed(.start)
            driver.feed(.connectReplied(attempt: 1, .connected))
            driver.feed(.deviceRemoved(adapter: "hci0"), around(candidates: [], known: false))
        case .waitingForAdapter: driver.feed(.start, around(candidates: [], usable: false, known: false))
        case .repairing:
            driver.feed(.start)
            let lost = BlueZError(name: "org.bluez.Error.AuthenticationFailed", message: "")
            driver.feed(.connectReplied(attempt: 1, .failed(lost, linkUp: false)))
        }
        return driver
    }
}

/// A state's name with its adapter, for the table.
private func name(_ state: SensorConnection.State) -> String {
    switch state {
    case .idle: "idle"
    case .discovering: "discovering"
    case .connecting(let adapter): "connecting \(adapter)"
    case .resolving(let adapter): "resolving \(adapter)"
    case .subscribing(let adapter): "subscribing \(adapter)"
    case .ready(let adapter): "ready \(adapter)"
    case .backingOff: "backingOff"
    case .rediscovering: "rediscovering"
    case .waitingForAdapter: "waitingForAdapter"
    case .repairing(let adapter): "repairing \(adapter)"
    }
}

/// Every input, by name; the timer is the machine's current one, replies answer its current attempt.
private func inputs(for machine: SensorConnection) -> [(String, SensorConnection.Input)] {
    [
        ("start", .start),
        ("stop", .stop),
        ("connect ok", .connectReplied(attempt: machine.attempt, .connected)),
        ("connect failed", .connectReplied(attempt: machine.attempt, .failed(transient, linkUp: false))),
        ("link up", .linkUp(adapter: "hci0")),
        ("link down", .linkDown(adapter: "hci0")),
        ("services resolved", .servicesResolved(adapter: "hci0")),
        ("subscribed", .subscribeReplied(attempt: machine.attempt, nil)),
        ("subscribe failed", .subscribeReplied(attempt: machine.attempt, transient)),
        ("device appeared", .deviceAppeared(adapter: "hci0")),
        ("device removed", .deviceRemoved(adapter: "hci0")),
        ("advertised", .advertised(adapter: "hci0")),
        ("broadcast heard", .broadcastHeard),
        ("adapter lost", .adapterLost(adapter: "hci0")),
        ("adapter ready", .adapterReady(adapter: "hci0")),
        ("slot freed", .slotFreed(adapter: "hci0")),
        ("repair finished", .repairFinished),
        ("timer", .timerFired(generation: machine.timerGeneration)),
    ]
}

/// Where each state goes on each input (with hci0 usable, seeing the strap, a slot free);
/// an input not listed leaves the state as it is.
private let table: [ConnectionSituation: [String: String]] = [
    .idle: ["start": "connecting hci0"],
    .discovering: [
        "stop": "idle", "link up": "resolving hci0", "device appeared": "connecting hci0",
        "advertised": "connecting hci0", "adapter ready": "connecting hci0",
    ],
    .connecting: [
        "stop": "idle", "connect ok": "resolving hci0", "connect failed": "backingOff",
        "device removed": "waitingForAdapter", "adapter lost": "waitingForAdapter", "broadcast heard": "backingOff",
    ],
    .resolving: [
        "stop": "idle", "link down": "backingOff", "services resolved": "subscribing hci0",
        "device removed": "connecting hci0", "adapter lost": "waitingForAdapter", "timer": "backingOff",
    ],
    .subscribing: [
        "stop": "idle", "link down": "backingOff", "subscribed": "ready hci0", "subscribe failed": "backingOff",
        "device removed": "connecting hci0", "adapter lost": "waitingForAdapter",
    ],
    .ready: [
        "stop": "idle", "link down": "backingOff", "device removed": "connecting hci0",
        "adapter lost": "waitingForAdapter",
    ],
    .backingOff: [
        "stop": "idle", "link up": "resolving hci0", "device appeared": "connecting hci0",
        "advertised": "connecting hci0", "adapter ready": "connecting hci0", "timer": "connecting hci0",
    ],
    .rediscovering: [
        "stop": "idle", "link up": "resolving hci0", "device appeared": "connecting hci0",
        "advertised": "connecting hci0", "adapter ready": "connecting hci0", "timer": "connecting hci0",
    ],
    .waitingForAdapter: [
        "stop": "idle", "link up": "resolving hci0", "device appeared": "connecting hci0",
        "advertised": "connecting hci0", "adapter ready": "connecting hci0", "slot freed": "connecting hci0",
    ],
    .repairing: ["stop": "idle", "repair finished": "connecting hci0"],
]

@Suite("SensorConnection: the per-strap state machine (pure, no bus, no sleeping)")
struct SensorConnectionTests {
    @Test("every state reached as a strap reaches it", arguments: ConnectionSituation.allCases)
    func reached(_ situation: ConnectionSituation) {
        let expected: [ConnectionSituation: String] = [
            .idle: "idle", .discovering: "discovering", .connecting: "connecting hci0",
            .resolving: "resolving hci0", .subscribing: "subscribing hci0", .ready: "ready hci0",
            .backingOff: "backingOff", .rediscovering: "rediscovering", .waitingForAdapter: "waitingForAdapter",
            .repairing: "repairing hci0",
        ]
        #expect(name(situation.driver.machine.state) == expected[situation])
    }

    @Test("every state × every input goes where the table says", arguments: ConnectionSituation.allCases)
    func transitions(_ situation: ConnectionSituation) {
        let before = situation.driver
        for (input, value) in inputs(for: before.machine) {
            var driver = before
            driver.feed(value)
            let expected = table[situation]?[input] ?? name(before.machine.state)
            #expect(name(driver.machine.state) == expected, "\(situation) + \(input)")
        }
    }

    @Test("reconnect timings: 0.5, 1, 2, 4, 4 s after each failure, to the date, reset once ready")
    func backoffDates() {
        var driver = ConnectionSituation.ready.driver
        driver.feed(.linkDown(adapter: "hci0"), around(100))
        #expect(driver.actions.contains(.report(.disconnected(.linkLost), adapter: "hci0")))
        var now = 100.0
        var delays: [Double] = []
        for _ in 0..<5 {
            guard let date = driver.scheduled else {
                Issue.record("no timer after a failure: \(driver.actions)")
                return
            }
            delays.append(date.timeIntervalSince(start) - now)
            now = date.timeIntervalSince(start)
            driver.feed(.timerFired(generation: driver.machine.timerGeneration), around(now))
            #expect(driver.actions.contains(.connect(adapter: "hci0", attempt: driver.machine.attempt)))
            driver.feed(
                .connectReplied(attempt: driver.machine.attempt, .failed(transient, linkUp: false)), around(now))
        }
        #expect(delays == [0.5, 1, 2, 4, 4])
        // Once streaming again, the next drop starts over at 0.5 s.
        driver.feed(.timerFired(generation: driver.machine.timerGeneration), around(now))
        driver.feed(.connectReplied(attempt: driver.machine.attempt, .connected), around(now))
        driver.feed(.servicesResolved(adapter: "hci0"), around(now))
        driver.feed(.subscribeReplied(attempt: driver.machine.attempt, nil), around(now))
        #expect(driver.machine.isReady)
        driver.feed(.linkDown(adapter: "hci0"), around(now))
        #expect(driver.scheduled == start.addingTimeInterval(now + 0.5))
    }

    @Test("a stale timer or a reply to an older attempt changes nothing")
    func staleInputs() {
        var driver = ConnectionSituation.backingOff.driver
        let old = driver.machine.timerGeneration
        driver.feed(.advertised(adapter: "hci0"), around(5))
        #expect(name(driver.machine.state) == "connecting hci0")
        driver.feed(.timerFired(generation: old), around(6))
        driver.feed(.connectReplied(attempt: driver.machine.attempt - 1, .connected), around(6))
        #expect(name(driver.machine.state) == "connecting hci0")
        #expect(driver.actions.isEmpty)
    }

    @Test("advertisements cut a backoff short at most once a second")
    func advertisedRateLimit() {
        var driver = ConnectionSituation.backingOff.driver
        driver.feed(.advertised(adapter: "hci0"), around(10))
        driver.feed(.connectReplied(attempt: driver.machine.attempt, .failed(transient, linkUp: false)), around(10))
        #expect(name(driver.machine.state) == "backingOff")
        driver.feed(.advertised(adapter: "hci0"), around(10.5))
        #expect(name(driver.machine.state) == "backingOff", "within the second: waits")
        driver.feed(.advertised(adapter: "hci0"), around(11))
        #expect(name(driver.machine.state) == "connecting hci0")
    }

    @Test("a strap followed through its broadcast: attempts 60 s apart, its advertisements do not cut the wait")
    func broadcastKeepsAttemptsRare() {
        var heard = around(5)
        heard.hearsBroadcast = true
        var driver = ConnectionSituation.connecting.driver
        driver.feed(.connectReplied(attempt: 1, .failed(transient, linkUp: false)), heard)
        #expect(driver.machine.state == .backingOff(until: start.addingTimeInterval(65)))
        #expect(driver.scheduled == start.addingTimeInterval(65))
        heard.now = start.addingTimeInterval(20)
        driver.feed(.advertised(adapter: "hci0"), heard)
        #expect(driver.actions.isEmpty, "a broadcast says it is there, not that it connects now")
        #expect(name(driver.machine.state) == "backingOff")
        // Not heard any more (gone quiet, or the shell stopped following): advertisements cut it short again.
        driver.feed(.advertised(adapter: "hci0"), around(21))
        #expect(name(driver.machine.state) == "connecting hci0")
        // Heard first while already backing off (0.5 s): the wait grows to 60 s from then.
        var early = ConnectionSituation.backingOff.driver
        var now = around(1)
        now.hearsBroadcast = true
        early.feed(.broadcastHeard, now)
        #expect(early.machine.state == .backingOff(until: start.addingTimeInterval(61)))
        #expect(early.scheduled == start.addingTimeInterval(61))
        // Without a broadcast heard: the usual backoff.
        var normal = ConnectionSituation.connecting.driver
        normal.feed(.connectReplied(attempt: 1, .failed(transient, linkUp: false)), around(5))
        #expect(normal.machine.state == .backingOff(until: start.addingTimeInterval(5.5)))
    }

    @Test(
        "once a broadcast is heard, every attempt is 60 s after the previous one, the first after it included: no 25 ms retry on another adapter, no immediate abort retry"
    )
    func firstAttemptAfterBroadcastWaits() {
        func heard(_ seconds: Double, candidates: [String] = ["hci0", "hci1"]) -> SensorConnection.Surroundings {
            var surroundings = around(seconds, candidates: candidates)
            surroundings.hearsBroadcast = true
            return surroundings
        }
        let abort = BlueZError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        let full = BlueZError(name: "org.bluez.Error.Failed", message: "Connection limit reached")
        // The first attempt, as the broadcast comes in: at once.
        var driver = ConnectionDriver(configuration())
        driver.feed(.start, heard(0))
        #expect(driver.actions.contains(.connect(adapter: "hci0", attempt: 1)))
        // hci0 is out of slots 25 ms later: the next adapter, but not before 60 s have passed.
        var moved = driver
        moved.feed(.connectReplied(attempt: 1, .failed(full, linkUp: false)), heard(0.025))
        #expect(!moved.actions.contains { if case .connect = $0 { true } else { false } }, "\(moved.actions)")
        #expect(moved.machine.state == .backingOff(until: start.addingTimeInterval(60)))
        moved.feed(.timerFired(generation: moved.machine.timerGeneration), heard(60, candidates: ["hci1"]))
        #expect(moved.actions.contains(.connect(adapter: "hci1", attempt: 2)))
        // An abort-by-local's immediate retry waits too.
        var aborted = driver
        aborted.feed(.connectReplied(attempt: 1, .failed(abort, linkUp: false)), heard(0.025))
        #expect(!aborted.actions.contains { if case .connect = $0 { true } else { false } })
        #expect(aborted.scheduled.map { $0 >= start.addingTimeInterval(60) } == true)
        // A strap advertising while the wait runs, or an adapter coming back, does not cut it short.
        aborted.feed(.adapterReady(adapter: "hci1"), heard(30))
        #expect(!aborted.actions.contains { if case .connect = $0 { true } else { false } })
        // Heard while our own attempt is pending (it pauses scanning): called off, a minute's wait.
        var pending = ConnectionDriver(configuration())
        pending.feed(.start)
        pending.feed(.broadcastHeard, heard(3))
        #expect(pending.actions.first == .disconnect(adapter: "hci0"))
        #expect(pending.machine.state == .backingOff(until: start.addingTimeInterval(63)))
        pending.feed(.connectReplied(attempt: 1, .failed(abort, linkUp: false)), heard(3.1))
        #expect(pending.actions.isEmpty, "the called-off attempt's reply is stale")
        // Heard first while waiting for an adapter: one coming back 10 s later waits out the minute;
        // a slot freed for it by priority (its session wants RR) is taken at once.
        var waiting = ConnectionDriver(configuration())
        waiting.feed(.start, around(0, candidates: [], usable: false, known: true))
        #expect(name(waiting.machine.state) == "waitingForAdapter")
        waiting.feed(.broadcastHeard, heard(10, candidates: []))
        var freed = waiting
        waiting.feed(.adapterReady(adapter: "hci0"), heard(20))
        #expect(!waiting.actions.contains { if case .connect = $0 { true } else { false } }, "\(waiting.actions)")
        #expect(waiting.machine.state == .backingOff(until: start.addingTimeInterval(70)))
        freed.feed(.slotFreed(adapter: "hci0"), heard(20))
        #expect(freed.actions.contains(.connect(adapter: "hci0", attempt: 1)))
        // Not heard: the abort gets its immediate retry, as before.
        var quiet = ConnectionDriver(configuration())
        quiet.feed(.start)
        quiet.feed(.connectReplied(attempt: 1, .failed(abort, linkUp: false)), around(0.025))
        #expect(quiet.actions.contains(.connect(adapter: "hci0", attempt: 2)))
    }

    @Test("InProgress: someone else's Connect is awaited until its deadline, then torn down")
    func connectInProgress() {
        var driver = ConnectionSituation.connecting.driver
        let busy = BlueZError(name: "org.bluez.Error.InProgress", message: "In Progress")
        driver.feed(.connectReplied(attempt: 1, .failed(busy, linkUp: false)), around(3))
        #expect(driver.scheduled == start.addingTimeInterval(23))
        var linked = driver
        linked.feed(.linkUp(adapter: "hci0"), around(4))
        #expect(name(linked.machine.state) == "resolving hci0")
        driver.feed(.timerFired(generation: driver.machine.timerGeneration), around(23))
        #expect(driver.actions.first == .disconnect(adapter: "hci0"))
        #expect(name(driver.machine.state) == "backingOff")
    }

    @Test("an error with the link up is a connection; ServicesResolved never coming is a timeout")
    func linkUpAndTimeout() {
        var driver = ConnectionSituation.connecting.driver
        driver.feed(.connectReplied(attempt: 1, .failed(transient, linkUp: true)), around(1))
        #expect(name(driver.machine.state) == "resolving hci0")
        #expect(driver.scheduled == start.addingTimeInterval(11))
        driver.feed(.timerFired(generation: driver.machine.timerGeneration), around(11))
        #expect(
            driver.actions.starts(with: [
                .disconnect(adapter: "hci0"), .report(.disconnected(.timeout), adapter: "hci0"),
            ]))
    }

    @Test("no free slot: the adapter is marked full and the next candidate is tried at once")
    func slotRefused() {
        var driver = ConnectionDriver()
        driver.feed(.start, around(candidates: ["hci0", "hci1"]))
        let full = BlueZError(name: "org.bluez.Error.Failed", message: "le-connection-concurrent-connection-limit")
        #expect(full.code == .connectionLimitReached)
        driver.feed(.connectReplied(attempt: 1, .failed(full, linkUp: false)), around(1, candidates: ["hci0", "hci1"]))
        #expect(driver.actions.contains(.markFull(adapter: "hci0")))
        #expect(driver.actions.contains(.connect(adapter: "hci1", attempt: 2)))
        #expect(driver.machine.backoff.failures == 0, "not the strap's failure")
        // With no other adapter it waits for a slot, and tells the caller why.
        var alone = ConnectionDriver()
        alone.feed(.start)
        alone.feed(.connectReplied(attempt: 1, .failed(full, linkUp: false)), around(1))
        #expect(name(alone.machine.state) == "waitingForAdapter")
        #expect(alone.actions.contains(.attemptEnded(full)))
        alone.feed(.slotFreed(adapter: "hci0"), around(9))
        #expect(alone.actions.contains(.connect(adapter: "hci0", attempt: 2)))
    }

    @Test("the adapter under a streaming strap goes: moved to another at once, without a backoff")
    func adapterLostMoves() {
        var driver = ConnectionSituation.ready.driver
        driver.feed(.adapterLost(adapter: "hci0"), around(5, candidates: ["hci0", "hci2"]))
        #expect(driver.actions.contains(.report(.disconnected(.adapterUnavailable), adapter: "hci0")))
        #expect(name(driver.machine.state) == "connecting hci2")
        var other = ConnectionSituation.ready.driver
        other.feed(.adapterLost(adapter: "hci1"), around(5))
        #expect(name(other.machine.state) == "ready hci0", "another adapter's loss is not this strap's")
    }

    @Test("a lost bond is reported with how to pair again, unless re-pairing is opted in")
    func bondLost() {
        let lost = BlueZError(name: "org.bluez.Error.AuthenticationFailed", message: "")
        var driver = ConnectionSituation.connecting.driver
        driver.feed(.connectReplied(attempt: 1, .failed(lost, linkUp: false)))
        #expect(
            driver.actions.contains(
                .report(.disconnected(.failed(SensorConnection.bondLost("AA:BB:CC:DD:EE:01"))), adapter: "hci0")))
        #expect(name(driver.machine.state) == "backingOff")
        let repairing = ConnectionSituation.repairing.driver
        #expect(repairing.actions.contains(.repair(adapter: "hci0")))
    }

    @Test("without reconnecting, a failure or a drop ends the machine")
    func noReconnects() {
        var driver = ConnectionDriver(configuration(reconnects: false))
        driver.feed(.start)
        driver.feed(.connectReplied(attempt: 1, .failed(transient, linkUp: false)))
        #expect(name(driver.machine.state) == "idle")
        #expect(driver.actions.contains(.attemptEnded(transient)))
    }

    @Test("discovery is wanted exactly while the strap must be found")
    func wantsDiscovery() {
        let wanting = ConnectionSituation.allCases.filter { $0.driver.machine.wantsDiscovery }
        #expect(wanting == [.discovering, .rediscovering, .repairing])
    }
}

@Suite("AdapterPool: placement and link slots (pure)")
struct AdapterPoolTests {
    @Test("candidates: usable adapters that see the strap, strongest first, then least loaded; a binding is respected")
    func candidates() {
        var pool = AdapterPool(allowed: nil)
        for name in ["hci0", "hci1", "hci2"] { pool.update(name, present: true, powered: true) }
        pool.update("hci3", present: true, powered: false)
        let links = ["hci0": 3, "hci1": 1, "hci2": 1]
        let seen: [String: Int?] = ["hci0": -40, "hci1": -70, "hci2": -70, "hci3": -20]
        #expect(pool.candidates(sightings: seen, binding: nil) { links[$0] ?? 0 } == ["hci0", "hci1", "hci2"])
        #expect(pool.candidates(sightings: seen, binding: "hci2") { links[$0] ?? 0 } == ["hci2"])
        pool.markFull("hci0", linksInUse: 3)
        #expect(pool.candidates(sightings: seen, binding: nil) { links[$0] ?? 0 } == ["hci1", "hci2"])
        #expect(pool.freeSlots { _ in 3 } == [])
        #expect(pool.freeSlots { $0 == "hci0" ? 2 : 0 } == ["hci0"])
        #expect(pool.status(of: "hci0", linksInUse: 2, sensors: []).slotRefusals == 1)
        // Freed, one slot: taken while a link is being set up on it; the limit stays the controller's.
        #expect(pool.hasRefused("hci0") && !pool.hasRefused("hci1"))
        #expect(pool.isTaken("hci0", linksInUse: 2, connecting: 1))
        #expect(!pool.isTaken("hci0", linksInUse: 1, connecting: 1))
        #expect(pool.isTaken("hci0", linksInUse: 3, connecting: 0), "full again at its limit")
        #expect(pool.freeSlots { _ in 2 } == [], "a freed slot is reported once")
        #expect(!pool.isTaken("hci1", linksInUse: 9, connecting: 3), "never refused: no count to go by")
    }

    @Test("availability: ready when one adapter is; a configured list ignores other adapters")
    func availability() {
        var pool = AdapterPool(allowed: ["hci1"])
        #expect(pool.availability == .absent)
        pool.update("hci0", present: true, powered: true)
        #expect(pool.availability == .absent && !pool.anyUsable)
        pool.update("hci1", present: true, powered: false)
        #expect(pool.availability == .poweredOff)
        pool.update("hci1", present: true, powered: true)
        #expect(pool.availability == .ready)
        pool.serviceRunning = false
        #expect(pool.availability == .serviceStopped && !pool.isUsable("hci1"))
    }
}
