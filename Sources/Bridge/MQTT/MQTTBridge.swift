import Foundation
import GATT
import HTTPTypes
import JSONSupport
public import Logging
import MQTT
import Metrics
import RemoteSensors
public import Sensors
public import ServiceLifecycle
import Threads
import Wire

/// Publishes the bridge to an MQTT broker: each sensor's retained state and availability, each
/// session's state, events, zone changes and plan steps, Home Assistant discovery; and, when the
/// configuration allows, takes session commands from `hrbridge/<node>/cmd/…` with the same
/// validation as the API, answering on `…/cmd/response`.
public actor MQTTBridge: Service {
    private let core: BridgeCore
    private let settings: MQTTSettings
    private let topics: MQTTTopics
    private let client: MQTTClient
    private let logger: Logger
    private var sensors: [String: MQTTSensorState] = [:]
    /// Each listed sensor's next measurement sequence number (`publish_measurements`).
    private var sequences: [String: UInt32] = [:]
    /// Straps announced to Home Assistant.
    private var announced: Set<String> = []
    /// Each announced strap's budget of renames (``RenameBudget``).
    private var renameBudget: [String: RenameBudget] = [:]
    /// Straps whose new name waits for budget: announced with their next frame or status.
    private var renamePending: Set<String> = []
    /// The frames this gateway published, for replay after an outage (with `publish_measurements`).
    private let journal: MeasurementJournal?
    /// This gateway's key: its measurements, backfill, status and availability are signed for hubs.
    private let signer: EnvelopeSigner?
    /// This start's boot (with a key): in every signed frame and status, so a hub refuses what a
    /// previous boot said, sent again (``GatewayBoot``).
    private let boot: UInt64?
    /// Frames journaled since this time go out again once the broker is back: on start, the last
    /// 5 minutes (the gateway may have restarted during an outage); after a lost connection, from
    /// a keepalive and a half before it was noticed.
    private var replayFrom: Date?
    /// The clock the frames' times are on (the adapter's): replay windows are measured on it.
    private let clock: any WallClock
    private let backfillFrames = Counter(label: "hrbridge_mqtt_backfill_frames_total")
    private let journalDamage = Counter(label: "hrbridge_mqtt_journal_damaged_total")
    private let journalUnwritten = Counter(label: "hrbridge_mqtt_journal_dropped_total")
    /// Journal frames dropped unwritten, as last counted.
    private var journalDropped = 0
    /// Why the journal's last write could not run (logged once until one runs).
    private var journalWriteRefused: ThreadStartError?
    /// The replays' one task: the gateway's own outage first, then hubs' requests, one pass at a
    /// time, off the handling of incoming messages (a paced replay can take minutes).
    private var journalWork: Task<Void, Never>?
    /// A retry of work a pass left while the broker stayed (an acknowledgement timed out, no thread).
    private var journalRetry: Task<Void, Never>?
    /// Between the broker's connect and its loss.
    private var brokerConnected = false
    /// The bridge is stopping: no replay starts.
    private var stopping = false
    /// How fast backfill goes, across every pass (a hub budgets a gateway's backfill a minute).
    private var pacer: BackfillPacer
    /// Stretches hubs asked for, by strap, not yet served; and how many requests they are.
    private var requestedStretches: [String: [(from: Date, to: Date)]] = [:]
    private var requestsWaiting = 0
    /// The requests remembered, and their order (the oldest is forgotten first).
    private var recentReplayRequests = Set<ReplayRequest>()
    private var recentReplayRequestOrder: [ReplayRequest] = []
    private var refusedRequestLogged = false
    private let replayRequestsServed = Counter(
        label: "hrbridge_mqtt_replay_requests_total", dimensions: [("result", "served")])
    private let replayRequestsRefused = Counter(
        label: "hrbridge_mqtt_replay_requests_total", dimensions: [("result", "refused")])
    private let replayRequestsRepeated = Counter(
        label: "hrbridge_mqtt_replay_requests_total", dimensions: [("result", "repeated")])
    private let commandsRefused = Counter(label: "hrbridge_mqtt_commands_total", dimensions: [("result", "refused")])
    private let commandsDone = Counter(label: "hrbridge_mqtt_commands_total", dimensions: [("result", "done")])
    private let commandsRepeated = Counter(
        label: "hrbridge_mqtt_commands_total", dimensions: [("result", "repeated")])
    /// The replies to recent commands with a `requestId`: one delivered again is answered, not run.
    private var recentRequests = CommandRequestLog()
    /// The refusal codes already logged as a warning (the API's codes: a few dozen at most).
    private var refusalsLogged: Set<String> = []
    /// When Home Assistant's `online` is answered.
    private var discoveryRefresh = DiscoveryRefresh()
    private var discoveryRefreshTask: Task<Void, Never>?

    /// Sets the client up from the settings (the password read from its file); `clock` is the
    /// one the adapter stamps frames with.
    public init(core: BridgeCore, settings: MQTTSettings, clock: any WallClock, logger: Logger) throws {
        self.core = core
        self.clock = clock
        self.settings = settings
        self.logger = logger
        pacer = BackfillPacer(rate: Double(settings.backfillRate), burst: Double(settings.backfillRate) * 50)
        topics = MQTTTopics(
            node: settings.node, discoveryPrefix: settings.discoveryPrefix, birthTopic: settings.birthTopic)
        let signer: EnvelopeSigner?
        if let path = settings.keyFile {
            guard let loaded = EnvelopeSigner(keyFile: path) else {
                throw MQTTError.unusableFile(path, reason: "cannot be read as a key (at least 32 bytes)")
            }
            signer = loaded
        } else {
            signer = nil
        }
        self.signer = signer
        let boot: UInt64?
        if signer != nil {
            let next = GatewayBoot.next(keptAt: settings.effectiveBootPath, now: clock.now())
            if let error = next.notKept {
                // The next boot is still later unless the clock is set back before it.
                logger.warning(
                    "boot not kept: if the clock is set back before the next start, hubs refuse that boot's frames",
                    metadata: ["path": "\(settings.effectiveBootPath)", "error": "\(error)"])
            }
            boot = next.boot
        } else {
            boot = nil
        }
        self.boot = boot
        var options = MQTTClient.Options(broker: settings.broker, clientID: "hrbridge-\(settings.node)")
        options.keepalive = settings.keepalive
        options.username = settings.username
        if let path = settings.passwordFile {
            guard let password = PasswordFile.read(path) else {
                throw MQTTError.unusableFile(path, reason: "cannot be read as a password file")
            }
            options.password = password
        }
        options.tlsCAFile = settings.tlsCA
        options.tlsCertificateFile = settings.tlsCertificate
        options.tlsKeyFile = settings.tlsKey
        // With a key, the Will is signed now, for this boot: a hub acts on it once, and never on
        // one of an earlier boot (docs/mqtt.md).
        options.will = MQTTMessage(
            topic: topics.status,
            payload: MQTTBridge.status(.offline, topic: topics.status, signer: signer, boot: boot, at: clock.now()),
            qos: .atLeastOnce, retain: true)
        options.birth = MQTTMessage(
            topic: topics.status,
            payload: MQTTBridge.status(.online, topic: topics.status, signer: signer, boot: boot, at: clock.now()),
            qos: .atLeastOnce, retain: true)
        options.liveLimit = settings.queueLimit
        client = try MQTTClient(options: options, logger: logger)
        if settings.publishMeasurements {
            do {
                let opened = try MeasurementJournal(
                    path: settings.effectiveJournalPath, maximumBytes: settings.journalMegabytes << 20)
                if opened.truncatedAtOpen > 0 || opened.damagedAtOpen > 0 {
                    journalDamage.increment(by: opened.damagedAtOpen + (opened.truncatedAtOpen > 0 ? 1 : 0))
                    logger.warning(
                        "measurement journal was damaged: a torn last record was cut off, damaged records are skipped",
                        metadata: [
                            "path": "\(opened.path)", "truncatedBytes": "\(opened.truncatedAtOpen)",
                            "damaged": "\(opened.damagedAtOpen)",
                        ])
                }
                journal = opened
                replayFrom = clock.now().addingTimeInterval(-300)
            } catch {
                logger.warning(
                    "measurement journal unavailable: frames lost while the broker is away are not sent again",
                    metadata: ["path": "\(settings.effectiveJournalPath)", "error": "\(error)"])
                journal = nil
            }
        } else {
            journal = nil
        }
    }

    /// Runs until graceful shutdown, then says `offline` and disconnects.
    public func run() async throws {
        let hubMessages = core.hub.subscribe(
            kinds: [.sensor, .session, .figures, .event, .zone, .plan, .hrv, .peripheral], byteBudget: 16 << 20)
        let adapterEvents = core.sensors.adapter.events()
        for status in await core.sensors.list() { noteStatus(status) }
        if settings.commands { await client.subscribe(topics.commandFilter) }
        if journal != nil { await client.subscribe(ReplayRequest.topic(node: topics.node)) }
        if settings.discovery { await client.subscribe(topics.homeAssistantStatus) }
        try await client.start()
        let clientEvents = client.events
        await withTaskGroup(of: Void.self) { group in
            // The live stream and the adapter end before this service is told to stop (the group
            // stops services in reverse order): their ends wait for the shutdown, or the group
            // would take the bridge's early return for a failure and the daemon exit non-zero.
            group.addTask { [weak self] in
                for await delivery in hubMessages {
                    switch delivery {
                    case .message(let message): await self?.hubMessage(message)
                    case .dropped(let count): await self?.fellBehind(count)
                    }
                }
                try? await gracefulShutdown()
            }
            group.addTask { [weak self] in
                for await event in adapterEvents { await self?.sensorEvent(event) }
                try? await gracefulShutdown()
            }
            group.addTask { [weak self] in
                for await event in clientEvents { await self?.clientEvent(event) }
            }
            if let journal {
                let clock = clock
                group.addTask { [weak self] in
                    // Once a second: a crash loses at most that much of the journal.
                    while true {
                        do { try await clock.sleep(until: clock.now().addingTimeInterval(1)) } catch { return }
                        guard !Task.isCancelled else { return }
                        await self?.writeJournal(journal)
                    }
                }
            }
            group.addTask { try? await gracefulShutdown() }
            await group.next()
            group.cancelAll()
        }
        stopping = true
        journalRetry?.cancel()
        discoveryRefreshTask?.cancel()
        journalWork?.cancel()
        await journalWork?.value
        if let journal { await writeJournal(journal) }
        for address in sensors.keys where announced.contains(address) {
            let topic = topics.sensor(address, .availability)
            await client.publish(
                MQTTMessage(topic: topic, payload: status(.offline, topic: topic), qos: .atLeastOnce, retain: true))
        }
        // Signed now: later than the Will, so a hub that acted on this boot's Will acts on it too.
        await client.stop(
            farewell: MQTTMessage(
                topic: topics.status, payload: status(.offline, topic: topics.status), qos: .atLeastOnce,
                retain: true))
    }

    /// A status word for `topic`: the word alone, or, with a key, signed for `boot` at `date`
    /// (``GatewayStatus``).
    private static func status(
        _ word: GatewayStatus.Word, topic: String, signer: EnvelopeSigner?, boot: UInt64?, at date: Date
    ) -> [UInt8] {
        guard let signer, let boot else { return Array(word.rawValue.utf8) }
        return signer.signStatus(word, topic: topic, boot: boot, at: date)
    }

    /// A status word for `topic`, now.
    private func status(_ word: GatewayStatus.Word, topic: String) -> [UInt8] {
        MQTTBridge.status(word, topic: topic, signer: signer, boot: boot, at: clock.now())
    }

    // MARK: Sensors

    private func sensorEvent(_ event: SensorEvent) async {
        switch event {
        case .measurement(let measurement):
            guard case .heartRateMeasurement(let frame) = measurement.value else { return }
            let address = measurement.sensor.address
            var state = sensors[address] ?? MQTTSensorState(address: address, name: measurement.sensor.name)
            let wasReady = state.state == .ready
            state.via = measurement.via.rawValue
            let figures = core.sensors.figures(address: address, heartRate: Double(frame.heartRate))
            let due = state.measured(
                heartRate: Int(frame.heartRate), rrSeconds: frame.rrIntervals.map(\.seconds),
                contact: frame.sensorContact.rawValue, at: measurement.receivedAt, zone: figures.zone,
                percentOfMax: figures.percentOfMax, interval: settings.stateInterval,
                refresh: settings.expireAfter > 0 ? Double(settings.expireAfter) / 2 : nil)
            sensors[address] = state
            if !wasReady { await publishAvailability(address) }
            if due { await publishState(address) }
            if renamePending.contains(address) { await announceRename(address) }
            if settings.publishMeasurements { await forward(measurement) }
        case .deviceInformation(let sensor, let information):
            guard var state = sensors[sensor.address] else { return }
            state.manufacturer = information.manufacturerName.map(MQTTSensorState.cleaned)
            state.model = information.modelNumber.map(MQTTSensorState.cleaned)
            state.firmware = information.firmwareRevision.map(MQTTSensorState.cleaned)
            sensors[sensor.address] = state
            if announced.contains(sensor.address) { await announce(sensor.address, again: true) }
        default:
            break
        }
    }

    /// The frame for hubs: QoS 0 (the next one follows within a second), never retained, never a
    /// guest's unless `publish_guests`; the sequence number lets a hub see what was lost.
    private func forward(_ measurement: SensorMeasurement) async {
        let address = measurement.sensor.address
        if sensors[address]?.guest == true && !settings.publishGuests { return }
        let sequence = sequences[address, default: 0]
        guard let message = RemoteMeasurement(measurement, sequence: sequence) else { return }
        sequences[address] = sequence &+ 1
        journal?.append(address: address, message)
        let topic = topics.sensor(address, .measurement)
        let payload = message.encoded()
        await client.publish(
            MQTTMessage(topic: topic, payload: signer?.signMeasurement(payload, topic: topic, boot: boot) ?? payload))
    }

    /// Writes the journal's waiting frames on a thread of its own: a slow disk never holds one of
    /// Swift concurrency's threads. Without a thread they keep waiting, within the journal's limit.
    private func writeJournal(_ journal: MeasurementJournal) async {
        do throws(ThreadStartError) {
            try await DetachedThread.run(named: "hrbridge.journal") { journal.writePending() }
            journalWriteRefused = nil
        } catch {
            if journalWriteRefused == nil {
                logger.error(
                    "journal not written: no thread to write it; frames wait in memory",
                    metadata: ["waiting": "\(journal.unwritten.waiting)", "error": "\(error)"])
            }
            journalWriteRefused = error
        }
        let dropped = journal.unwritten.dropped
        if dropped > journalDropped {
            journalUnwritten.increment(by: dropped - journalDropped)
            logger.error(
                "journal frames dropped unwritten: more waited than its memory limit, or the disk refused them",
                metadata: ["frames": "\(dropped - journalDropped)", "limit": "\(journal.pendingLimit)"])
            journalDropped = dropped
        }
    }

    /// Journaled frames read from the disk at a time during a replay.
    static let replayBatchFrames = 4096

    /// Starts the replays' task unless it runs (or the bridge stops, or the broker is away).
    private func startJournalWork() {
        guard journalWork == nil, !stopping, brokerConnected, let journal else { return }
        journalWork = Task { await self.doJournalWork(journal) }
    }

    /// The gateway's own outage, then hubs' requests, a pass at a time, while the broker is there.
    /// A pass cut off while it stays (an acknowledgement timed out, no thread to read) is tried
    /// again 5 s later; one cut off by its loss, after the next connect.
    private func doJournalWork(_ journal: MeasurementJournal) async {
        var retry = false
        while !stopping, brokerConnected, !Task.isCancelled {
            if replayFrom != nil {
                guard await replayJournal(journal) else {
                    retry = true
                    break
                }
            } else if !requestedStretches.isEmpty {
                guard await serveRequests(from: journal) else {
                    retry = true
                    break
                }
            } else {
                break
            }
        }
        journalWork = nil
        guard retry, !stopping, brokerConnected, !Task.isCancelled else { return }
        let clock = clock
        journalRetry?.cancel()
        journalRetry = Task { [weak self] in
            do { try await clock.sleep(until: clock.now().addingTimeInterval(5)) } catch { return }
            await self?.startJournalWork()
        }
    }

    /// Sends the journaled frames since `replayFrom` again (the gateway's own outage): what hubs
    /// lack they store, the rest they ignore. When the connection drops midway, the next connect
    /// replays from the same time again. False when cut off.
    private func replayJournal(_ journal: MeasurementJournal) async -> Bool {
        guard let since = replayFrom else { return true }
        replayFrom = nil
        let until = clock.now()
        let outcome = await sendAgain(from: journal, since: since, until: until) { _ in true }
        if let noReader = outcome.noReader {
            replayFrom = since
            logger.error(
                "journal not read: no thread to read it; it starts again on the next connect",
                metadata: ["sent": "\(outcome.sent)", "error": "\(noReader)"])
        } else if !outcome.complete {
            replayFrom = since
            logger.notice(
                "the broker went away during the journal's replay; it starts again on the next connect",
                metadata: ["sent": "\(outcome.sent)"])
        } else if outcome.sent > 0 {
            logger.info(
                "journal sent again after the broker was away",
                metadata: ["frames": "\(outcome.sent)", "sensors": "\(outcome.straps)", "since": "\(since)"])
        }
        return outcome.complete
    }

    /// What one pass over the journal sent.
    private struct PassOutcome {
        var sent = 0
        var straps = 0
        /// False when the connection went (or no thread could read) before the pass was over.
        var complete = true
        var noReader: ThreadStartError?
    }

    /// Sends the journaled frames dated `since` to `until` that `wanted` takes again, a strap's
    /// batch of up to 512 per QoS 1 message on `…/backfill`. The journal is read as it goes, on a
    /// thread of its own, and each batch waits for the broker's acknowledgement, so neither the
    /// gateway's memory nor libmosquitto's queue holds more than a batch per strap.
    private func sendAgain(
        from journal: MeasurementJournal, since: Date, until: Date, wanted: (MeasurementJournal.Entry) -> Bool
    ) async -> PassOutcome {
        var outcome = PassOutcome()
        var replay: MeasurementJournal.Replay
        do throws(ThreadStartError) {
            // What waits in memory is written first: on a thread, as the reads are.
            replay = try await DetachedThread.run(named: "hrbridge.journal") { journal.replay(since: since) }
        } catch {
            outcome.noReader = error
            outcome.complete = false
            return outcome
        }
        var pending: [String: [RemoteMeasurement]] = [:]
        var straps = Set<String>()
        var batch: [MeasurementJournal.Entry] = []
        replaying: while true {
            if batch.isEmpty {
                // Up to the whole journal (64 MiB by default) from the disk: read on a thread of its
                // own, a batch at a time, never on Swift concurrency's.
                do throws(ThreadStartError) {
                    (batch, replay) = try await DetachedThread.run(named: "hrbridge.journal") { [replay] in
                        var replay = replay
                        return (replay.next(upTo: Self.replayBatchFrames), replay)
                    }
                } catch {
                    outcome.noReader = error
                    outcome.complete = false
                    break replaying
                }
                guard !batch.isEmpty else { break replaying }
                batch.reverse()
            }
            guard !Task.isCancelled, !stopping else {
                outcome.complete = false
                break replaying
            }
            let entry = batch.removeLast()
            guard entry.measurement.receivedAt <= until, wanted(entry) else { continue }
            pending[entry.address, default: []].append(entry.measurement)
            if let frames = pending[entry.address], frames.count >= RemoteBackfill.maximumFrames {
                pending[entry.address] = nil
                guard await sendBackfill(entry.address, frames) else {
                    outcome.complete = false
                    break replaying
                }
                outcome.sent += frames.count
                straps.insert(entry.address)
            }
        }
        if outcome.complete {
            for (address, frames) in pending.sorted(by: { $0.key < $1.key }) {
                guard !Task.isCancelled, !stopping else {
                    outcome.complete = false
                    break
                }
                guard await sendBackfill(address, frames) else {
                    outcome.complete = false
                    break
                }
                outcome.sent += frames.count
                straps.insert(address)
            }
        }
        outcome.straps = straps.count
        backfillFrames.increment(by: outcome.sent)
        if replay.damaged > 0 {
            journalDamage.increment(by: replay.damaged)
            logger.warning(
                "damaged journal records skipped",
                metadata: ["records": "\(replay.damaged)", "path": "\(journal.path)"])
        }
        return outcome
    }

    // MARK: Replay requests

    /// Requests waiting at most; more are refused (a hub asks once per gap and strap).
    static let maximumWaitingRequests = 4096
    /// Requests remembered, so one delivered again is not served twice.
    static let rememberedRequests = 1024

    /// A hub asks for a stretch of a strap's frames it did not hear (``ReplayRequest``): it is
    /// served from the journal, after the gateway's own replay when one runs.
    private func replayRequested(_ message: MQTTMessage) {
        guard journal != nil else { return }
        guard let request = ReplayRequest(payload: message.payload, topic: message.topic, signer: signer),
            request.to <= clock.now().addingTimeInterval(Self.requestSkew)
        else {
            replayRequestsRefused.increment()
            logger.log(
                level: refusedRequestLogged ? .debug : .warning,
                "replay request refused: malformed, not signed with this gateway's key, or dated ahead",
                metadata: ["bytes": "\(message.payload.count)"])
            refusedRequestLogged = true
            return
        }
        guard !recentReplayRequests.contains(request) else {
            replayRequestsRepeated.increment()
            return
        }
        guard requestsWaiting < Self.maximumWaitingRequests else {
            // Not remembered: sent again once fewer wait, it is served.
            replayRequestsRefused.increment()
            logger.warning("replay request refused: too many waiting", metadata: ["waiting": "\(requestsWaiting)"])
            return
        }
        recentReplayRequests.insert(request)
        recentReplayRequestOrder.append(request)
        if recentReplayRequestOrder.count > Self.rememberedRequests {
            recentReplayRequests.remove(recentReplayRequestOrder.removeFirst())
        }
        requestsWaiting += 1
        requestedStretches[request.address, default: []].append((request.from, request.to))
        startJournalWork()
    }

    /// Seconds a request's end may be ahead of this gateway's clock (the hub's and ours differ).
    static let requestSkew: TimeInterval = 5

    /// One pass over the journal for every request waiting; false when cut off (they wait again).
    private func serveRequests(from journal: MeasurementJournal) async -> Bool {
        let asked = requestedStretches
        let count = requestsWaiting
        requestedStretches = [:]
        requestsWaiting = 0
        // Not less what the gateway's own replay sent: a hub off the broker then may never have got
        // it (a broker restarted without persistence keeps no session). The hub stores each frame
        // once. Sorted and merged per strap, so each frame is matched by a binary search.
        let stretches = asked.mapValues(ReplayRequest.merged)
        guard let since = stretches.values.joined().map(\.from).min(),
            let until = stretches.values.joined().map(\.to).max()
        else { return true }
        // Frames strictly inside a stretch: its ends are the frames the hub heard.
        let outcome = await sendAgain(from: journal, since: since, until: until) { entry in
            stretches[entry.address].map { ReplayRequest.contains($0, entry.measurement.receivedAt) } ?? false
        }
        guard outcome.complete else {
            for (address, list) in asked { requestedStretches[address, default: []] += list }
            requestsWaiting += count
            logger.notice(
                "replay requests not served yet: the broker went away, an acknowledgement timed out, or no thread could read the journal",
                metadata: ["requests": "\(count)", "sent": "\(outcome.sent)"])
            return false
        }
        replayRequestsServed.increment(by: count)
        logger.info(
            "journal sent again at a hub's request",
            metadata: ["frames": "\(outcome.sent)", "sensors": "\(outcome.straps)", "requests": "\(count)"])
        return true
    }

    /// One backfill batch, once the pacer lets it go, acknowledged by the broker (false when the
    /// connection went first, or the bridge stops while it waits).
    private func sendBackfill(_ address: String, _ frames: [RemoteMeasurement]) async -> Bool {
        let due = pacer.take(frames.count, at: clock.now())
        if due > clock.now() {
            do { try await clock.sleep(until: due) } catch { return false }
        }
        let topic = topics.sensor(address, .backfill)
        let batch = RemoteBackfill.encode(frames)
        return await client.publishAcknowledged(
            MQTTMessage(
                topic: topic, payload: signer?.signBatch(batch, topic: topic) ?? batch, qos: .atLeastOnce,
                retain: false))
    }

    /// A sensor's status as the sensor manager publishes it: state, battery, binding.
    private func hubMessage(_ message: LiveMessage) async {
        switch message.kind {
        case .sensor:
            guard let address = message.sensor else { return }
            if let gone = try? JSONText.decode(GoneSensor.self, from: Data(message.json.utf8)), gone.state == .gone {
                await forget(address, onRequest: gone.forgotten == true)
                return
            }
            guard let status = try? JSONText.decode(SensorStatus.self, from: Data(message.json.utf8)) else { return }
            let before = sensors[address]
            noteStatus(status)
            sensors[address]?.guest = status.session.map(core.sessions.isGuest) ?? false
            guard let after = sensors[address] else { return }
            let wasAnnounced = announced.contains(address)
            if shouldAnnounce(status), !wasAnnounced { await announce(address, again: false) }
            // A new name (one first heard after the strap was announced, a strap renamed): Home
            // Assistant reads the device's name from the configs.
            if let before, before.name != after.name, wasAnnounced {
                await announceRename(address)
            } else if renamePending.contains(address) {
                await announceRename(address)
            }
            if before?.state != after.state || before?.battery != after.battery || before?.name != after.name {
                await publishAvailability(address)
                await publishState(address)
            }
        case .session, .event, .zone, .plan, .hrv:
            guard let session = message.session else { return }
            // A guest's session is never stored anywhere: no session topics, retained or not.
            guard !core.sessions.isGuest(session) else { return }
            guard let leaf = Topic.SessionLeaf(rawValue: message.kind == .session ? "state" : message.kind.rawValue)
            else { return }
            await client.publish(
                MQTTMessage(
                    topic: topics.session(session, leaf), text: message.json,
                    qos: message.kind == .hrv ? .atMostOnce : .atLeastOnce, retain: message.kind == .session))
        case .figures:
            // Each session's figures go to its own retained state topic, as its changes do.
            for part in message.parts { await hubMessage(part) }
        case .peripheral:
            // The heart-rate peripheral's state, retained: published when it changes, not per frame.
            guard let adapter = try? JSONText.decode(AdapterOnly.self, from: Data(message.json.utf8)).adapter else {
                return
            }
            await client.publish(
                MQTTMessage(topic: topics.peripheral(adapter), text: message.json, qos: .atLeastOnce, retain: true))
        default:
            break
        }
    }

    /// The one field a `peripheral` message is read for here.
    private struct AdapterOnly: Decodable {
        var adapter: String
    }

    /// The hub dropped messages for us (the broker path is slower than the frames): said, counted.
    private func fellBehind(_ count: Int) {
        logger.warning("MQTT publisher fell behind the live stream", metadata: ["dropped": "\(count)"])
    }

    private func noteStatus(_ status: SensorStatus) {
        var state = sensors[status.address] ?? MQTTSensorState(address: status.address)
        state.setName(status.athleteName ?? status.name)
        if status.state != .ready && state.state == .ready {
            state.disconnected()
        }
        state.state = status.state
        state.battery = status.batteryLevel
        state.session = status.session
        sensors[status.address] = state
    }

    /// Straps worth a Home Assistant device: configured ones and those that connected, not every
    /// advertiser in range.
    /// A hub with `[[sensors]]` announces only those: its straps' addresses come from gateways,
    /// and each one announced leaves retained Home Assistant configs behind.
    private func shouldAnnounce(_ status: SensorStatus) -> Bool {
        if core.sensors.isConfigured(status.address) { return true }
        if core.sensors.adapter.name == "mqtt", core.sensors.hasConfiguredSensors { return false }
        return [.ready, .connected].contains(status.state) || status.session != nil
    }

    private func publishState(_ address: String) async {
        guard let state = sensors[address], announced.contains(address) else { return }
        if state.guest {
            guard settings.publishGuests else { return }
            // Live only: a guest's values are never kept by the broker.
            await client.publish(MQTTMessage(topic: topics.sensor(address, .state), text: state.payload))
            return
        }
        await client.publish(MQTTMessage(topic: topics.sensor(address, .state), text: state.payload, retain: true))
    }

    private func publishAvailability(_ address: String) async {
        // Only straps with topics: a forgotten one's last disconnect must not leave a retained value.
        guard let state = sensors[address], announced.contains(address) else { return }
        let topic = topics.sensor(address, .availability)
        await client.publish(
            MQTTMessage(
                topic: topic, payload: status(state.state == .ready ? .online : .offline, topic: topic),
                qos: .atLeastOnce, retain: true))
    }

    private func announce(_ address: String, again: Bool) async {
        guard let state = sensors[address] else { return }
        announced.insert(address)
        if settings.discovery {
            for message in HomeAssistantDiscovery.configs(for: state, topics: topics, expireAfter: settings.expireAfter)
            {
                await client.publish(message)
            }
        }
        if !again {
            await publishAvailability(address)
            await publishState(address)
        }
    }

    /// A new name for an announced strap: its configs again (Home Assistant reads the device's
    /// name from them), within the strap's budget; beyond it, held until there is budget.
    private func announceRename(_ address: String) async {
        guard renameBudget[address, default: RenameBudget()].take(at: clock.now()) else {
            renamePending.insert(address)
            return
        }
        renamePending.remove(address)
        await announce(address, again: true)
    }

    /// A strap gone from the list: its entities removed and its retained topics cleared when this
    /// run announced it, or when the user forgot it (an earlier run may have: the broker keeps
    /// them). Not for every strap that passes by and goes out of range: seven messages each, for
    /// nothing.
    private func forget(_ address: String, onRequest: Bool) async {
        sensors[address] = nil
        // Every strap that passes by would otherwise keep its counter for good. One that comes
        // back numbers from 0 at a later time, which hubs take as a fresh start, not a replay.
        sequences[address] = nil
        renameBudget[address] = nil
        renamePending.remove(address)
        guard announced.remove(address) != nil || onRequest else { return }
        if settings.discovery {
            for message in HomeAssistantDiscovery.removals(address: address, topics: topics) {
                await client.publish(message)
            }
        }
        for leaf in [Topic.SensorLeaf.state, .availability] {
            await client.publish(
                MQTTMessage(topic: topics.sensor(address, leaf), payload: [], qos: .atLeastOnce, retain: true))
        }
    }

    // MARK: Broker

    /// Every announced strap's configs again, for Home Assistant.
    private func announceAgain() async {
        for address in announced.sorted() { await announce(address, again: true) }
    }

    private func scheduledAnnounceAgain() async {
        discoveryRefresh.answered(at: clock.now())
        discoveryRefreshTask = nil
        await announceAgain()
    }

    private func clientEvent(_ event: MQTTClient.Event) async {
        switch event {
        case .message(let message):
            if message.topic == topics.homeAssistantStatus {
                guard message.text == "online" else { return }
                // Home Assistant restarted: it needs the configs again (at most once an interval).
                switch discoveryRefresh.asked(at: clock.now()) {
                case .now:
                    await announceAgain()
                case .at(let date):
                    let clock = clock
                    discoveryRefreshTask = Task { [weak self] in
                        do { try await clock.sleep(until: date) } catch { return }
                        await self?.scheduledAnnounceAgain()
                    }
                case .coalesced:
                    logger.debug("Home Assistant's online coalesced with a refresh already scheduled")
                }
                return
            }
            if message.topic == ReplayRequest.topic(node: topics.node) {
                replayRequested(message)
                return
            }
            await command(message)
        case .refused(let topic, let bytes):
            if topic.hasPrefix(topics.commandPrefix) {
                await reply(
                    requestID: nil, command: topic,
                    error: APIError(.contentTooLarge, "too_large", "the command is \(bytes) bytes; at most 64 KiB"))
            }
        case .connected:
            brokerConnected = true
            // A broker that kept nothing (restarted without persistence) gets every strap's
            // configs, availability and state again; one that kept them, the same values.
            for address in announced.sorted() { await announce(address, again: false) }
            // Its own outage's replay, then requests a lost connection cut off: in a task of their
            // own, so commands and requests are handled meanwhile.
            startJournalWork()
        case .disconnected:
            brokerConnected = false
            // QoS 0 frames sent into the dead connection before it was noticed are lost too.
            if journal != nil, replayFrom == nil {
                replayFrom = clock.now().addingTimeInterval(-(Double(settings.keepalive) * 1.5 + 2))
            }
        }
    }

    /// Runs one command and answers on the response topic.
    private func command(_ message: MQTTMessage) async {
        let name = String(message.topic.dropFirst(topics.commandPrefix.count).prefix(120))
        guard message.topic != topics.response else { return }
        // An empty message clears a retained one at the broker: nothing to run, nothing to answer.
        guard !message.payload.isEmpty else { return }
        var body = Data(message.payload)
        var requestID: String?
        // `requestId` belongs to MQTT, not to the request: taken out before the API's validation.
        if case .object(var object)? = try? JSONText.decode(JSONValue.self, from: body),
            let id = object.removeValue(forKey: "requestId")
        {
            do throws(APIError) {
                requestID = try CommandRequestLog.requestID(id)
            } catch {
                // Not echoed: cut, it could name another request.
                await reply(requestID: nil, command: name, error: error, remembered: false)
                return
            }
            body = Data(((try? JSONText.line(JSONValue.object(object))) ?? "{}").utf8)
        }
        // Retained, it would run again on every reconnect of ours and every restart of the broker.
        guard !message.retain else {
            await reply(
                requestID: requestID, command: name,
                error: APIError(
                    .badRequest, "retained_command",
                    "a retained command is refused: it would run again on every reconnect; publish commands with "
                        + "retain off, and clear this one with an empty retained message on its topic"),
                remembered: false)
            return
        }
        if let requestID, let earlier = recentRequests.reply(to: requestID, command: name) {
            commandsRepeated.increment()
            logger.info("MQTT command delivered again: answered, not run", metadata: ["command": "\(name)"])
            await client.publish(MQTTMessage(topic: topics.response, text: earlier, qos: .atLeastOnce))
            return
        }
        do {
            let snapshot: SessionJSON
            switch topics.command(from: message.topic) {
            case .failure:
                throw APIError.notFound(
                    "'\(name)' is not a command; known: session/start, session/<id>/{\(SessionCommands.actions.joined(separator: ","))}"
                )
            case .success(.start):
                snapshot = try await SessionCommands.start(core, body: body)
            case .success(.action(let action, let session)):
                snapshot = try await SessionCommands.perform(core, action: action, session: session, body: body)
            }
            commandsDone.increment()
            logger.notice("MQTT command done", metadata: ["command": "\(name)"])
            await reply(requestID: requestID, command: name, session: snapshot)
        } catch let error as APIError {
            await reply(requestID: requestID, command: name, error: error)
        } catch {
            await reply(
                requestID: requestID, command: name, error: APIError(.internalServerError, "failed", "\(error)"))
        }
    }

    private func reply(
        requestID: String?, command: String, session: SessionJSON? = nil, error: APIError? = nil,
        remembered: Bool = true
    ) async {
        if let error {
            commandsRefused.increment()
            // Anyone allowed to publish commands can send bad ones in a loop: the first of each
            // kind is a warning, the rest are counted (hrbridge_mqtt_commands_total) and answered.
            let first = refusalsLogged.insert(error.code).inserted
            logger.log(
                level: first ? .warning : .debug, "MQTT command refused",
                metadata: ["command": "\(command)", "error": "\(error.code): \(error.message)"])
        }
        let reply = CommandReplyJSON(
            requestId: requestID, command: command, ok: error == nil, session: session,
            error: error.map { ErrorJSON.Detail(code: $0.code, message: $0.message) })
        let text = (try? JSONText.line(reply)) ?? #"{"ok":false}"#
        if remembered, let requestID { recentRequests.remember(text, for: requestID, command: command) }
        await client.publish(MQTTMessage(topic: topics.response, text: text, qos: .atLeastOnce))
    }
}
