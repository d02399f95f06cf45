import CMosquitto
public import Logging
import Metrics
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to one MQTT broker through libmosquitto, kept up by itself.
///
/// A thread of ours turns libmosquitto's loop (network I/O, keepalive; ``MQTTLoop``); this actor
/// reconnects with backoff on its clock when the connection ends, and libmosquitto's calls that
/// block (a connect resolves the broker's name) run one at a time on threads of their own, never
/// on the actor. This actor owns what is published: while the broker is away messages wait in a bounded
/// ``MQTTOutbox`` and go out in order once it is back, subscriptions are renewed on every connect,
/// and the Will (`offline`, retained) tells subscribers when the process dies without a word.
public actor MQTTClient {
    /// How to reach the broker and how to behave.
    public struct Options: Sendable {
        public var broker: MQTTBrokerURL
        /// The client identifier (unique per broker).
        public var clientID: String
        /// Seconds between keepalive pings.
        public var keepalive = 30
        public var username: String?
        public var password: String?
        /// The CA certificate file that signs the broker's certificate (TLS).
        public var tlsCAFile: String?
        /// A client certificate and key, when the broker asks for one.
        public var tlsCertificateFile: String?
        public var tlsKeyFile: String?
        /// What the broker publishes when this client disappears without disconnecting.
        public var will: MQTTMessage?
        /// Sent on every connect (after the outbox is flushed it would be stale): `online`.
        public var birth: MQTTMessage?
        /// Bounds of what waits while the broker is away.
        public var liveLimit = 1000
        public var eventLimit = 10_000
        /// Incoming payloads larger than this are refused unread.
        public var maximumIncomingBytes = 64 * 1024
        /// Reconnect delays: from `minimum` doubling to `maximum` seconds.
        public var reconnectDelay: ClosedRange<UInt32> = 1...30
        /// A first connect not acknowledged within this is dropped and started again at once (a
        /// broker that accepts the TCP connection and never answers).
        public var connectTimeout: Duration = .seconds(15)
        /// How long ``MQTTClient/stop(farewell:timeout:)`` waits for the loop thread to end. It takes
        /// at most ``MQTTLoop/turnsAfterStop`` turns of a second each, even in a partition; past
        /// this the stop returns anyway and the thread is left to end on its own.
        public var stopTimeout: Duration = .seconds(5)

        /// false: a persistent session — the broker keeps the subscriptions and queues QoS 1
        /// messages while this client is away (the client id must then be stable).
        public var cleanSession = true

        public init(broker: MQTTBrokerURL, clientID: String) {
            self.broker = broker
            self.clientID = clientID
        }
    }

    /// What happens on the connection, for the owner.
    public enum Event: Sendable, Equatable {
        /// Connected (again); subscriptions are renewed and the outbox is flushed.
        case connected
        /// The broker went away or refused us (why, in words); the client reconnects.
        case disconnected(String)
        /// A message on a subscribed topic.
        case message(MQTTMessage)
        /// A message too large to read, refused (its topic and size).
        case refused(topic: String, bytes: Int)
    }

    /// What libmosquitto's callbacks and the loop thread report; handled here, in order.
    enum LoopEvent: Sendable {
        case connect(Int32)
        case disconnect(Int32)
        case message(MQTTMessage)
        case oversized(topic: String, bytes: Int)
        /// A message whose topic is longer than ``MQTTClient/maximumTopicBytes``: its first bytes.
        case longTopic(prefix: String)
        case published(Int32)
        /// The loop thread parked: the connection ended, or a connect opened none (libmosquitto's code).
        case loopStopped(Int32)
    }

    /// An incoming message's topic, as ``incomingTopic(_:)`` reads it.
    enum IncomingTopic: Equatable, Sendable {
        /// At most ``MQTTClient/maximumTopicBytes``: copied whole.
        case topic(String)
        /// Longer: only its first ``MQTTClient/longTopicPrefixBytes`` bytes, for the log.
        case tooLong(prefix: String)
    }

    /// The longest incoming topic read, in bytes (the hub's own are well under; `Topic.maximumLength`
    /// in Wire is the same). MQTT allows 64 KiB: anyone allowed to publish could make every message
    /// cost that much to copy.
    public static let maximumTopicBytes = 256
    /// What is kept of a longer topic, for the log.
    static let longTopicPrefixBytes = 64

    /// The topic at `pointer` (NUL-terminated, from libmosquitto), read no further than one byte
    /// past ``maximumTopicBytes``.
    static func incomingTopic(_ pointer: UnsafePointer<CChar>) -> IncomingTopic {
        var length = 0
        while length <= maximumTopicBytes, pointer[length] != 0 { length += 1 }
        guard length > maximumTopicBytes else { return .topic(String(cString: pointer)) }
        let start = UnsafeRawBufferPointer(start: pointer, count: longTopicPrefixBytes)
        return .tooLong(prefix: String(decoding: start, as: UTF8.self))
    }

    /// Receives libmosquitto's callbacks (on its thread) and queues them for the actor.
    final class CallbackSink: Sendable {
        let continuation: AsyncStream<LoopEvent>.Continuation
        let maximumIncomingBytes: Int
        /// Messages queued for the actor and not yet handled: at most ``incomingLimit``, or a
        /// starved actor would let a broker's flood (64 KiB each) grow memory without bound.
        /// Connection events and acknowledgements are never dropped.
        let queuedMessages = Atomic(0)
        /// Messages dropped here since the actor last counted them.
        let droppedMessages = Atomic(0)
        init(continuation: AsyncStream<LoopEvent>.Continuation, maximumIncomingBytes: Int) {
            self.continuation = continuation
            self.maximumIncomingBytes = maximumIncomingBytes
        }

        /// Queues a message, or drops it (counted) while ``incomingLimit`` wait.
        func queue(_ event: LoopEvent) {
            guard queuedMessages.add(1, ordering: .relaxed).newValue <= MQTTClient.incomingLimit else {
                queuedMessages.subtract(1, ordering: .relaxed)
                droppedMessages.add(1, ordering: .relaxed)
                return
            }
            continuation.yield(event)
        }
    }

    /// libmosquitto's handle and the callbacks' sink, used only through its thread-safe calls.
    /// Destroyed when the last owner lets go: the client, or a blocking call still running.
    final class Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        let sink: Unmanaged<CallbackSink>
        init(pointer: OpaquePointer, sink: Unmanaged<CallbackSink>) {
            self.pointer = pointer
            self.sink = sink
        }
        deinit {
            mosquitto_destroy(pointer)
            sink.release()
        }
    }

    public nonisolated let options: Options
    let handle: Handle
    private let loopEvents: AsyncStream<LoopEvent>
    private let logger: Logger
    /// What the reconnects' backoff and the farewell's timeout wait on.
    private let clock: any Clock<Duration>
    /// What the first connect's ``Options/connectTimeout`` and the ``Options/stopTimeout`` wait on.
    private let connectClock: any Clock<Duration>
    /// The last blocking libmosquitto call queued: each waits for the one before it (a reconnect
    /// must not race the first connect).
    var lastBlockingCall: Task<Void, Never>?
    private var firstConnectWatch: Task<Void, Never>?
    /// Turns libmosquitto's loop on a thread of its own.
    private let loop: MQTTLoop
    /// The reconnect waiting for its delay or running, once the loop thread parked.
    private var reconnectTask: Task<Void, Never>?
    /// Reconnects since the last connect the broker acknowledged.
    private var reconnectAttempt = 0
    /// The next reconnect goes at once: the connect watch dropped an unanswered connect.
    private var reconnectAtOnce = false
    private let backoff: ReconnectBackoff
    private var outbox: MQTTOutbox
    private var subscriptions: [(filter: String, qos: MQTTQoS)] = []
    private var connected = false
    private var started = false
    private var stopped = false
    private var connects = 0
    private var acknowledged: [Int32: CheckedContinuation<Bool, Never>] = [:]
    private var loopTask: Task<Void, Never>?
    /// The owner's events.
    public nonisolated let events: MQTTEvents
    private let eventContinuation: AsyncStream<Event>.Continuation
    private let queueDepth: Gauge
    private let reconnects: Counter
    private let droppedLive: Counter
    private let droppedEvents: Counter
    private let droppedIncoming: Counter
    private var warnedDroppedIncoming = false
    /// Received messages waiting for the owner at most.
    public static let incomingLimit = 4096
    /// Their payloads' bytes at most: 4,096 of 64 KiB would be 256 MiB.
    public static let incomingByteLimit = 16 << 20

    private static let libraryReady: Void = { _ = mosquitto_lib_init() }()
    /// Sets the client up (files, credentials, Will); nothing connects before ``start()``.
    ///
    /// `clock` times the reconnects' backoff and the farewell's timeout, `connectClock` the first
    /// connect's timeout and the stop's (tests pass clocks they move by hand).
    public init(
        options: Options, logger: Logger, clock: any Clock<Duration> = ContinuousClock(),
        connectClock: any Clock<Duration> = ContinuousClock()
    ) throws(MQTTError) {
        _ = Self.libraryReady
        self.options = options
        self.logger = logger
        self.clock = clock
        self.connectClock = connectClock
        backoff = ReconnectBackoff(seconds: options.reconnectDelay)
        outbox = MQTTOutbox(liveLimit: options.liveLimit, eventLimit: options.eventLimit)
        let (loopEvents, loopContinuation) = AsyncStream<LoopEvent>.makeStream()
        self.loopEvents = loopEvents
        // Unbounded as a stream: `events` bounds what others publish, and never drops a
        // connection change.
        let (eventStream, eventContinuation) = AsyncStream<Event>.makeStream()
        self.eventContinuation = eventContinuation
        events = MQTTEvents(
            stream: eventStream,
            pending: MQTTEvents.Pending(limit: Self.incomingLimit, byteLimit: Self.incomingByteLimit))
        let sink = Unmanaged.passRetained(
            CallbackSink(continuation: loopContinuation, maximumIncomingBytes: options.maximumIncomingBytes))
        guard let pointer = mosquitto_new(options.clientID, options.cleanSession, sink.toOpaque()) else {
            sink.release()
            throw .library(call: "mosquitto_new", code: MOSQ_ERR_NOMEM.rawValue, message: "out of memory")
        }
        handle = Handle(pointer: pointer, sink: sink)
        loop = try MQTTLoop()
        queueDepth = Gauge(label: "hrbridge_mqtt_queue_depth")
        reconnects = Counter(label: "hrbridge_mqtt_reconnects_total")
        droppedLive = Counter(label: "hrbridge_mqtt_dropped_total", dimensions: [("kind", "live")])
        droppedEvents = Counter(label: "hrbridge_mqtt_dropped_total", dimensions: [("kind", "event")])
        droppedIncoming = Counter(label: "hrbridge_mqtt_dropped_total", dimensions: [("kind", "incoming")])
        // On failure the handle's deinit destroys it and releases the sink.
        try Self.configure(pointer, options)
    }

    /// Callbacks, options, credentials, TLS and the Will, before the first connect.
    private static func configure(_ pointer: OpaquePointer, _ options: Options) throws(MQTTError) {
        mosquitto_connect_callback_set(pointer) { _, context, code in
            MQTTClient.sink(context)?.continuation.yield(.connect(code))
        }
        mosquitto_disconnect_callback_set(pointer) { _, context, code in
            MQTTClient.sink(context)?.continuation.yield(.disconnect(code))
        }
        mosquitto_publish_callback_set(pointer) { _, context, mid in
            MQTTClient.sink(context)?.continuation.yield(.published(mid))
        }
        mosquitto_message_callback_set(pointer) { _, context, message in
            guard let sink = MQTTClient.sink(context), let message, let topicPointer = message.pointee.topic else {
                return
            }
            let topic: String
            switch MQTTClient.incomingTopic(topicPointer) {
            case .topic(let text):
                topic = text
            case .tooLong(let prefix):
                sink.queue(.longTopic(prefix: prefix))
                return
            }
            let length = Int(message.pointee.payloadlen)
            guard length <= sink.maximumIncomingBytes else {
                sink.queue(.oversized(topic: topic, bytes: length))
                return
            }
            var payload: [UInt8] = []
            if length > 0, let bytes = message.pointee.payload {
                payload = Array(UnsafeRawBufferPointer(start: bytes, count: length))
            }
            let qos: MQTTQoS = message.pointee.qos == 0 ? .atMostOnce : .atLeastOnce
            sink.queue(.message(MQTTMessage(topic: topic, payload: payload, qos: qos, retain: message.pointee.retain)))
        }
        // Our thread turns the loop while the actor publishes: libmosquitto must lock.
        try check("mosquitto_threaded_set", mosquitto_threaded_set(pointer, true))
        if options.username != nil || options.password != nil {
            try check(
                "mosquitto_username_pw_set", mosquitto_username_pw_set(pointer, options.username, options.password))
        }
        if options.broker.usesTLS || options.tlsCAFile != nil {
            for path in [options.tlsCAFile, options.tlsCertificateFile, options.tlsKeyFile].compactMap({ $0 }) {
                guard access(path, R_OK) == 0 else { throw .unusableFile(path, reason: "cannot be read") }
            }
            let code = mosquitto_tls_set(
                pointer, options.tlsCAFile, options.tlsCAFile == nil ? "/etc/ssl/certs" : nil,
                options.tlsCertificateFile, options.tlsKeyFile, nil)
            try check("mosquitto_tls_set", code)
        }
        if let will = options.will {
            let code = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(
                    pointer, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain)
            }
            try check("mosquitto_will_set", code)
        }
    }

    private static func sink(_ context: UnsafeMutableRawPointer?) -> CallbackSink? {
        guard let context else { return nil }
        return Unmanaged<CallbackSink>.fromOpaque(context).takeUnretainedValue()
    }

    private static func check(_ call: String, _ code: Int32) throws(MQTTError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw .library(call: call, code: code, message: String(cString: mosquitto_strerror(code)))
        }
    }

    /// Starts the first connect and the loop thread; a broker that is not up yet is retried
    /// with backoff, like a lost one.
    public func start() async throws(MQTTError) {
        guard !started else { return }
        started = true
        let stream = loopEvents
        loopTask = Task { [weak self] in
            for await event in stream { await self?.handle(event) }
        }
        let broker = options.broker
        let keepalive = Int32(options.keepalive)
        // The connect resolves the broker's name, which can take seconds.
        let loop = loop
        let connect = await blockingCall("mqtt-connect") { pointer in
            // Stopped meanwhile: no socket that nothing would turn.
            guard !loop.isStopping else { return MOSQ_ERR_NO_CONN.rawValue }
            return mosquitto_connect_async(pointer, broker.host, Int32(broker.port), keepalive)
        }.value
        // Stopped while connecting: nothing more starts.
        guard !stopped else { return }
        let code: Int32
        switch connect {
        case .success(let result): code = result
        case .failure(let error): throw .threadUnavailable(error)
        }
        if code != MOSQ_ERR_SUCCESS.rawValue {
            // Not fatal: the broker may start after us. The loop thread parks at once, and the
            // reconnects' backoff takes over.
            logger.warning(
                "MQTT broker not reachable yet",
                metadata: ["broker": "\(options.broker)", "error": "\(String(cString: mosquitto_strerror(code)))"])
        }
        let sink = handle.sink
        do throws(ThreadStartError) {
            try loop.start(handle: handle) { code in sink.takeUnretainedValue().continuation.yield(.loopStopped(code)) }
        } catch {
            throw .threadUnavailable(error)
        }
        firstConnectWatch = Task { [weak self] in await self?.watchFirstConnect() }
    }

    /// Until the first connect is acknowledged, drops an unanswered one every
    /// ``Options/connectTimeout`` and connects again at once.
    private func watchFirstConnect() async {
        let timeout = options.connectTimeout
        while !stopped && connects == 0 {
            do { try await connectClock.sleep(for: timeout) } catch { return }
            guard !stopped && connects == 0 else { return }
            // A socket to drop: the loop thread parks once it has gone, and the reconnect is at once.
            guard mosquitto_disconnect(handle.pointer) == MOSQ_ERR_SUCCESS.rawValue else { continue }
            reconnectAtOnce = true
            logger.warning(
                "MQTT connect not acknowledged; connecting again",
                metadata: ["broker": "\(options.broker)", "after": "\(timeout)"])
        }
    }

    /// The loop thread parked: reconnects after the backoff's delay (at once after the connect
    /// watch dropped a connect), then lets the thread turn again. A connect that opens nothing parks
    /// it again at once, and the next attempt waits longer.
    private func loopStopped(_ code: Int32) {
        guard !stopped else { return }
        let unwatchable = code == MOSQ_ERR_INVAL.rawValue
        if unwatchable {
            // The socket, or libmosquitto's own wake-up pair, numbers 1024 or more.
            logger.error(
                "MQTT socket cannot be watched: too many files open in this process; connecting again",
                metadata: ["broker": "\(options.broker)", "descriptor": "\(mosquitto_socket(handle.pointer))"])
        }
        let delay: Duration?
        if reconnectAtOnce {
            reconnectAtOnce = false
            delay = nil
        } else {
            reconnectAttempt += 1
            delay = backoff.delay(beforeAttempt: reconnectAttempt)
        }
        reconnectTask = Task { [weak self] in await self?.reconnect(after: delay, renewing: unwatchable) }
    }

    /// `renewing`: a full connect (`mosquitto_connect_async`), which makes libmosquitto's wake-up
    /// pair again too, instead of a reconnect on the same one.
    private func reconnect(after delay: Duration?, renewing: Bool) async {
        if let delay {
            do { try await clock.sleep(for: delay) } catch { return }
        }
        guard !stopped else { return }
        let loop = loop
        let (broker, keepalive) = (options.broker, Int32(options.keepalive))
        let call = blockingCall("mqtt-reconnect") { pointer in
            // Stopped meanwhile: no socket that nothing would turn.
            guard !loop.isStopping else { return MOSQ_ERR_NO_CONN.rawValue }
            return renewing
                ? mosquitto_connect_async(pointer, broker.host, Int32(broker.port), keepalive)
                : mosquitto_reconnect_async(pointer)
        }
        // stop() cancels this task and does not wait for a name lookup that may hang.
        guard let outcome = await Self.outcome(of: call), !stopped else { return }
        switch outcome {
        case .success(let code) where code != MOSQ_ERR_SUCCESS.rawValue && connects == 0:
            logger.debug(
                "MQTT broker still not reachable", metadata: ["error": "\(String(cString: mosquitto_strerror(code)))"])
        case .failure(let error):
            logger.warning("MQTT reconnect not tried", metadata: ["error": "\(error)"])
        default:
            break
        }
        loop.resume()
    }

    /// Dropped without ``stop()``: the loop thread ends (it holds the handle), after a DISCONNECT.
    deinit {
        mosquitto_disconnect(handle.pointer)
        loop.stop()
    }

    /// Publishes now, or queues while the broker is away.
    public func publish(_ message: MQTTMessage) {
        guard !stopped else { return }
        if connected, send(message) { return }
        outbox.append(message)
        noteOutbox()
    }

    /// Subscribes now and after every reconnect.
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce) {
        subscriptions.append((filter, qos))
        if connected { _ = mosquitto_subscribe(handle.pointer, nil, filter, qos.rawValue) }
    }

    /// Whether the broker is connected now.
    public var isConnected: Bool { connected }

    /// How many messages wait for the broker.
    public var waiting: Int { outbox.count }

    /// Received messages dropped so far because the owner read ``events`` too slowly
    /// (`hrbridge_mqtt_dropped_total{kind="incoming"}` counts these and long topics).
    public private(set) var incomingDropped = 0

    /// Publishes `farewell` (waiting up to `timeout` for the broker's acknowledgement), then
    /// disconnects cleanly (no Will) and ends the loop thread.
    public func stop(farewell: MQTTMessage? = nil, timeout: Duration = .seconds(2)) async {
        guard started, !stopped else { return }
        if let farewell, connected {
            var mid: Int32 = 0
            let code = farewell.payload.withUnsafeBytes { bytes in
                mosquitto_publish(
                    handle.pointer, &mid, farewell.topic, Int32(bytes.count), bytes.baseAddress,
                    MQTTQoS.atLeastOnce.rawValue,
                    farewell.retain)
            }
            if code == MOSQ_ERR_SUCCESS.rawValue { _ = await waitForAcknowledgement(mid, timeout: timeout) }
        }
        stopped = true
        reconnectTask?.cancel()
        firstConnectWatch?.cancel()
        // The DISCONNECT first (the loop thread writes it within its last turns: no Will), then
        // the thread's end.
        mosquitto_disconnect(handle.pointer)
        loop.stop()
        let loop = loop
        let ended = Task { await loop.waitUntilEnded() }
        if await Self.outcome(of: ended, within: options.stopTimeout, on: connectClock) == nil {
            logger.error(
                "MQTT thread did not stop; left to end on its own",
                metadata: ["broker": "\(options.broker)", "waited": "\(options.stopTimeout)"])
        }
        loopTask?.cancel()
        handle.sink.takeUnretainedValue().continuation.finish()
        eventContinuation.finish()
        failAcknowledgements()
        // Stopped means stopped: no retry or loop event runs after this returns.
        await reconnectTask?.value
        await firstConnectWatch?.value
        await loopTask?.value
    }

    /// Publishes `message` at QoS 1 and returns once the broker acknowledged it (true); false at
    /// once when the broker is away, or when the connection drops or `timeout` passes first.
    /// A sender that waits for each message before the next cannot fill libmosquitto's queue.
    public func publishAcknowledged(_ message: MQTTMessage, timeout: Duration = .seconds(30)) async -> Bool {
        guard started, !stopped, connected else { return false }
        var mid: Int32 = 0
        let code = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(
                handle.pointer, &mid, message.topic, Int32(bytes.count), bytes.baseAddress,
                MQTTQoS.atLeastOnce.rawValue, message.retain)
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else { return false }
        return await waitForAcknowledgement(mid, timeout: timeout)
    }

    /// Whether the broker acknowledged `mid` before `timeout` passed on the clock and before the
    /// connection dropped.
    private func waitForAcknowledgement(_ mid: Int32, timeout: Duration) async -> Bool {
        let clock = clock
        return await withTaskGroup(of: Void.self) { group in
            group.addTask { [weak self] in
                do { try await clock.sleep(for: timeout) } catch { return }
                await self?.acknowledge(mid, received: false)
            }
            let received = await withCheckedContinuation { continuation in acknowledged[mid] = continuation }
            group.cancelAll()
            return received
        }
    }

    private func acknowledge(_ mid: Int32, received: Bool) {
        acknowledged.removeValue(forKey: mid)?.resume(returning: received)
    }

    private func failAcknowledgements() {
        for (_, waiter) in acknowledged { waiter.resume(returning: false) }
        acknowledged.removeAll()
    }

    /// Hands a message to libmosquitto; false when it is not connected (the message then waits).
    private func send(_ message: MQTTMessage) -> Bool {
        let code = message.payload.withUnsafeBytes { bytes in
            mosquitto_publish(
                handle.pointer, nil, message.topic, Int32(bytes.count), bytes.baseAddress, message.qos.rawValue,
                message.retain)
        }
        switch code {
        case MOSQ_ERR_SUCCESS.rawValue:
            return true
        case MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_LOST.rawValue, MOSQ_ERR_ERRNO.rawValue:
            connected = false
            return false
        default:
            // A message the library refuses (too large, bad topic) would be refused again: dropped, said.
            logger.error(
                "MQTT message refused",
                metadata: [
                    "topic": "\(message.topic.prefix(120))", "error": "\(String(cString: mosquitto_strerror(code)))",
                ])
            return true
        }
    }

    private func noteOutbox() {
        queueDepth.record(outbox.count)
        let live = outbox.droppedLive
        let events = outbox.droppedEvents
        if live > reportedDroppedLive {
            droppedLive.increment(by: live - reportedDroppedLive)
            reportedDroppedLive = live
        }
        if events > reportedDroppedEvents {
            droppedEvents.increment(by: events - reportedDroppedEvents)
            logger.warning("MQTT events dropped: the broker has been away too long", metadata: ["dropped": "\(events)"])
            reportedDroppedEvents = events
        }
    }

    /// Messages refused as too large so far.
    private var refusedOversized = 0
    /// Messages dropped for their topic's length so far.
    private var droppedLongTopics = 0
    private var reportedDroppedLive = 0
    private var reportedDroppedEvents = 0

    /// Incoming messages dropped (by the owner's queue, or before it while this actor was starved).
    private func noteDroppedIncoming(_ count: Int) {
        droppedIncoming.increment(by: Int64(count))
        incomingDropped += count
        guard !warnedDroppedIncoming else { return }
        warnedDroppedIncoming = true
        logger.warning(
            "MQTT messages arrive faster than they are handled; some are dropped",
            metadata: ["queue": "\(Self.incomingLimit)", "bytes": "\(Self.incomingByteLimit)"])
    }

    private func handle(_ event: LoopEvent) {
        let sink = handle.sink.takeUnretainedValue()
        switch event {
        case .message, .oversized, .longTopic:
            sink.queuedMessages.subtract(1, ordering: .relaxed)
            let dropped = sink.droppedMessages.exchange(0, ordering: .relaxed)
            if dropped > 0 { noteDroppedIncoming(dropped) }
        default: break
        }
        switch event {
        case .connect(let code):
            // A connect that lands while stop() waits for the loop thread: no birth after
            // the farewell, no subscriptions, nothing from the outbox.
            guard !stopped else { return }
            guard code == 0 else {
                let reason = String(cString: mosquitto_connack_string(code))
                logger.warning("MQTT broker refused the connection", metadata: ["reason": "\(reason)"])
                eventContinuation.yield(.disconnected(reason))
                return
            }
            connects += 1
            reconnectAttempt = 0
            reconnectAtOnce = false
            if connects > 1 { reconnects.increment() }
            logger.notice("MQTT connected", metadata: ["broker": "\(options.broker)"])
            connected = true
            for subscription in subscriptions {
                _ = mosquitto_subscribe(handle.pointer, nil, subscription.filter, subscription.qos.rawValue)
            }
            if let birth = options.birth { _ = send(birth) }
            let waiting = outbox.drain()
            for (index, message) in waiting.enumerated() where !send(message) {
                // Lost again while flushing: the rest waits for the next connect.
                for rest in waiting[index...] { outbox.append(rest) }
                break
            }
            noteOutbox()
            eventContinuation.yield(.connected)
        case .disconnect(let code):
            let wasConnected = connected
            connected = false
            failAcknowledgements()
            guard !stopped else { return }
            let reason = code == 0 ? "disconnected" : String(cString: mosquitto_strerror(code))
            if wasConnected {
                logger.warning("MQTT connection lost; reconnecting", metadata: ["reason": "\(reason)"])
            }
            eventContinuation.yield(.disconnected(reason))
        case .message(let message):
            // The owner reads more slowly than the broker delivers: this one goes.
            guard events.pending.take(message.payload.count) else { return noteDroppedIncoming(1) }
            eventContinuation.yield(.message(message))
        case .oversized(let topic, let bytes):
            // Anyone allowed to publish can send these in a loop: the first is a warning, the
            // rest are counted (the owner hears each one).
            refusedOversized += 1
            logger.log(
                level: refusedOversized == 1 ? .warning : .debug, "MQTT message too large, refused",
                metadata: ["topic": "\(topic)", "bytes": "\(bytes)", "refusedSoFar": "\(refusedOversized)"])
            if events.pending.take(0) { eventContinuation.yield(.refused(topic: topic, bytes: bytes)) }
        case .longTopic(let prefix):
            // No topic of ours is that long, and anyone allowed to publish can send these in a
            // loop: counted as dropped, the first one a warning, the owner never hears of them.
            droppedIncoming.increment()
            droppedLongTopics += 1
            logger.log(
                level: droppedLongTopics == 1 ? .warning : .debug,
                "MQTT message dropped: its topic is longer than \(Self.maximumTopicBytes) bytes",
                metadata: ["topicStart": "\(prefix)", "droppedSoFar": "\(droppedLongTopics)"])
        case .published(let mid):
            acknowledge(mid, received: true)
        case .loopStopped(let code):
            loopStopped(code)
        }
    }
}
