#if canImport(Glibc)
    import Glibc
#endif

/// A thread the system would not start (`pthread_create` failed: the process or its cgroup is at
/// its thread limit, or memory for the stack ran out). The caller goes on without the thread.
public struct ThreadStartError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The thread's name.
    public let name: String
    /// The `errno` value `pthread_create` returned (`EAGAIN`: a limit on threads or memory).
    public let code: Int32

    public init(name: String, code: Int32) {
        self.name = name
        self.code = code
    }

    public var description: String {
        "cannot start thread \(name): \(String(cString: strerror(code))) (error \(code))"
    }
}
