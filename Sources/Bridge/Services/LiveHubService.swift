import ServiceLifecycle

/// Ends the live stream on shutdown, after the sessions ended (their last messages delivered) and
/// before the listeners stop (open streams end instead of holding the listeners up).
struct LiveHubService: Service {
    let hub: LiveHub

    func run() async {
        try? await gracefulShutdown()
        hub.finish()
    }
}
