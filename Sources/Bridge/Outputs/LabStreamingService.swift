import Foundation
public import LabStreaming
public import Logging
public import Sensors
public import ServiceLifecycle
import Wire

/// `[lsl]`: every strap's heart rate, RR, ECG and acceleration as Lab Streaming Layer streams, and
/// the sessions' events as markers. Raw signals are started on every strap that offers them (and
/// by the adapter again after each reconnect), and stopped at shutdown, for the straps' batteries.
public actor LabStreamingService: Service {
    private let core: BridgeCore
    private let clock: any WallClock
    private let logger: Logger
    private let settings: LSLSettings
    private let library: LSLLibrary
    private var feed: LabStreamingFeed?
    /// The straps whose raw signals this service started.
    private var started: [SensorIdentity: Set<WaveformKind>] = [:]
    /// The raw-signal requests under way, one task per strap: off the event loop, so a strap slow
    /// to answer (the adapter waits up to 5 s per signal) holds up no other strap's samples.
    private var starting: [SensorIdentity: Task<Void, Never>] = [:]
    /// Shutting down: no request starts.
    private var stopping = false
    /// The adapter's events, subscribed when the service is made, before the adapter links any
    /// strap: a strap's Device Information and the raw signals it offers come once per link, and
    /// one heard before ``run()`` listened would leave its streams unopened and unstarted.
    private let events: AsyncStream<SensorEvent>

    /// Loads liblsl now: a daemon asked for LSL without it does not start, and says where it looked.
    public init(settings: LSLSettings, core: BridgeCore, clock: any WallClock, logger: Logger) throws(LSLError) {
        self.core = core
        self.clock = clock
        self.logger = logger
        self.settings = settings
        library = try LSLLibrary.load(path: settings.library)
        events = core.sensors.adapter.events()
        logger.info("liblsl loaded", metadata: ["path": "\(library.path)", "version": "\(library.version)"])
    }

    public func run() async throws {
        let events = events
        let messages = core.hub.subscribe(
            kinds: [.session, .event, .zone, .plan], byteBudget: 1 << 20)
        let host =
            settings.host ?? ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "hrbridge"
        let clock = clock
        let feed = LabStreamingFeed(
            library: library, settings: .init(kinds: settings.kinds, host: host), now: { clock.now() }, logger: logger)
        self.feed = feed
        try feed.openMarkers()
        // Straps already linked: their streams now, their raw signals asked for.
        for status in await core.sensors.list() where status.state == .ready {
            let sensor = await core.sensors.identity(status.address)
            feed.open(sensor, device: await core.sensors.information(status.address))
            beginStartingWaveforms(on: sensor, offered: nil)
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [weak self] in
                for await event in events { await self?.handle(event) }
            }
            group.addTask { [weak self] in
                for await delivery in messages {
                    guard case .message(let message) = delivery else { continue }
                    await self?.mark(message)
                }
            }
            try? await gracefulShutdown()
            messages.finish()
            // A request still waiting for its strap is given up before the signals are stopped.
            stopping = true
            let requests = Array(starting.values)
            for request in requests { request.cancel() }
            for request in requests { await request.value }
            await stopWaveforms()
            group.cancelAll()
        }
        self.feed = nil
        logger.info("LSL outlets closed")
    }

    private func handle(_ event: SensorEvent) {
        feed?.handle(event)
        if case .waveformsAvailable(let sensor, let kinds) = event {
            beginStartingWaveforms(on: sensor, offered: kinds)
        }
    }

    /// Starts the strap's raw signals in a task of their own; one already under way for it is left
    /// to finish (after a reconnect the adapter starts what was asked for again).
    private func beginStartingWaveforms(on sensor: SensorIdentity, offered: Set<WaveformKind>?) {
        guard !stopping, starting[sensor] == nil else { return }
        starting[sensor] = Task { [weak self] in
            await self?.startWaveforms(on: sensor, offered: offered)
            await self?.finishedStarting(sensor)
        }
    }

    private func finishedStarting(_ sensor: SensorIdentity) { starting[sensor] = nil }

    /// Asks for the configured raw signals the strap offers (nil: not known; the adapter decides).
    private func startWaveforms(on sensor: SensorIdentity, offered: Set<WaveformKind>?) async {
        // Once per strap and signal: the adapter starts it again after every reconnect, and a
        // second START would restart the strap's stream (a gap in the recording).
        for kind in settings.kinds.compactMap(\.waveform).sorted()
        where offered?.contains(kind) ?? true && started[sensor]?.contains(kind) != true {
            if Task.isCancelled { return }
            let request =
                kind == .acc
                ? WaveformRequest(kind: .acc, sampleRate: settings.accRate, range: settings.accRange)
                : WaveformRequest(kind: kind)
            do {
                try await core.sensors.adapter.startWaveform(request, for: sensor)
                started[sensor, default: []].insert(kind)
                logger.info("raw signal started", metadata: ["sensor": "\(sensor.address)", "signal": "\(kind)"])
            } catch {
                // Offered but refused is worth a warning; a strap that never offered it is not.
                logger.log(
                    level: offered == nil ? .debug : .warning, "raw signal not started",
                    metadata: ["sensor": "\(sensor.address)", "error": "\(error)"])
            }
        }
    }

    private func stopWaveforms() async {
        for (sensor, kinds) in started {
            for kind in kinds.sorted() { try? await core.sensors.adapter.stopWaveform(kind, for: sensor) }
        }
        started = [:]
    }

    /// A session's change, event, zone change or plan step as one marker: the live stream's line.
    private func mark(_ message: LiveMessage) {
        feed?.mark(message.json, at: clock.now())
    }
}
