public import BridgeOut
import Foundation
public import Logging
public import Sensors
public import ServiceLifecycle
import Wire

/// `[osc]`: the configured source's heart rate, RR beats and connection as OSC parameters for VR
/// avatars (VRChat, ChilloutVR, Resonite), over UDP to the configured target.
public actor OSCService: Service {
    private let core: BridgeCore
    private let clock: any WallClock
    private let logger: Logger
    private let configuration: OSCFeed.Configuration
    private let sender: OSCSender
    private var source: OutputSource
    private let facts: AsyncStream<OSCFact>
    private let input: AsyncStream<OSCFact>.Continuation

    /// Resolves the target (a host that does not resolve is an error now, not a silent nothing).
    public init(
        settings: OSCSettings, core: BridgeCore, clock: any WallClock, simulatorStrap: String?, logger: Logger
    ) throws {
        self.core = core
        self.clock = clock
        self.logger = logger
        configuration = try settings.feedConfiguration()
        sender = try OSCSender(target: settings.target, logger: logger)
        source = OutputSource(source: settings.source, simulatorStrap: simulatorStrap)
        (facts, input) = AsyncStream.makeStream(of: OSCFact.self)
    }

    public func run() async throws {
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
