import ServiceLifecycle

/// The class as a service: on graceful shutdown it stops judging who is in range before the
/// sessions end (so nobody is signed in again while the daemon stops).
struct ClassService: Service {
    let classes: ClassManager

    func run() async {
        try? await gracefulShutdown()
        await classes.shutdown()
    }
}
