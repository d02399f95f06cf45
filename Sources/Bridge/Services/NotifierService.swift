import DBus
import Foundation
import Logging
import Sensors
import ServiceLifecycle
import Wire

/// systemd's view of the daemon: READY once sessions are recovered and every listener is up,
/// STATUS on every change (no polling), WATCHDOG at half of WATCHDOG_USEC while the D-Bus loop is
/// healthy, and STOPPING first on shutdown (it is the last service started, so the first stopped).
struct NotifierService: Service {
    let core: BridgeCore
    let notifier: SystemdNotifier
    let dbus: DBusConnection?
    /// One element per listener that is up.
    let listening: AsyncStream<Void>
    let listeners: Int
    /// Sessions a crash interrupted run again.
    let sessionsReady: ReadinessSignal
    let logger: Logger
    /// Paces the status line (real time: it is for systemd, whatever the simulator's speed).
    var clock: any WallClock = SystemWallClock()

    func run() async throws {
        // Only the kinds that can change the status line: every other message (a line per
        // sample, every measurement, a session's figures) would be queued here only to be
        // skipped. Sessions starting and ending and their store's trouble come as signals.
        let messages = core.hub.subscribe(kinds: [.sensor, .adapter])
        let sessionChanges = core.sessions.statusChanges.changes
        var up = 0
        for await _ in listening.cancelOnGracefulShutdown() {
            up += 1
            if up == listeners { break }
        }
        // Stopping before every listener came up (one could not bind): never READY, only STOPPING.
        guard up == listeners else {
            notifier.stopping()
            return
        }
        await sessionsReady.signalled()
        let line = await core.statusLine()
        notifier.ready(status: line)
        logger.notice("hrbridged ready", metadata: ["status": "\(line)"])
        let core = core
        let notifier = notifier
        let dbus = dbus
        let clock = clock
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // At most a line a second: a class's session snapshots would have it worked out
                // (every session's store health summed) 60 times a second.
                let publisher = StatusPublisher(core: core, notifier: notifier, last: line)
                let timer = DeadlineTimer(clock: clock)
                await withTaskGroup(of: Void.self) { paced in
                    paced.addTask {
                        await timer.run {
                            if await publisher.deadlineReached(at: clock.now()) { await publisher.publish() }
                        }
                    }
                    @Sendable func changed() async {
                        switch await publisher.changed(at: clock.now()) {
                        case .now: await publisher.publish()
                        case .at(let date): timer.arm(date)
                        case .nothing: break
                        }
                    }
                    paced.addTask {
                        for await _ in sessionChanges { await changed() }
                    }
                    for await _ in messages { await changed() }
                    paced.cancelAll()
                }
            }
            if let interval = notifier.watchdogInterval {
                group.addTask {
                    // With BlueZ, a ping means the D-Bus loop answered the last heartbeat: a wedged
                    // loop (or a lost bus) stops the pings, and systemd restarts us.
                    var answered = dbus?.heartbeats ?? 0
                    var first = true
                    while !Task.isCancelled {
                        if let dbus {
                            let now = dbus.heartbeats
                            if dbus.isConnected && (first || now > answered) { notifier.watchdog() }
                            answered = now
                            dbus.requestHeartbeat()
                        } else {
                            notifier.watchdog()
                        }
                        first = false
                        try? await Task.sleep(for: interval)
                    }
                }
            }
            group.addTask { try? await gracefulShutdown() }
            await group.next()
            group.cancelAll()
        }
        notifier.stopping()
        logger.notice("stopping: ending sessions")
    }
}

/// Sends the status line when it changed; one at a time, so an older line never overtakes a newer.
private actor StatusPublisher {
    let core: BridgeCore
    let notifier: SystemdNotifier
    private var last: String
    private var pacer = StatusPacer()

    init(core: BridgeCore, notifier: SystemdNotifier, last: String) {
        self.core = core
        self.notifier = notifier
        self.last = last
    }

    func changed(at now: Date) -> StatusPacer.Action { pacer.changed(at: now) }

    func deadlineReached(at now: Date) -> Bool { pacer.deadlineReached(at: now) }

    func publish() async {
        let line = await core.statusLine()
        guard line != last else { return }
        notifier.status(line)
        last = line
    }
}
