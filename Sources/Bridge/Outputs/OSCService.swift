public import BridgeOut
import Foundation
public import Logging
public import Sensors
public import ServiceLifecycle
import Threads
import Wire

/// `[osc]`: the configured source's heart rate, RR beats and connection as OSC parameters for VR
/// avatars (VRChat, ChilloutVR, Resonite), over UDP to the configured target.
public actor OSCService: Service {
    private let core: BridgeCore
    private let clock: any WallClock
    private let logger: Logger
    private let configuration: OSCFeed.Configuration
    private let target: OSCTarget
    /// Resolves the target and opens the socket (blocking: getaddrinfo).
    private let resolve: @Sendable () -> Result<OSCSender, OSCSenderError>
    private var source: OutputSource
    private let facts: AsyncStream<OSCFact>
    private let input: AsyncStream<OSCFact>.Continuation

    /// The longest wait between two attempts to resolve the target.
    static let longestRetry: TimeInterval = 60

    /// Checks the settings; the target is resolved when the service runs, off Swift
    /// concurrency's threads, and again with backoff while it does not resolve.
    /// - Parameter resolve: makes the sender (tests give their own); default: ``OSCSender``.
    public init(
        settings: OSCSettings, core: BridgeCore, clock: any WallClock, simulatorStrap: String?, logger: Logger,
        resolve: (@Sendable () -> Result<OSCSender, OSCSenderError>)? = nil
    ) throws {
        self.core = core
        self.clock = clock
        self.logger = logger
        configuration = try settings.feedConfiguration()
        target = settings.target
        self.resolve = resolve ?? { [target = settings.target] in OSCSender.resolving(target, logger: logger) }
        source = OutputSource(source: settings.source, simulatorStrap: simulatorStrap)
        (facts, input) = AsyncStream.makeStream(of: OSCFact.self)
    }

    public func run() async throws {
        // A name the network cannot resolve yet (DNS not up at boot, a Quest's name) is tried
        // again, never the daemon's end; nothing is heard or kept meanwhile.
        guard let sender = await cancelWhenGracefulShutdown({ await self.resolved() }) else { return }
        let events = core.sensors.adapter.events()
        let messages = core.hub.subscribe(kinds: [.session], byteBudget: 1 << 20)
        let output = OSCOutput(
            configuration: configuration, facts: facts, clock: clock, transport: sender, logger: logger)
        await follow()
        if let address = source.address, await core.sensors.status(address)?.state == .ready {
            input.yield(.connected(at: clock.now()))
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await output.run() }
            group.addTask { [weak self] in
                for await event in events { await self?.handle(event) }
            }
            group.addTask { [weak self] in
                for await delivery in messages {
                    guard case .message = delivery else { continue }
                    await self?.follow()
                }
            }
            try? await gracefulShutdown()
            // The feed's drop sequence goes out when its facts end.
            input.finish()
            messages.finish()
            await group.next()
            group.cancelAll()
        }
        logger.info(
            "OSC output stopped",
            metadata: ["datagrams": "\(sender.datagramsSent)", "sendErrors": "\(sender.sendErrors)"])
    }

    /// The sender, once the target resolves; `nil` when cancelled first.
    private func resolved() async -> OSCSender? {
        var delay: TimeInterval = 1
        var attempts = 0
        var lastError: OSCSenderError?
        while !Task.isCancelled {
            attempts += 1
            let outcome: Result<OSCSender, OSCSenderError>
            do {
                outcome = try await DetachedThread.run(named: "hrbridge.osc", resolve)
            } catch {
                outcome = .failure(.socket(reason: "\(error)"))
            }
            // Shut down while the name was being looked up: nothing to start, nothing to say.
            guard !Task.isCancelled else { return nil }
            switch outcome {
            case .success(let sender):
                if attempts > 1 {
                    logger.notice("OSC target \(target) resolved", metadata: ["attempts": "\(attempts)"])
                }
                return sender
            case .failure(let error):
                // A warning when it starts failing or fails differently; the same again is info.
                logger.log(
                    level: error == lastError ? .info : .warning, "OSC output waits for its target",
                    metadata: ["error": "\(error)", "retryInSeconds": "\(Int(delay))", "attempts": "\(attempts)"])
                lastError = error
            }
            do {
                try await clock.sleep(until: clock.now().addingTimeInterval(delay))
            } catch {
                return nil
            }
            delay = min(delay * 2, Self.longestRetry)
        }
        return nil
    }

    private func handle(_ event: SensorEvent) async {
        if source.mayHaveMoved(event) { await follow() }
        guard let address = source.address, let fact = OSCFact(event, address: address, now: clock.now()) else {
            return
        }
        input.yield(fact)
    }

    /// How many times the followed session was looked up; only the latest lookup is applied.
    private var followCalls = 0

    /// Follows the session's primary strap (`session` source): a move is a drop of the old strap
    /// and, when the new one streams, a connection.
    private func follow() async {
        followCalls += 1
        let call = followCalls
        var next = source
        let moved = await next.followSession(core.sessions)
        // A call that started later read the sessions later: its answer stands, this one is dropped.
        guard call == followCalls else { return }
        source = next
        guard moved else { return }
        logger.info("OSC follows \(source.address ?? "no strap")")
        input.yield(.disconnected(at: clock.now()))
        if let address = source.address, await core.sensors.status(address)?.state == .ready {
            input.yield(.connected(at: clock.now()))
        }
    }
}
