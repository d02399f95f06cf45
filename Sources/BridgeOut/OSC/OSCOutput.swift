import FoundationEssentials
public import Logging
public import Sensors

/// Runs an ``OSCFeed``: takes facts from a stream, sleeps on the injected clock until the feed's
/// next due time (no polling), and sends what the feed returns through the transport.
///
/// ``run()`` ends when the facts end or its task is cancelled; it then sends the drop sequence,
/// so an avatar does not keep showing a heart rate nobody sends any more.
public actor OSCOutput {
    private var feed: OSCFeed
    private let facts: AsyncStream<OSCFact>
    private let clock: any WallClock
    private let transport: any OSCTransport
    private let logger: Logger
    private var timer: Task<Void, Never>?
    /// The due time the timer sleeps until.
    private var timerDue: Date?
    private var messagesSent = 0

    /// A runner of a feed configured with `configuration`.
    public init(
        configuration: OSCFeed.Configuration, facts: AsyncStream<OSCFact>, clock: any WallClock,
        transport: any OSCTransport, logger: Logger
    ) {
        feed = OSCFeed(configuration: configuration)
        self.facts = facts
        self.clock = clock
        self.transport = transport
        self.logger = logger
    }

    /// Messages handed to the transport so far.
    public var sentCount: Int { messagesSent }

    /// Feeds the facts until they end or the task is cancelled, then sends the drop sequence.
    public func run() async {
        logger.debug("OSC output started", metadata: ["preset": "\(feed.configuration.preset.name)"])
        for await fact in facts {
            send(feed.receive(fact))
            arm()
        }
        timer?.cancel()
        timer = nil
        timerDue = nil
        send(feed.finish(at: clock.now()))
        logger.debug("OSC output stopped", metadata: ["messages": "\(messagesSent)"])
    }

    private func send(_ messages: [OSCTimedMessage]) {
        for timed in messages { transport.send(timed.message) }
        messagesSent += messages.count
    }

    /// Sleeps until the feed's next due time, replacing a timer set for another time.
    private func arm() {
        let due = feed.nextDue
        guard due != timerDue else { return }
        timer?.cancel()
        timerDue = due
        guard let due else {
            timer = nil
            return
        }
        timer = Task { [clock] in
            do {
                try await clock.sleep(until: due)
            } catch {
                return
            }
            self.wake(armedFor: due)
        }
    }

    private func wake(armedFor due: Date) {
        // A timer replaced while it was waking has nothing to do.
        guard timerDue == due else { return }
        timer = nil
        timerDue = nil
        // The clock reached `due`; a wall clock read a moment later may still be a hair before it.
        send(feed.tick(now: max(clock.now(), due)))
        arm()
    }
}
