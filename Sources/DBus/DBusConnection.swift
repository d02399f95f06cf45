import CDBus
import FoundationEssentials
public import Logging
import Metrics
import Synchronization
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to a D-Bus bus through libdbus: method calls, signals as AsyncSequences,
/// name-owner tracking and exported objects.
///
/// libdbus is initialised for threads; the connection is driven by a loop thread of its own
/// (``MainLoop``), so calls may come from any task. Close it with ``close()``: messages and the
/// connection are released exactly once.
public final class DBusConnection: Sendable {
    /// Signals dropped because their sender does not own the name they claim to come from.
    static let forgedCounter = Counter(label: "hrbridge_forged_signals_dropped_total")

    /// Which bus to connect to.
    public enum Bus: Sendable {
        /// The system bus; honours `DBUS_SYSTEM_BUS_ADDRESS`.
        case system
        /// A bus at this address (`unix:path=…`).
        case address(String)

        /// libdbus's address for the system bus when the environment names none.
        static let defaultSystemAddress = "unix:path=/run/dbus/system_bus_socket"

        /// Where to connect: the variable's value for the system bus when it is set.
        func resolved() -> String {
            switch self {
            case .system:
                ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
                    ?? Self.defaultSystemAddress
            case .address(let address): address
            }
        }
    }

    private struct Subscription {
        let id: Int
        let rule: MatchRule
        let continuation: AsyncStream<DBusSignal>.Continuation
        let subscription: SignalSubscription
    }

    /// Called on the D-Bus loop thread with the object path and the new bytes; returns whether it
    /// consumed the change (a consumed signal goes to no stream).
    public typealias BytePropertyTap = @Sendable (_ path: String, _ bytes: [UInt8]) -> Bool

    private struct Tap {
        let id: Int
        let sender: String
        let interface: String
        let property: String
        let body: BytePropertyTap
    }

    /// The owner of a well-known name that subscriptions take signals from.
    private struct WatchedName {
        /// Its unique name, or nil while nobody owns it (or before the first answer).
        var owner: String?
        /// Bumped by every NameOwnerChanged from the bus, so an older GetNameOwner answer is not applied.
        var changes = 0
    }

    private struct State {
        /// An array, so each incoming signal takes it with one retain instead of copying a dictionary's values.
        var subscriptions: [Subscription] = []
        var taps: [Tap] = []
        var nextID = 0
        var handlers: [String: ExportedObject] = [:]
        var closed = false
        /// Well-known senders named by subscriptions, with their current owners.
        var watched: [String: WatchedName] = [:]
        /// Senders whose forged signals were logged (bounded: each is logged once).
        var loggedForgers: Set<String> = []
    }

    /// The bus driver's name: the sender of its own signals (NameOwnerChanged).
    static let busDriver = "org.freedesktop.DBus"

    /// The default method-call timeout.
    public static let defaultTimeout: Duration = .seconds(25)

    private nonisolated(unsafe) let pointer: OpaquePointer
    private let loop = MainLoop()
    private let state = Mutex(State())
    private let forged = Atomic<Int>(0)
    private let logger: Logger
    /// The connection's unique name on the bus (`:1.42`).
    public let uniqueName: String

    /// Wraps a connection registered with its bus (``connect(bus:logger:timeout:clock:)`` makes one).
    /// Without a thread for its loop the connection is closed, released here, and the error thrown.
    private init(registered opened: OpaquePointer, uniqueName name: String, logger: Logger) throws(ThreadStartError) {
        dbus_connection_set_exit_on_disconnect(opened, 0)
        pointer = opened
        uniqueName = name
        self.logger = logger
        // libdbus holds the target (released with the filter); the target holds this weakly.
        dbus_connection_add_filter(
            opened,
            { _, message, context in
                guard let message, let context else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
                Unmanaged<CallbackTarget>.fromOpaque(context).takeUnretainedValue().connection?.filter(message)
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            }, Unmanaged.passRetained(CallbackTarget(self)).toOpaque(),
            { context in
                if let context { Unmanaged<CallbackTarget>.fromOpaque(context).release() }
            })
        do {
            try loop.start(connection: opened)
        } catch {
            // Closed and not running: deinit releases the connection.
            state.withLock { $0.closed = true }
            dbus_connection_close(opened)
            throw error
        }
    }

    /// Connects to `bus` and registers with it on a thread of its own: the connect and the bus's
    /// `Hello` block, and must not hold one of Swift concurrency's few threads meanwhile. A bus that
    /// accepts and never answers (libdbus's authentication has no timeout) is an error after
    /// `timeout` on `clock`, and the connect's socket is shut down so that its thread ends too.
    public static func connect(
        bus: Bus, logger: Logger, timeout: Duration = defaultTimeout, clock: any Clock<Duration> = ContinuousClock()
    ) async throws(DBusError) -> DBusConnection {
        Self.initialiseThreads
        let address = bus.resolved()
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<PendingConnect.Outcome, Never>) in
            let pending = PendingConnect(continuation)
            pending.keep(
                timer: Task {
                    do { try await clock.sleep(for: timeout) } catch { return }
                    pending.expire(
                        DBusError(
                            name: DBusError.timeoutName,
                            message: "the bus at \(address) did not answer within \(timeout.components.seconds) s"))
                })
            do throws(ThreadStartError) {
                try DetachedThread.start(named: "dbus-connect") {
                    open(address: address, timeout: timeout, logger: logger, pending: pending)
                }
            } catch {
                _ = pending.end(with: { .failure(.threadUnavailable(error)) })
            }
        }
        return try outcome.get()
    }

    /// The blocking part of a connect, on its own thread: open, then `Hello`.
    private static func open(address: String, timeout: Duration, logger: Logger, pending: PendingConnect) {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let opened = dbus_connection_open_private(address, &error) else {
            let failure = Self.error(from: error, fallback: "cannot connect to the bus at \(address)")
            if !pending.end(with: { .failure(failure) }) { logLate(failure, address: address, logger: logger) }
            return
        }
        var socket: Int32 = -1
        let name: String?
        if dbus_connection_get_unix_fd(opened, &socket) != 0, !pending.watch(socket: socket) {
            name = nil  // the deadline passed already
        } else {
            name = register(opened, timeout: timeout, error: &error)
        }
        if let name,
            pending.end(with: {
                do throws(ThreadStartError) {
                    return .success(try DBusConnection(registered: opened, uniqueName: name, logger: logger))
                } catch {
                    return .failure(.threadUnavailable(error))
                }
            })
        {
            return
        }
        let failure =
            name == nil
            ? Self.error(from: error, fallback: "cannot register with the bus at \(address)")
            : DBusError(name: DBusError.timeoutName, message: "registered with the bus at \(address) too late")
        if !pending.end(with: { .failure(failure) }) { logLate(failure, address: address, logger: logger) }
        dbus_connection_close(opened)
        dbus_connection_unref(opened)
    }

    /// A connect that ended after its caller had its deadline's error: its thread is done.
    private static func logLate(_ outcome: DBusError, address: String, logger: Logger) {
        logger.debug("a connect past its deadline ended", metadata: ["bus": "\(address)", "outcome": "\(outcome)"])
    }

    deinit {
        if state.withLock({ $0.closed }) && !loop.isRunning {
            dbus_connection_unref(pointer)
        } else {
            // Not closed: the loop thread may still use the connection, so it closes and releases
            // it there, then stops. The thread keeps the loop alive until then.
            nonisolated(unsafe) let pointer = self.pointer
            let loop = self.loop
            loop.perform {
                dbus_connection_close(pointer)
                dbus_connection_unref(pointer)
                loop.requestStop()
            }
        }
    }

    /// `dbus_threads_init_default` before anything else, once per process.
    private static let initialiseThreads: Void = { _ = dbus_threads_init_default() }()

    /// Says `Hello` to the bus and records the unique name it gives. Not `dbus_bus_register`: that
    /// holds a lock global to libdbus across the whole blocking call, so one bus that never answers
    /// (its authentication has no timeout) would hold up every other connect in the process.
    private static func register(
        _ connection: OpaquePointer, timeout: Duration, error: inout CDBus.DBusError
    ) -> String? {
        let milliseconds = Int32(
            clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard
            let hello = DBusMessage.methodCall(
                destination: busDriver, path: "/org/freedesktop/DBus", interface: busDriver, member: "Hello"),
            let answer = dbus_connection_send_with_reply_and_block(
                connection, hello.pointer, max(milliseconds, 1), &error)
        else { return nil }
        let reply = DBusMessage(owning: answer)
        guard case .string(let name)? = reply.arguments().first, !name.isEmpty,
            dbus_bus_set_unique_name(connection, name) != 0
        else { return nil }
        return name
    }

    private static func error(from error: CDBus.DBusError, fallback: String) -> DBusError {
        guard dbus_error_is_set(withUnsafePointer(to: error) { $0 }) != 0 else {
            return DBusError(name: DBusError.failedName, message: fallback)
        }
        return DBusError(
            name: error.name.map { String(cString: $0) } ?? DBusError.failedName,
            message: error.message.map { String(cString: $0) } ?? fallback)
    }

    /// The connection's loop thread as a task executor. A task started with
    /// `Task(executorPreference: connection.executor)` runs on the thread that reads the bus, so a
    /// signal (or an event yielded from a tap) resumes it without waking another thread: the
    /// lowest-latency way to consume a stream. Its work must not block: the bus waits meanwhile.
    public var executor: any TaskExecutor { loop }

    /// Whether the connection is still open.
    public var isConnected: Bool { !state.withLock { $0.closed } && dbus_connection_get_is_connected(pointer) != 0 }

    /// Whether unix file descriptors can be passed on this connection.
    public var canPassFileDescriptors: Bool { dbus_connection_can_send_type(pointer, CDBUS_TYPE_UNIX_FD) != 0 }

    /// Signals dropped because their sender was not who they claimed to come from: a signal for a
    /// subscription naming a well-known sender whose sender is not that name's current owner, or a
    /// `NameOwnerChanged` not sent by the bus itself. (Any local process may send a signal
    /// directly to this connection; match rules do not filter those.)
    public var forgedSignals: Int { forged.load(ordering: .relaxed) }

    private let beats = Atomic<Int>(0)

    /// Heartbeats the loop thread has answered (see ``requestHeartbeat()``).
    public var heartbeats: Int { beats.load(ordering: .acquiring) }

    /// Asks the loop thread to answer a heartbeat, which it does between two rounds of bus work: a
    /// watchdog asks once a period and pings only if the previous one was answered, so a wedged
    /// loop stops the pings even while the connection still looks connected.
    public func requestHeartbeat() {
        loop.perform { [self] in beats.add(1, ordering: .releasing) }
    }

    /// Closes the connection: pending calls fail, signal streams finish, the loop thread ends.
    public func close() async {
        let alreadyClosed = state.withLock { state -> Bool in
            defer { state.closed = true }
            return state.closed
        }
        guard !alreadyClosed else { return }
        nonisolated(unsafe) let pointer = self.pointer
        loop.perform {
            dbus_connection_close(pointer)
            // Closing queues the local Disconnected message and fails pending calls: dispatch them.
            while dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS {
                dbus_connection_dispatch(pointer)
            }
        }
        await loop.stop()
        finishSubscriptions()
    }

    private func finishSubscriptions() {
        let subscriptions = state.withLock { state in
            defer { state.subscriptions = [] }
            return state.subscriptions
        }
        for subscription in subscriptions { subscription.continuation.finish() }
    }

    // MARK: Method calls

    /// Calls a method and returns the reply's arguments; an error reply throws its name and message.
    /// File descriptors in the reply are closed (and read as `-1`) unless `keepingDescriptors`,
    /// when they are the caller's to close.
    public func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Duration = DBusConnection.defaultTimeout, keepingDescriptors: Bool = false
    ) async throws(DBusError) -> [DBusValue] {
        guard !state.withLock({ $0.closed }) else { throw .disconnected() }
        guard
            let message = DBusMessage.methodCall(
                destination: destination, path: path, interface: interface, member: member)
        else { throw DBusError(name: DBusError.invalidArgsName, message: "invalid path or names for \(member)") }
        guard message.append(arguments) else {
            throw DBusError(name: DBusError.invalidArgsName, message: "cannot encode the arguments of \(member)")
        }
        let milliseconds = Int32(
            clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let result: Result<[DBusValue], DBusError> = await withCheckedContinuation { continuation in
            var pending: OpaquePointer?
            guard dbus_connection_send_with_reply(pointer, message.pointer, &pending, milliseconds) != 0,
                let pending
            else {
                continuation.resume(returning: .failure(.disconnected("cannot send \(member)")))
                return
            }
            let box = PendingReply(continuation: continuation, keepingDescriptors: keepingDescriptors)
            let context = Unmanaged.passRetained(box).toOpaque()
            dbus_pending_call_set_notify(
                pending,
                { pending, context in
                    guard let pending, let context else { return }
                    Unmanaged<PendingReply>.fromOpaque(context).takeUnretainedValue().complete(pending)
                },
                context,
                { context in
                    guard let context else { return }
                    Unmanaged<PendingReply>.fromOpaque(context).release()
                })
            // The reply may have arrived before the notify function was set.
            if dbus_pending_call_get_completed(pending) != 0 { box.complete(pending) }
            dbus_pending_call_unref(pending)
            loop.wake()
        }
        return try result.get()
    }

    /// Sends a signal from `path`, to every connection whose rules match it, or only to `destination`.
    public func emitSignal(
        path: String, interface: String, member: String, arguments: [DBusValue], destination: String? = nil
    ) throws(DBusError) {
        guard destination.map({ dbus_validate_bus_name($0, nil) != 0 }) ?? true,
            let message = DBusMessage.signal(path: path, interface: interface, member: member),
            message.append(arguments)
        else { throw DBusError(name: DBusError.invalidArgsName, message: "cannot build signal \(member)") }
        if let destination { dbus_message_set_destination(message.pointer, destination) }
        guard dbus_connection_send(pointer, message.pointer, nil) != 0 else { throw .disconnected() }
        loop.wake()
    }

    // MARK: Signals

    /// Subscribes to signals matching `rule`: the match is added on the bus before this returns,
    /// so a snapshot taken afterwards misses nothing. Ending the stream removes the match.
    public func signals(matching rule: MatchRule) async throws(DBusError) -> AsyncStream<DBusSignal> {
        try await subscribe(matching: rule).signals
    }

    /// Like ``signals(matching:)``, and counts what it delivers: a consumer that counts what it has
    /// handled can catch up after a method call (every signal sent before the reply was delivered
    /// before the call returned).
    ///
    /// A rule naming a well-known sender (`org.bluez`) only delivers signals whose sender is that
    /// name's current owner: the owner is looked up before the match is added and followed through
    /// `NameOwnerChanged` from the bus driver; anything else is counted in ``forgedSignals``.
    public func subscribe(matching rule: MatchRule) async throws(DBusError) -> SignalSubscription {
        if let sender = rule.sender, !sender.hasPrefix(":"), sender != Self.busDriver {
            try await watch(sender)
        }
        let (stream, continuation) = AsyncStream<DBusSignal>.makeStream()
        let subscription = SignalSubscription(signals: stream)
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.subscriptions.append(
                Subscription(id: state.nextID, rule: rule, continuation: continuation, subscription: subscription))
            return state.nextID
        }
        do {
            _ = try await busCall("AddMatch", [.string(rule.description)])
        } catch {
            state.withLock { $0.subscriptions.removeAll { $0.id == id } }
            continuation.finish()
            throw error
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            let removed = self.state.withLock { state in
                defer { state.subscriptions.removeAll { $0.id == id } }
                return state.subscriptions.contains { $0.id == id }
            }
            if removed, self.isConnected {
                Task { _ = try? await self.busCall("RemoveMatch", [.string(rule.description)]) }
            }
        }
        return subscription
    }

    /// Taps `PropertiesChanged` signals that change exactly one `ay` property, `property` on
    /// `interface`: `tap` runs on the D-Bus loop thread before any stream sees the signal, with the
    /// bytes read in place (no value tree, no thread hop). The signals must already be routed to
    /// this connection by a ``signals(matching:)`` subscription naming the same `sender`, a
    /// well-known name: only signals from its current owner are tapped. Returns an id for
    /// ``removeTap(_:)``.
    public func tapByteProperty(
        sender: String, interface: String, property: String, _ tap: @escaping BytePropertyTap
    ) -> Int {
        state.withLock { state in
            state.nextID += 1
            state.taps.append(
                Tap(id: state.nextID, sender: sender, interface: interface, property: property, body: tap))
            return state.nextID
        }
    }

    /// Removes a tap added by ``tapByteProperty(sender:interface:property:_:)``.
    public func removeTap(_ id: Int) {
        state.withLock { $0.taps.removeAll { $0.id == id } }
    }

    private func busCall(_ member: String, _ arguments: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: member, arguments: arguments)
    }

    /// Follows the owner of `name` for sender checks: the bus's NameOwnerChanged for it is routed
    /// here (and applied on the loop thread) before the current owner is asked for.
    private func watch(_ name: String) async throws(DBusError) {
        let isNew = state.withLock { state in
            guard state.watched[name] == nil else { return false }
            state.watched[name] = WatchedName()
            return true
        }
        guard isNew else { return }
        do {
            _ = try await busCall("AddMatch", [.string(Self.ownerChangeRule(of: name).description)])
            let changesBefore = state.withLock { $0.watched[name]?.changes ?? 0 }
            let owner = try await nameOwner(of: name)
            state.withLock { state in
                // A NameOwnerChanged applied meanwhile is newer than this answer.
                if state.watched[name]?.changes == changesBefore { state.watched[name]?.owner = owner }
            }
        } catch {
            state.withLock { _ = $0.watched.removeValue(forKey: name) }
            throw error
        }
    }

    private static func ownerChangeRule(of name: String) -> MatchRule {
        MatchRule(
            sender: busDriver, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged", arg0: name)
    }

    /// The unique name owning `name`, or `nil` when nobody owns it.
    public func nameOwner(of name: String) async throws(DBusError) -> String? {
        do {
            return try await busCall("GetNameOwner", [.string(name)]).first?.string
        } catch  where error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            return nil
        }
    }

    /// Changes of `name`'s owner from now on (a service starting, stopping or restarting).
    public func nameOwnerChanges(of name: String) async throws(DBusError) -> AsyncStream<NameOwnerChange> {
        let signals = try await signals(matching: Self.ownerChangeRule(of: name))
        return AsyncStream { continuation in
            let task = Task {
                for await signal in signals {
                    guard signal.arguments.count == 3, let changed = signal.arguments[0].string else { continue }
                    let old = signal.arguments[1].string.flatMap { $0.isEmpty ? nil : $0 }
                    let new = signal.arguments[2].string.flatMap { $0.isEmpty ? nil : $0 }
                    continuation.yield(NameOwnerChange(name: changed, oldOwner: old, newOwner: new))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Asks for a well-known name; throws when another connection owns it.
    public func requestName(_ name: String) async throws(DBusError) {
        let reply = try await busCall("RequestName", [.string(name), .uint32(UInt32(CDBUS_NAME_FLAG_DO_NOT_QUEUE))])
        guard reply.first?.integer == Int(CDBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) else {
            throw DBusError(
                name: "org.freedesktop.DBus.Error.NameTaken", message: "\(name) is owned by another connection")
        }
    }

    // MARK: Exported objects

    /// Serves method calls on `path` with `handler` (e.g. a pairing agent). File descriptors in a
    /// call are closed on arrival (and read as `-1`) unless `keepingDescriptors`, when they are the
    /// handler's to close.
    public func export(
        path: String, keepingDescriptors: Bool = false,
        handler: @escaping @Sendable (DBusMethodCall) async -> DBusMethodReply
    ) throws(DBusError) {
        try register(path: path, ExportedObject(handler: .async(handler), keepsDescriptors: keepingDescriptors))
    }

    private func register(path: String, _ object: ExportedObject) throws(DBusError) {
        // libdbus aborts the process on an invalid path: refused here instead.
        guard dbus_validate_path(path, nil) != 0 else {
            throw DBusError(name: DBusError.invalidArgsName, message: "invalid object path \(path)")
        }
        var vtable = DBusObjectPathVTable()
        vtable.message_function = { _, message, context in
            guard let message, let context,
                let connection = Unmanaged<CallbackTarget>.fromOpaque(context).takeUnretainedValue().connection
            else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            return connection.handleCall(message)
        }
        vtable.unregister_function = { _, context in
            if let context { Unmanaged<CallbackTarget>.fromOpaque(context).release() }
        }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        state.withLock { $0.handlers[path] = object }
        let target = Unmanaged.passRetained(CallbackTarget(self))
        guard dbus_connection_try_register_object_path(pointer, path, &vtable, target.toOpaque(), &error) != 0 else {
            target.release()
            _ = state.withLock { $0.handlers.removeValue(forKey: path) }
            throw Self.error(from: error, fallback: "cannot export \(path)")
        }
    }

    /// Serves method calls on `path` with `handler`, called on the loop thread as each call arrives:
    /// calls are answered in the order they were sent (a `StartNotify` then a `StopNotify` stay in
    /// that order, which separate tasks would not guarantee). The handler must not block or wait:
    /// the bus waits meanwhile. Descriptors in a call are closed on arrival.
    public func exportInOrder(
        path: String, handler: @escaping @Sendable (DBusMethodCall) -> DBusMethodReply
    ) throws(DBusError) {
        try register(path: path, ExportedObject(handler: .inline(handler), keepsDescriptors: false))
    }

    /// Stops serving `path`.
    public func unexport(path: String) {
        _ = state.withLock { $0.handlers.removeValue(forKey: path) }
        dbus_connection_unregister_object_path(pointer, path)
    }

    private func handleCall(_ pointer: OpaquePointer) -> DBusHandlerResult {
        let message = DBusMessage(retaining: pointer)
        guard message.type == CDBUS_MESSAGE_TYPE_METHOD_CALL, let path = message.path,
            let object = state.withLock({ $0.handlers[path] })
        else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let call = DBusMethodCall(
            sender: message.sender ?? "", path: path, interface: message.interface, member: message.member ?? "",
            arguments: message.arguments(keepingDescriptors: object.keepsDescriptors))
        switch object.handler {
        case .inline(let handler):
            send(handler(call), answering: message)
        case .async(let handler):
            Task { self.send(await handler(call), answering: message) }
        }
        return DBUS_HANDLER_RESULT_HANDLED
    }

    private func send(_ result: DBusMethodReply, answering message: DBusMessage) {
        let reply: DBusMessage?
        switch result {
        case .success(let values):
            let answer = message.methodReturn()
            reply =
                answer?.append(values) == true
                ? answer
                : message.errorReply(
                    name: DBusError.failedName, message: "cannot encode the reply")
        case .failure(let error):
            reply =
                message.errorReply(name: error.name, message: error.message)
                ?? message.errorReply(
                    name: DBusError.failedName, message: "invalid error name \(error.name.prefix(64))")
        }
        if let reply { dbus_connection_send(pointer, reply.pointer, nil) }
        loop.wake()
    }

    // MARK: Incoming messages

    private func filter(_ pointer: OpaquePointer) {
        guard dbus_message_get_type(pointer) == CDBUS_MESSAGE_TYPE_SIGNAL else { return }
        // Compared in place: no strings are built for a message nobody takes.
        if dbus_message_is_signal(pointer, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
            logger.info("D-Bus connection lost")
            state.withLock { $0.closed = true }
            finishSubscriptions()
            return
        }
        let sender = dbus_message_get_sender(pointer)
        if dbus_message_is_signal(pointer, "org.freedesktop.DBus", "NameOwnerChanged") != 0 {
            guard let sender, strcmp(sender, Self.busDriver) == 0 else {
                rejectForged(from: sender, DBusMessage(retaining: pointer).member ?? "")
                return
            }
            applyOwnerChange(pointer)
        }
        let (subscriptions, taps, watched) = state.withLock { ($0.subscriptions, $0.taps, $0.watched) }
        for tap in taps {
            guard
                let bytes = DBusMessage.changedByteProperty(
                    in: pointer, interface: tap.interface, property: tap.property)
            else { continue }
            // From the tapped name's owner only; anything else goes on to the checks below.
            guard let sender, let owner = watched[tap.sender]?.owner, owner.withCString({ strcmp($0, sender) }) == 0
            else { break }
            let path = dbus_message_get_path(pointer).map { String(cString: $0) } ?? ""
            if tap.body(path, bytes) { return }
        }
        guard !subscriptions.isEmpty else { return }
        let message = DBusMessage(retaining: pointer)
        var signal = DBusSignal(
            sender: message.sender ?? "", path: message.path ?? "", interface: message.interface ?? "",
            member: message.member ?? "", arguments: [])
        // The sender is checked before the body is decoded: anyone on the bus may send us a signal,
        // and a stranger's must not cost a decoded array of millions of elements.
        var refused = false
        var accepted: [Subscription] = []
        for subscription in subscriptions where subscription.rule.matchesHeader(signal) {
            if Self.sender(signal.sender, fits: subscription.rule.sender, watched: watched) {
                accepted.append(subscription)
            } else {
                refused = true
            }
        }
        // Forged: some subscription would take it but for its sender, and none takes it from that sender.
        guard !accepted.isEmpty else {
            if refused { rejectForged(from: sender, signal.member) }
            return
        }
        signal.arguments = message.arguments()
        for subscription in accepted where subscription.rule.matchesArguments(signal) {
            subscription.subscription.countDelivery()
            subscription.continuation.yield(signal)
        }
    }

    /// Whether a signal from `sender` may be delivered to a rule naming `expected`.
    private static func sender(_ sender: String, fits expected: String?, watched: [String: WatchedName]) -> Bool {
        guard let expected else { return true }
        if expected.hasPrefix(":") || expected == busDriver { return sender == expected }
        return watched[expected]?.owner == sender
    }

    /// Applies a NameOwnerChanged from the bus driver to a watched name (on the loop thread, so
    /// signals from a new owner, which the bus sends after it, are checked against it).
    private func applyOwnerChange(_ pointer: OpaquePointer) {
        let arguments = DBusMessage(retaining: pointer).arguments()
        guard arguments.count == 3, let name = arguments[0].string, let new = arguments[2].string else { return }
        state.withLock { state in
            guard state.watched[name] != nil else { return }
            state.watched[name]?.owner = new.isEmpty ? nil : new
            state.watched[name]?.changes += 1
        }
    }

    /// Counts a forged signal and logs its sender once.
    private func rejectForged(from sender: UnsafePointer<CChar>?, _ member: String) {
        forged.add(1, ordering: .relaxed)
        Self.forgedCounter.increment()
        let name = sender.map { String(cString: $0) } ?? "(no sender)"
        let first = state.withLock { state in
            guard state.loggedForgers.count < 256 else { return false }
            return state.loggedForgers.insert(name).inserted
        }
        if first {
            logger.warning(
                "dropped a signal that did not come from whom it claimed",
                metadata: ["sender": "\(name)", "member": "\(member)"])
        }
    }
}

/// An object served on a path: its handler, and whether the handler takes the descriptors it is sent.
private struct ExportedObject: Sendable {
    enum Handler: Sendable {
        /// Awaited in a task of its own.
        case async(@Sendable (DBusMethodCall) async -> DBusMethodReply)
        /// Called on the loop thread, in arrival order.
        case inline(@Sendable (DBusMethodCall) -> DBusMethodReply)
    }

    let handler: Handler
    let keepsDescriptors: Bool
}

/// One method call awaiting its reply; resumed exactly once.
private final class PendingReply: Sendable {
    private let continuation: Mutex<CheckedContinuation<Result<[DBusValue], DBusError>, Never>?>
    private let keepingDescriptors: Bool

    init(continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>, keepingDescriptors: Bool) {
        self.continuation = Mutex(continuation)
        self.keepingDescriptors = keepingDescriptors
    }

    /// libdbus frees a pending call it never completes (the connection went away): fail it.
    deinit {
        continuation.withLock { $0 }?.resume(returning: .failure(.disconnected("the connection closed before a reply")))
    }

    func complete(_ pending: OpaquePointer) {
        guard
            let continuation = continuation.withLock({
                value -> CheckedContinuation<Result<[DBusValue], DBusError>, Never>? in
                defer { value = nil }
                return value
            })
        else { return }
        guard let reply = dbus_pending_call_steal_reply(pending) else {
            continuation.resume(returning: .failure(.disconnected("no reply")))
            return
        }
        let message = DBusMessage(owning: reply)
        if message.type == CDBUS_MESSAGE_TYPE_ERROR {
            continuation.resume(
                returning: .failure(
                    DBusError(
                        name: message.errorName ?? DBusError.failedName,
                        message: message.arguments().first?.string ?? "")))
        } else {
            continuation.resume(returning: .success(message.arguments(keepingDescriptors: keepingDescriptors)))
        }
    }
}

/// A signal stream and how many signals it has been given so far.
public final class SignalSubscription: Sendable {
    /// The signals, in the order the bus delivered them.
    public let signals: AsyncStream<DBusSignal>
    private let count = Atomic<Int>(0)

    init(signals: AsyncStream<DBusSignal>) { self.signals = signals }

    /// How many signals have been put on ``signals`` so far.
    public var delivered: Int { count.load(ordering: .acquiring) }

    func countDelivery() { count.add(1, ordering: .releasing) }
}

/// What libdbus calls back (the message filter, exported objects): the connection, held weakly.
/// A message dispatched on the loop thread while the last reference to the connection goes must
/// not take a strong one to it: a reference taken during its deinit outlives it (a crash).
private final class CallbackTarget: Sendable {
    weak let connection: DBusConnection?

    init(_ connection: DBusConnection) { self.connection = connection }
}
