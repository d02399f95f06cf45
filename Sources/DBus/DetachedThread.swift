import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// Starts named threads for blocking loops (the D-Bus loop, notification sockets).
///
/// A plain pthread: Foundation's `Thread` would pull all of Foundation (and its ICU tables) into
/// every client of the adapter, which costs several megabytes of resident memory.
public enum DetachedThread {
    /// Runs `body` on a new detached thread called `name` (at most 15 bytes are kept).
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) {
        final class Start: Sendable {
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) {
                self.name = name
                self.body = body
            }
        }
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                let start = Unmanaged<Start>.fromOpaque(context).takeRetainedValue()
                cdbus_name_current_thread(start.name)
                start.body()
                return nil
            }, start)
        precondition(created == 0, "cannot start thread \(name) (error \(created))")
        pthread_detach(thread)
    }
}
