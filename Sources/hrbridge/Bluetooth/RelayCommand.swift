import ArgumentParser
import BlueZ
import BridgeOut
import DBus
import Foundation
import GATT
import JSONSupport
import Logging
import SensorSimulator
import Sensors
import Synchronization
import Wire

#if canImport(Glibc)
    import Glibc
#endif

/// `hrbridge relay`: hold a strap and be it, as a Bluetooth heart-rate sensor, for Zwift, a watch or a phone.
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Hold a strap and pass it on as a Bluetooth heart-rate sensor (for Zwift, a watch, a phone).",
        discussion: """
            Connects to the strap (the address given, else a paired or trusted strap, else the first
            found) and serves the standard Heart Rate service through BlueZ: every frame of the strap
            is passed on within one turn of its arrival, with its heart rate, contact and every RR
            interval unchanged (split into two notifications when it does not fit 20 bytes). When
            the strap drops, advertising goes on and nothing is sent until it is back: no value is
            repeated or invented. --simulate passes on the simulator's first strap instead.

            With two or more adapters the last one serves apps and the others hold straps
            (--peripheral-adapter and --adapter choose); with one adapter the strap is connected
            first and the same adapter serves apps: `hrbridge doctor` says whether this controller
            and kernel allow it (docs/bluetooth.md, "Passing a strap on").

            --json: monitor's lines for the strap, and {"event":"peripheral","adapter":…,"state":
            "placed"|"registered"|"advertising"|"notAdvertising"|"notifying"|"notNotifying"|"energyReset"|
            "refusedWrite"|"failed","detail":…}; the last line is {"event":"stats","sensors":…,"peripheral":…}
            (frames received and sent, frames with nobody subscribed, refused writes, centrals).
            Ctrl-C or SIGTERM ends it: the stats line, exit status 0. Exit status 69 when bluetoothd,
            an adapter or a strap is missing.
            """
    )

    @OptionGroup var bluetooth: BluetoothOptions

    @Argument(help: "The strap's address (default: a paired or trusted strap, else the first found).")
    var address: String?

    @Flag(help: "Pass on the simulator's first strap (no strap needed).")
    var simulate = false

    @Option(help: "The adapter that serves apps, e.g. hci1 (default: the last adapter when there are several).")
    var peripheralAdapter: String?

    @Option(help: "The name apps see (printable, at most 18 bytes).")
    var name = "hrbridge HR"

    @Option(help: "Body sensor location apps read: chest, wrist, finger, hand, earLobe, foot, other.")
    var location = "chest"

    @Flag(inversion: .prefixedNo, help: "Pass on RR intervals.")
    var rr = true

    @Flag(help: "Pass on energy expended and serve the control point that resets it.")
    var energy = false

    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Double?

    @Flag(help: "JSON lines.")
    var json = false

    func validate() throws {
        try AddressArguments.check(address.map { [$0] } ?? [])
        guard Self.location(location) != nil else {
            throw ValidationError("--location must be one of chest, wrist, finger, hand, earLobe, foot, other")
        }
        if let address { _ = try Self.source(address) }
        if simulate && address != nil { throw ValidationError("give a strap address or --simulate, not both") }
        try SecondsOption.check(duration, "--duration")
    }

    static func location(_ text: String) -> BodySensorLocation? {
        let names: [String: BodySensorLocation] = [
            "other": .other, "chest": .chest, "wrist": .wrist, "finger": .finger, "hand": .hand, "earlobe": .earLobe,
            "foot": .foot,
        ]
        return names[text.lowercased()]
    }

    static func source(_ text: String) throws -> String {
        guard case .strap(let address) = try? RelaySource(parsing: text) else {
            throw ValidationError("\(text) is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        return address
    }

    func run() async throws {
        let statistics = MonitorStatistics()
        let view = MonitorView(json: json)
        let lines = RelayLines(json: json)
        let interrupt = InterruptWatch { _ in
            view.finish(statistics: statistics)
            Glibc.exit(0)
        }
        var logger = Logger(label: "hrbridge")
        logger.logLevel = bluetooth.verbose ? .info : .error
        let bus = try await BluetoothSettings.systemBus(logger: logger)
        let available = await BluetoothSettings.adapterNames(on: bus)
        guard
            let placement = PeripheralPlacement.choose(
                available: available, requested: peripheralAdapter, strapAdapters: bluetooth.adapter)
        else {
            StandardError.write(
                "hrbridge: BlueZ has no Bluetooth adapter (is bluetoothd running? hrbridge doctor explains more)")
            throw ExitCode(69)
        }

        // The strap side: BlueZ, or the simulator.
        let source: any SensorAdapter
        let target: SensorIdentity
        var blueZ: (DBusConnection, BlueZAdapter)?
        if simulate {
            let mock = MockSensorAdapter(scenario: .default, clock: SystemWallClock(), logger: logger)
            guard let first = mock.sensors.first else { throw ExitCode(69) }
            source = mock
            target = first
        } else {
            var settings = bluetooth.settings
            settings.adapter = placement.straps ?? []
            let (connection, adapter) = try await settings.open(waiting: { view.adapter(nil, $0) })
            blueZ = (connection, adapter)
            let choice = await StrapSelection.choose(adapter: adapter, addresses: address.map { [$0] } ?? [])
            guard let first = choice.straps.first else {
                StandardError.write(choice.nothingFound)
                await adapter.shutdown()
                await connection.close()
                throw ExitCode(69)
            }
            source = adapter
            target = first
        }
        let options = HeartRateRelay.Options(forwardRR: rr, forwardEnergy: energy)
        let events = source.events()

        var configuration = PeripheralConfiguration(
            adapter: placement.peripheral, localName: AdvertisedName.sanitized(name))
        configuration.bodySensorLocation = Self.location(location) ?? .chest
        configuration.energyControlPoint = energy
        let peripheral = HeartRatePeripheral(connection: bus, configuration: configuration, logger: logger)
        await peripheral.setExcludedAddresses([target.address])
        let peripheralEvents = peripheral.events()

        // On one adapter the strap comes first: connecting pauses advertising, and some kernels
        // refuse a central link while an app is connected to us.
        let strapReady = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        lines.placement(placement, strap: target, simulated: simulate)
        try? await source.connect(target)
        interrupt.ready()

        let final = Mutex<PeripheralStatus?>(nil)
        let relay = SharedRelay(HeartRateRelay(address: target.address, options: options))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    statistics.record(event)
                    view.show(event, statistics: statistics)
                    for action in relay.state.withLock({ $0.handle(event) }) {
                        switch action {
                        case .send(let frame): await peripheral.send(frame)
                        case .battery(let level): await peripheral.setBatteryLevel(level)
                        case .source(let strap, let up):
                            if up { strapReady.continuation.yield() }
                            guard placement.isShared && !simulate else { break }
                            await peripheral.shareAdapter(
                                SharedAdapter(adapter: placement.peripheral), strap: strap, up: up, passedOn: true)
                        }
                    }
                }
            }
            group.addTask {
                for await event in peripheralEvents {
                    lines.show(event, adapter: placement.peripheral)
                    if event == .energyResetRequested { relay.state.withLock { $0.resetEnergy() } }
                }
            }
            group.addTask {
                if placement.isShared && !simulate {
                    // At most 30 s: a strap that does not come leaves apps a sensor that says nothing yet.
                    await withTaskGroup(of: Void.self) { wait in
                        wait.addTask { for await _ in strapReady.stream { return } }
                        wait.addTask { try? await Task.sleep(for: .seconds(30)) }
                        await wait.next()
                        wait.cancelAll()
                    }
                }
                do {
                    try await peripheral.run()
                } catch {
                    lines.failed(error, adapter: placement.peripheral)
                }
            }
            group.addTask { for await _ in interrupt.signals { return } }
            if let duration { group.addTask { try? await Task.sleep(for: .seconds(duration)) } }
            await group.next()
            // The state while it ran (stopping unregisters everything).
            let running = await peripheral.status
            final.withLock { $0 = running }
            group.cancelAll()
        }
        try? await source.disconnect(target)
        if let (connection, adapter) = blueZ {
            await adapter.shutdown()
            await connection.close()
        } else if let mock = source as? MockSensorAdapter {
            await mock.finish(at: Date())
        }
        var status = await peripheral.status
        if let running = final.withLock({ $0 }) {
            // Counters as they ended, state as it was while running.
            status.registered = running.registered
            status.advertising = running.advertising
        }
        await bus.close()
        lines.finish(statistics: statistics, peripheral: status, view: view)
    }
}

/// The relay's own lines: where it runs, the peripheral's state, and the stats at the end.
final class RelayLines: Sendable {
    private let json: Bool
    private let lock = Mutex(())

    init(json: Bool) { self.json = json }

    private struct Line: Encodable {
        var event = "peripheral"
        var adapter: String
        var state: String
        var detail: String?
        var time: String
    }

    private func write(_ text: String) {
        lock.withLock { _ in FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
    }

    private func line(_ state: String, adapter: String, detail: String?) {
        if json {
            let line = Line(adapter: adapter, state: state, detail: detail, time: ISO8601.format(Date()))
            if let text = try? JSONText.line(line) { write(text) }
        } else {
            write("peripheral \(adapter): \(state)\(detail.map { " (\($0))" } ?? "")")
        }
    }

    func placement(_ placement: PeripheralPlacement, strap: SensorIdentity, simulated: Bool) {
        guard !simulated else {
            line("placed", adapter: placement.peripheral, detail: "the simulator's strap \(strap.address)")
            return
        }
        let straps = placement.straps?.joined(separator: ",") ?? "any adapter"
        line(
            "placed", adapter: placement.peripheral,
            detail: "strap \(strap.address) through \(straps)\(placement.isShared ? "; one adapter in both roles" : "")"
        )
    }

    func show(_ event: PeripheralEvent, adapter: String) {
        switch event {
        case .registered: line("registered", adapter: adapter, detail: nil)
        case .advertising(let on, let reason):
            line(on ? "advertising" : "notAdvertising", adapter: adapter, detail: reason)
        case .notifying(let on): line(on ? "notifying" : "notNotifying", adapter: adapter, detail: nil)
        case .energyResetRequested: line("energyReset", adapter: adapter, detail: nil)
        case .refusedWrite(let bytes): line("refusedWrite", adapter: adapter, detail: HexBytes.format(bytes))
        }
    }

    func failed(_ error: any Error, adapter: String) {
        line("failed", adapter: adapter, detail: "\(error)")
        StandardError.write("hrbridge: the heart-rate peripheral on \(adapter) stopped: \(error)")
    }

    private struct Stats: Encodable {
        var event = "stats"
        var sensors: [String: MonitorStatistics.Report.Sensor]
        var peripheral: Peripheral
        struct Peripheral: Encodable {
            var adapter: String
            var registered: Bool
            var advertising: Bool
            var framesSent: Int
            var framesDropped: Int
            var refusedWrites: Int
            var connectedCentrals: Int
        }
    }

    func finish(statistics: MonitorStatistics, peripheral status: PeripheralStatus, view: MonitorView) {
        guard json else {
            view.finish(statistics: statistics)
            StandardError.write(
                "peripheral \(status.adapter): \(status.framesSent) frames sent, \(status.framesDropped) with no app subscribed, "
                    + "\(status.refusedWrites) refused writes")
            return
        }
        let report = MonitorStatistics.Report(sensors: statistics.snapshot)
        let stats = Stats(
            sensors: report.sensors,
            peripheral: .init(
                adapter: status.adapter, registered: status.registered, advertising: status.advertising,
                framesSent: status.framesSent, framesDropped: status.framesDropped,
                refusedWrites: status.refusedWrites, connectedCentrals: status.connectedCentrals))
        if let text = try? JSONText.line(stats) { write(text) }
    }
}

/// The relay's decisions, shared by the strap's events and the apps' control-point writes.
private final class SharedRelay: Sendable {
    let state: Mutex<HeartRateRelay>

    init(_ relay: HeartRateRelay) { state = Mutex(relay) }
}
